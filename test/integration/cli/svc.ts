import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { stringify } from "yaml";
import { CLI_MAIN, CLI_NODE_ARGS } from "../../helpers/cliEntry.js";
import type { TempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { inProcessBusy, runInProcess } from "../../helpers/inProcessCli.js";
import { OneCliProcess } from "../../helpers/oneCliProcess.js";

export interface SvcOptions {
  readonly input?: string;
  readonly env?: Record<string, string>;
  /** Sees stderr as it arrives, e.g. to wait until the command reached a step. */
  readonly onStderr?: (chunk: string) => void;
  /** Sees stdout as it arrives. */
  readonly onStdout?: (chunk: string) => void;
  /** Stops the command (SIGTERM) when it runs longer, e.g. a gateway that should have refused to start. */
  readonly timeoutMs?: number;
  /** The working directory of the command, run as a process of its own (default: the test worker's). */
  readonly cwd?: string;
}

/** The CLI entry the tests run (the build when current, see cliEntry.ts); spawn it with `CLI_NODE_ARGS` first. */
export const MAIN = CLI_MAIN;
export { CLI_NODE_ARGS };

export interface SvcResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `mcp install` asks its questions on stdin: in-process it reads the test's input there, as from a pipe. */
function answersOnStdin(args: readonly string[]): boolean {
  return args[0] === "mcp" && args[1] === "install";
}

/**
 * Commands run inside the test worker (see inProcessCli.ts): they neither start nor re-run processes of
 * svc, and read stdin only for answers (`mcp install`). `mcp call` holds SIGINT/SIGTERM/SIGHUP only while
 * it waits on its server and gives them back; a test of what a signal does to it starts its own process.
 * Everything else (`gateway run/start`, an interactive `gateway setup`, `mcp login`, `mcp install
 * --register-handler`, which writes this process's own command line into the desktop entry, `cron run`)
 * runs as a real process, as do the commands of a test that runs several at once.
 */
function runsInProcess(args: readonly string[], options: SvcOptions): boolean {
  if (
    (options.input !== undefined && !answersOnStdin(args)) ||
    options.onStderr !== undefined ||
    options.onStdout !== undefined ||
    options.timeoutMs !== undefined ||
    options.cwd !== undefined
  ) {
    return false;
  }
  const [group, command] = args;
  if (answersOnStdin(args)) return !args.includes("--register-handler");
  // `help` only prints (or refuses a command it does not know).
  if (group === "webhook" || group === "config" || group === "help") return true;
  if (group === "cron") return command !== "run";
  // `reload` signals the running gateway and reads its report; `ls`, `rm` and `uninstall` are aliases.
  if (group === "mcp")
    return [
      "list",
      "ls",
      "tools",
      "test",
      "call",
      "add",
      "remove",
      "rm",
      "uninstall",
      "import",
      "reload",
      "help",
    ].includes(command ?? "");
  if (group !== "gateway") return false;
  // `setup` asks its questions on stdin unless told not to.
  return (
    command === "status" || command === "stop" || (command === "setup" && args.includes("--non-interactive"))
  );
}

/** The process the file's spawned commands run in, once svcOneProcess() made one. */
let oneProcess: OneCliProcess | undefined;

/**
 * Makes svc() run the file's commands that would each start a process of their own (`cron run`, a refused
 * `gateway run`) one after another in one process instead (see oneCliProcess.ts): the CLI loads once. One
 * past its `timeoutMs` is killed with that process (SIGKILL, where its own got SIGTERM: either way it did
 * not end by itself, which fails a test that gave it a time). Those given input, a working directory or a
 * watcher of their output, and those that run at the same time, still start their own. Call at a file's top
 * level.
 */
export function svcOneProcess(): void {
  beforeAll(() => {
    oneProcess = new OneCliProcess([], true);
  });
  afterAll(async () => {
    await oneProcess?.stop();
    oneProcess = undefined;
  });
}

/** Runs `svc <args>` against `home` (its own process, or in-process for the quick commands) to its end. */
export function svc(home: TempHome, args: readonly string[], options: SvcOptions = {}): Promise<SvcResult> {
  if (process.env.SVC_TEST_CLI !== "spawn" && runsInProcess(args, options) && !inProcessBusy()) {
    // A spawned command reads `input` from its stdin pipe, then its end (none given: the end at once).
    const input = answersOnStdin(args) ? (options.input ?? "") : undefined;
    return runInProcess(args, svcEnv(home, options), undefined, input);
  }
  if (oneProcess?.free && Object.keys(options).every((key) => key === "env" || key === "timeoutMs"))
    return oneProcess.run(args, svcEnv(home, options), options.timeoutMs);
  return svcProcess(home, args, options);
}

/**
 * Runs the commands one after another against `home` (so each can run in-process, where several at once
 * would spawn all but one) and returns their results in order; for commands that need not run at once.
 */
export async function svcEach<const T extends readonly (readonly string[])[]>(
  home: TempHome,
  argsList: T,
  options: SvcOptions = {},
): Promise<{ -readonly [K in keyof T]: SvcResult }> {
  const results: SvcResult[] = [];
  for (const args of argsList) results.push(await svc(home, args, options));
  return results as { -readonly [K in keyof T]: SvcResult };
}

/** Runs `svc <args>` as a real subprocess against `home` and waits for it to exit. */
export function svcProcess(
  home: TempHome,
  args: readonly string[],
  options: SvcOptions = {},
): Promise<SvcResult> {
  return runNode(home, [...CLI_NODE_ARGS, MAIN, ...args], options);
}

/** The whole environment of a command run against `home`. */
export function svcEnv(home: TempHome, options: SvcOptions): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...options.env };
}

/** Runs node with `args` (loader flags, script, its arguments) against `home` and waits for it to exit. */
export function runNode(
  home: TempHome,
  args: readonly string[],
  options: SvcOptions = {},
): Promise<SvcResult> {
  return new Promise((resolve, reject) => {
    // Another working directory has no node_modules of its own: the tsx loader is given by its path.
    const loader = (arg: string, i: number) =>
      arg === "tsx" && args[i - 1] === "--import" && options.cwd !== undefined
        ? import.meta.resolve("tsx")
        : arg;
    const child = spawn(process.execPath, args.map(loader), {
      env: svcEnv(home, options),
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      options.onStdout?.(String(d));
    });
    child.stderr.on("data", (d) => {
      stderr += d;
      options.onStderr?.(String(d));
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** config.yaml for CLI tests: loopback, port 0 (a free port), the given routes and agent. */
export function cliConfig(
  routes: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...rest,
    platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0, rate_limit: 1000, routes } },
  };
}

/** config.yaml of a webhook platform alone (cliConfig's, one route `a`, secret "s") on `port`. */
export function webhookOnPort(port: number): string {
  const config = cliConfig({ a: { secret: "s" } }) as { platforms: { webhook: object } };
  return stringify({ platforms: { webhook: { ...config.platforms.webhook, port } } });
}

export interface Foreground {
  readonly child: ChildProcess;
  /** The port of its `Listening on 127.0.0.1:<port>` line. */
  readonly port: number;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<number | null>;
}

/** Starts `svc gateway run <args>` and resolves once it logged its listening line; kill it in afterEach. */
export function runForeground(
  home: TempHome,
  args: readonly string[] = ["--port", "0"],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<Foreground> {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...nodeArgs, MAIN, "gateway", "run", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      out += d;
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (match) resolve({ child, port: Number(match[1]), stdout: () => out, stderr: () => err, exited });
    });
    child.stderr?.on("data", (d) => (err += d));
    void exited.then((code) => reject(new Error(`gateway exited ${code}: ${out}\n${err}`)));
  });
}

/** SIGKILLs a gateway a test left running and waits for it to exit (afterEach). */
export async function killIfRunning(
  gateway: { readonly child: ChildProcess; readonly exited: Promise<unknown> } | undefined,
): Promise<void> {
  if (gateway === undefined || gateway.child.exitCode !== null) return;
  gateway.child.kill("SIGKILL");
  await gateway.exited;
}

/** Runs an argv from the repository root with `input` piped in (a command as the desktop launches it); its exit code. */
export function runAnswering(
  argv: string[],
  env: Record<string, string>,
  input: string,
): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      env,
      cwd: join(import.meta.dirname, "../../.."),
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", reject);
    child.on("close", resolve);
    child.stdin.end(input);
  });
}

/** Polls `check` every 50 ms until it holds; fails naming `what` after 15 s. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether a TCP connection to `port` on loopback is refused (nothing listens there). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

/**
 * A foreground gateway of `home` (route `r`, INSECURE_NO_AUTH) that is stopping: one accepted run outlasts
 * the test, so the SIGTERM's drain keeps the process (and its `gateway.json`, marked stopping) alive while
 * the test asks the CLI. `deliveryId`: that run's request. Kill `gateway` in afterEach.
 */
export async function stoppingWithRun(home: TempHome): Promise<{ gateway: Foreground; deliveryId: string }> {
  home.write(
    "config.yaml",
    stringify({
      ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
      agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
      gateway: { drain_timeout_seconds: 30 },
    }),
  );
  const gateway = await runForeground(home, ["--port", "0"]);
  const accepted = await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, { n: 1 });
  if (accepted.status !== 202) throw new Error(`the run was answered ${accepted.status}, not 202`);
  gateway.child.kill("SIGTERM");
  const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
  await waitFor(() => log().includes("[gateway] SIGTERM received, stopping"), "the stop");
  await waitFor(
    () =>
      (JSON.parse(readFileSync(join(home.dir, "gateway.json"), "utf8")) as { stopping_since?: string })
        .stopping_since !== undefined,
    "gateway.json saying it is stopping",
  );
  // gateway.json says stopping just before the listener closes; until it has, a request is answered 503.
  await waitFor(() => refused(gateway.port), "the stopping gateway's listener to close");
  return { gateway, deliveryId: accepted.body.delivery_id as string };
}

/**
 * Waits until the gateway's MCP status file (`mcp-cache/status.json`) names `count` servers, each with its
 * connect's failure, and gives each server's `lastError` by name.
 */
export async function connectFailures(
  home: TempHome,
  count: number,
): Promise<Record<string, string | undefined>> {
  const statusFile = join(home.dir, "mcp-cache", "status.json");
  type Servers = readonly { name: string; lastError?: string }[];
  const servers = (): Servers | undefined => {
    try {
      return (JSON.parse(readFileSync(statusFile, "utf8")) as { servers: Servers }).servers;
    } catch {
      return undefined;
    }
  };
  await waitFor(
    () => servers()?.length === count && servers()?.every((s) => s.lastError !== undefined) === true,
    `the failures of ${count} MCP servers' connects in ${statusFile}`,
  );
  return Object.fromEntries((servers() as Servers).map((s) => [s.name, s.lastError]));
}
