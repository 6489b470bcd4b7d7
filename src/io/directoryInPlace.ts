/**
 * A file's write refused because a directory holds its name (EISDIR: a `mkdir` of the wrong path, a restore
 * that made one): the path and what to do, in the words the CLI uses; undefined for any other error.
 */
export function directoryInPlace(err: unknown): string | undefined {
  const { code, path } = (err ?? {}) as NodeJS.ErrnoException;
  return code === "EISDIR" && path !== undefined ? `${path}: it is a directory: move it away` : undefined;
}
