// Runs `svc` commands one after another in this one process (see oneCliProcess.ts): the CLI's modules load
// once instead of once per command. argv: the CLI's runCli module (src/cli/runCli.ts, what the entry script
// main.ts runs: its prologue, then the CommonJS bundle for every command but `gateway run`), then the entry
// script.
//
// A command arrives as an IPC message { args, env }. For its length the process is what a process of its
// own would be: the environment is exactly `env` (set in the real environment, which os.homedir() reads),
// process.argv names the entry script, stdin is /dev/null. After it this writes DONE and a newline to stdout,
// and DONE, its exit code, `:1` if this process then retires (else `:0`) and a newline to stderr (pipes,
// written synchronously, so after all the command wrote). A command that exits the process (process.exit,
// an uncaught exception) ends it as it would end its own: the test then takes the process's exit code. One
// that leaves a process handler behind (a gateway's start) retires the process: the next gets a new one. One
// that leaves something that would keep a process of its own alive (a timer, a socket, a child, a watcher:
// process.getActiveResourcesInfo() past what this process held before it) did not exit: its code is said as
// `null`, as a killed process's, the resources are named on its stderr, and the process retires.
import { setImmediate as nextTurn } from "node:timers/promises";
import { pathToFileURL } from "node:url";

const [runModule, cliMain] = process.argv.slice(2);
const DONE = "\u0000cliRunner:done:";
const HOOKS = ["SIGINT", "SIGTERM", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "exit", "uncaughtException"];
const hooks = () => HOOKS.map((event) => process.listenerCount(event)).join(",");
/** Turns of the event loop given to what a command left to end by itself (a close, a write) before it counts. */
const SETTLE_TURNS = 200;
/** Work in flight (a file or pipe written, a name looked up): it ends by itself, so it is waited for, never counted. */
const REQUEST = /Req|WriteWrap|ShutdownWrap|ConnectWrap/;

const { runCli, cliProgram, releaseStopSignals } = await import(pathToFileURL(runModule).href);

/** `resources` less those in `baseline` (each type as many times as it is there). */
function beyond(baseline, resources) {
  const left = [...baseline];
  return resources.filter((type) => {
    const at = left.indexOf(type);
    if (at === -1) return true;
    left.splice(at, 1);
    return false;
  });
}

/** What keeps the process alive past `baseline` once the event loop had its turns: none when it settled. */
async function leftAlive(baseline) {
  let left = beyond(baseline, process.getActiveResourcesInfo());
  for (let turn = 0; left.length > 0 && turn < SETTLE_TURNS; turn++) {
    await nextTurn();
    left = beyond(baseline, process.getActiveResourcesInfo());
  }
  // Work in flight is waited for to its end, as the process would wait for it.
  while (left.length > 0 && left.every((type) => REQUEST.test(type))) {
    await nextTurn();
    left = beyond(baseline, process.getActiveResourcesInfo());
  }
  return left;
}

process.on("disconnect", () => process.exit(0));
process.on("message", async ({ args, env }) => {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, env);
  const argv = [process.execPath, cliMain, ...args];
  process.argv = argv;
  process.exitCode = undefined;
  // The program loads at the first command (its code cache then adds an exit handler), so the state taken
  // here is what a command is compared with.
  await cliProgram(argv);
  const before = hooks();
  const outputHandlers = [process.stdout.listeners("error"), process.stderr.listeners("error")];
  const baseline = process.getActiveResourcesInfo();
  await runCli(argv);
  const alive = await leftAlive(baseline);
  // A refused `gateway run` leaves the prologue's hold on stop signals to its process's end (it keeps nothing
  // alive): let go of here, so that only a start that went on leaves handlers of its own.
  releaseStopSignals();
  const code = alive.length > 0 ? "null" : String(Number(process.exitCode ?? 0));
  process.exitCode = undefined;
  // The handlers each command's prologue gives stdout and stderr go with it, as they would with its process.
  for (const [stream, kept] of [
    [process.stdout, outputHandlers[0]],
    [process.stderr, outputHandlers[1]],
  ])
    for (const handler of stream.listeners("error"))
      if (!kept.includes(handler)) stream.off("error", handler);
  const retire = alive.length > 0 || hooks() !== before;
  if (alive.length > 0)
    process.stderr.write(`cliRunner: the command did not exit: it left ${alive.join(", ")} behind\n`);
  process.stdout.write(`${DONE}\n`);
  process.stderr.write(`${DONE}${code}:${retire ? 1 : 0}\n`);
  if (retire) process.exit(0);
});
