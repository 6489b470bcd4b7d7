import { statSync } from "node:fs";

/** The directory processes start in when the working directory is gone (`leaveGoneDirectory`). */
let fallback: string | undefined;

/**
 * A process started from a working directory removed since (a release directory a deploy replaced, a
 * checkout deleted under a shell): the processes it starts inherit that directory and cannot start there
 * (execa, and any Node program, asks for it first). Moves this process into `home`, where they then start
 * (and a relative command is taken from), and keeps `home` for a directory removed later
 * (`followWorkingDirectory`). `undefined` while the working directory exists: nothing moves.
 */
export function leaveGoneDirectory(
  home: string,
): { readonly gone: unknown; readonly stayed?: unknown } | undefined {
  fallback = home;
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

/**
 * Called before a process starts: a working directory removed while this process ran (a deploy that
 * replaced the release directory after the gateway started) is left for the directory now at its path (a
 * new release there, as a new shell would see it), else for the `home` `leaveGoneDirectory` kept. A
 * process started in a removed directory fails with ENOENT, which reads as a program or loader not found.
 */
export function followWorkingDirectory(): void {
  let path: string;
  try {
    path = process.cwd();
    const here = statSync(".");
    const there = statSync(path, { throwIfNoEntry: false });
    if (there !== undefined && there.ino === here.ino && there.dev === here.dev) return;
    if (there?.isDirectory() === true) {
      process.chdir(path);
      return;
    }
  } catch {
    // No path for it at all (gone before this process started and never left): the home, if any.
  }
  if (fallback === undefined) return;
  try {
    process.chdir(fallback);
  } catch {
    // The home is gone too: the start fails as it would have.
  }
}
