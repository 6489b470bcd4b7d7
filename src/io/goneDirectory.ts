/**
 * A process started from a working directory removed since (a release directory a deploy replaced, a
 * checkout deleted under a shell): the processes it starts inherit that directory and cannot start there
 * (execa, and any Node program, asks for it first). Moves this process into `home`, where they then start
 * (and a relative command is taken from). `undefined` while the working directory exists: nothing moves.
 */
export function leaveGoneDirectory(
  home: string,
): { readonly gone: unknown; readonly stayed?: unknown } | undefined {
  try {
    process.cwd();
    return undefined;
  } catch (gone) {
    try {
      process.chdir(home);
      return { gone };
    } catch (stayed) {
      return { gone, stayed };
    }
  }
}
