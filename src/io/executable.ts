import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

/** Why the file at `path` cannot be started as a program, or undefined when it can. */
function programFileProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return "is not a file";
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "does not exist";
    if (code === "EACCES") return `is not executable (chmod +x ${path})`;
    return `cannot be read (${code ?? "error"})`;
  }
}

/**
 * Why `file` (an argv's first entry, started without a shell) cannot be started, looked up as a process
 * start looks it up: a name with a `/` as a path from the working directory, any other name in each
 * directory of `PATH`. Undefined when it can be started.
 */
export function executableProblem(file: string, path = process.env.PATH ?? ""): string | undefined {
  if (file.includes("/")) {
    const problem = programFileProblem(resolve(file));
    return problem === undefined ? undefined : `${JSON.stringify(file)} ${problem}`;
  }
  return programOnPath(file, path) === undefined
    ? `${JSON.stringify(file)} was not found on PATH`
    : undefined;
}

/** Where a process start finds the program `file` (a name without `/`) in the directories of `path`, if anywhere. */
export function programOnPath(file: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir !== "" && programFileProblem(join(dir, file)) === undefined) return join(dir, file);
  }
  return undefined;
}
