import { execFileSync } from "node:child_process";

let interpreter: string | undefined;

/**
 * The python3 interpreter's own path, found once. The `python3` first on PATH may be a version
 * manager's shim: pyenv's runs a dozen bash scripts at each start (~0.4 s of CPU, against ~0.04 s for
 * the interpreter), and the tests start python3 a few hundred times. Callers pass `-S` (no site
 * packages, which the tests' scripts never import): 47 → 15 ms of CPU per start.
 *
 * The suite finds it once for all its workers (vitest.config.ts passes it as `SVC_TEST_PYTHON3`): each
 * worker asking the shim itself cost ~0.6 s of CPU, and the worker stood still meanwhile (3–10 s on the
 * loaded 2-core machine, the shim's bash scripts competing with the other workers).
 */
export function python3(): string {
  interpreter ??=
    process.env.SVC_TEST_PYTHON3 ||
    execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
  return interpreter;
}
