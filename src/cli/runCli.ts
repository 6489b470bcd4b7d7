import { fileURLToPath } from "node:url";
import { loadBundle } from "../io/compileCache.js";
import { gatewayOpenFilesProblem, openFileLimit } from "../io/openFileLimit.js";
import { quietWhenOutputCloses } from "./closedOutput.js";
import { holdStopSignals } from "./earlySignals.js";

type Main = typeof import("./run.js").main;

/** The program's entry, once loaded: a process that runs several commands (the tests' runner) loads each once. */
let esModules: Main | undefined;
let bundle: Main | undefined;

/**
 * Runs the command line `argv` (`process.argv`'s shape) as `svc` does (src/cli/main.ts): the prologue that
 * comes before the rest of the program loads, then the program, from its CommonJS bundle for every command
 * but `gateway run`.
 */
export async function runCli(argv: readonly string[] = process.argv): Promise<void> {
  // Before the rest of the program loads: a signal that comes while it loads is held, not fatal. The
  // foreground gateway gives up a closed stdout itself (src/cli/gateway.ts); every other command drops what a
  // reader that went away no longer reads.
  const gatewayRun = argv[2] === "gateway" && argv[3] === "run";
  if (gatewayRun) {
    // Before the program's modules load: under too low a limit on open files their loading fails first.
    const openFiles = gatewayOpenFilesProblem(openFileLimit());
    if (openFiles !== undefined) {
      process.stderr.write(`svc: ${openFiles}\n`);
      process.exit(1);
    }
    holdStopSignals();
  } else {
    quietWhenOutputCloses(process.stdout, "stdout");
    quietWhenOutputCloses(process.stderr, "stderr");
  }

  // `svc --version` alone is answered here, as the program's parser answers it (the version and a newline, exit
  // 0), without loading the program: its CPU time went from 0.10 s to 0.07 s (node alone: 0.05 s).
  const versionOnly = argv.length === 3 && (argv[2] === "--version" || argv[2] === "-V");
  if (versionOnly) {
    process.stdout.write(`${(await import("../io/version.js")).VERSION}\n`);
    return;
  }
  await (await cliProgram(argv))(argv);
}

/**
 * The program that runs `argv`, loaded at the first call. Built, every command but the gateway runs from the
 * program's CommonJS bundle beside this script, compiled from V8's code cache (src/io/compileCache.ts);
 * `gateway run`, whose request path runs faster as ES modules, and the source (tsx) import run.js.
 */
export async function cliProgram(argv: readonly string[]): Promise<Main> {
  const gatewayRun = argv[2] === "gateway" && argv[3] === "run";
  if (gatewayRun || import.meta.url.endsWith(".ts")) {
    esModules ??= (await import("./run.js")).main;
    return esModules;
  }
  const file = fileURLToPath(new URL("./svc.cjs", import.meta.url));
  bundle ??= (loadBundle(file, argv).exports as typeof import("./run.js")).main;
  return bundle;
}

/**
 * The prologue's hold on stop signals, let go: a gateway that starts lets go of it itself, one refused
 * leaves it to its process's end. For a process that runs another command next (the tests' one-process runner).
 */
export { releaseStopSignals } from "./earlySignals.js";
