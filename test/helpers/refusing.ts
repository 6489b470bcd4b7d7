import { accessSync } from "node:fs";

/**
 * An access check that refuses search permission on `closed` (EACCES), as to another user in a directory of root's
 * with mode 0700, and asks the file system of any other path: a test that may run as root cannot be refused for real.
 */
export const refusing =
  (closed: string) =>
  (at: string, mode: number): void => {
    if (at === closed)
      throw Object.assign(new Error(`EACCES: permission denied, access '${at}'`), { code: "EACCES" });
    accessSync(at, mode);
  };
