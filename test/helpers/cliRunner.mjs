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
// that leaves a process handler behind (a gateway's start) retires the process: the next gets a new one.
import { pathToFileURL } from "node:url";

const [runModule, cliMain] = process.argv.slice(2);
const DONE = "\u0000cliRunner:done:";
const HOOKS = ["SIGINT", "SIGTERM", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "exit", "uncaughtException"];
const hooks = () => HOOKS.map((event) => process.listenerCount(event)).join(",");

const { runCli, cliProgram, releaseStopSignals } = await import(pathToFileURL(runModule).href);

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
  await runCli(argv);
  // A refused `gateway run` leaves the prologue's hold on stop signals to its process's end (it keeps nothing
  // alive): let go of here, so that only a start that went on leaves handlers of its own.
  releaseStopSignals();
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  // The handlers each command's prologue gives stdout and stderr go with it, as they would with its process.
  for (const [stream, kept] of [
    [process.stdout, outputHandlers[0]],
    [process.stderr, outputHandlers[1]],
  ])
    for (const handler of stream.listeners("error"))
      if (!kept.includes(handler)) stream.off("error", handler);
  const retire = hooks() !== before;
  process.stdout.write(`${DONE}\n`);
  process.stderr.write(`${DONE}${code}:${retire ? 1 : 0}\n`);
  if (retire) process.exit(0);
});
