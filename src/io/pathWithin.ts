import { sep } from "node:path";

/** Whether the resolved path `path` is the directory `dir` or below it (`/srv/a` is not below `/srv/ab`). */
export function pathWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
