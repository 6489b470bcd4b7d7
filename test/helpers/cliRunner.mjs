// Runs `svc` commands one after another in this one process (see oneCliProcess.ts): the CLI's modules load
// once instead of once per command. argv: the CLI's run module, then its entry script.
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

const { main } = await import(pathToFileURL(runModule).href);

process.on("disconnect", () => process.exit(0));
process.on("message", async ({ args, env }) => {
  const before = hooks();
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, env);
  process.argv = [process.execPath, cliMain, ...args];
  process.exitCode = undefined;
  await main([process.execPath, cliMain, ...args]);
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  const retire = hooks() !== before;
  process.stdout.write(`${DONE}\n`);
  process.stderr.write(`${DONE}${code}:${retire ? 1 : 0}\n`);
  if (retire) process.exit(0);
});
