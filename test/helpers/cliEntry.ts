import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
const DIST_MAIN = join(ROOT, "dist", "cli", "main.js");
const SRC_MAIN = join(SRC, "cli", "main.ts");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Whether `dist/` was built after the last change in `src/`. `npm test` builds before vitest, so the suite
 * runs the built CLI (starting it through tsx costs about a second more per command); a lone
 * `npx vitest run <file>` after editing `src/` falls back to tsx and so still tests the current source.
 */
function distIsFresh(): boolean {
  if (process.env.SVC_TEST_CLI === "src") return false;
  if (!existsSync(DIST_MAIN)) return false;
  return statSync(DIST_MAIN).mtimeMs >= newestMtime(SRC);
}

const FRESH = distIsFresh();

/** The CLI's entry script: `dist/cli/main.js` when the build is current, else `src/cli/main.ts`. */
export const CLI_MAIN = FRESH ? DIST_MAIN : SRC_MAIN;

/** Node's arguments before the entry script: none for the build, the tsx loader for the source. */
export const CLI_NODE_ARGS: readonly string[] = FRESH ? [] : ["--import", "tsx"];

/** `process.execPath` arguments that run `svc` (loader, then entry); append the command's argv. */
export const SVC_ARGV: readonly string[] = [...CLI_NODE_ARGS, CLI_MAIN];

/**
 * The path of one of svc's modules (`"io/log.js"`) for a child process started with `CLI_NODE_ARGS`: the
 * module compiled on its own in `dist/` when the build is current, else its source in `src/` (tsx resolves
 * the `.js` name to the `.ts` file). A child that imports svc's modules through tsx compiles them at each
 * start: about a CPU-second more for a store, two for the gateway.
 */
export function svcModule(path: string): string {
  return join(FRESH ? join(ROOT, "dist") : SRC, path);
}

/**
 * The environment the suite's files run with: the ingress threads of gateways started in-process, and the
 * session index's thread, load their compiled module when the build is current (see each `newThread`).
 */
export const SUITE_ENV: Readonly<Record<string, string>> = FRESH
  ? {
      SVC_TEST_INGRESS_THREAD: svcModule("io/http/uwsThread.js"),
      SVC_TEST_SESSION_INDEX_THREAD: svcModule("io/sessions/indexWorker.js"),
    }
  : {};

/**
 * The path of one of svc's compiled modules in `dist/`, building it first when `src/` changed since the
 * last build. For a child whose loading must open no file of its own: tsx compiles a module at its import
 * through an esbuild process, which a child at its limit on open files cannot start.
 */
export function builtModule(path: string): string {
  if (!FRESH)
    execFileSync(process.execPath, [join(ROOT, "scripts", "build.mjs")], { cwd: ROOT, stdio: "ignore" });
  return join(ROOT, "dist", path);
}
