/**
 * What to do about a file this process may not read (`EACCES`, `EPERM`: another user's file, such as one a
 * `sudo svc …` command created, or one whose mode leaves its owner out), or undefined for any other error.
 */
export function permissionFix(file: string, err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM") return undefined;
  return `make it readable by the user svc runs as (uid ${process.getuid?.() ?? "?"}): give it to that user (chown) and chmod 600 ${file}`;
}
