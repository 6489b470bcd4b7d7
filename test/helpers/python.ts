import { execFileSync } from "node:child_process";

let interpreter: string | undefined;

/**
 * The python3 interpreter's own path, found once. The `python3` first on PATH may be a version
 * manager's shim: pyenv's runs a dozen bash scripts at each start (~0.4 s of CPU, against ~0.04 s for
 * the interpreter), and the tests start python3 a few hundred times. Callers pass `-S` (no site
 * packages, which the tests' scripts never import): 47 → 15 ms of CPU per start.
 */
export function python3(): string {
  interpreter ??= execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
    encoding: "utf8",
  }).trim();
  return interpreter;
}
