import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { TempHome } from "../../helpers/home.js";

export interface SvcOptions {
  readonly input?: string;
  readonly env?: Record<string, string>;
  /** Sees stderr as it arrives, e.g. to wait until the command reached a step. */
  readonly onStderr?: (chunk: string) => void;
  /** Stops the command (SIGTERM) when it runs longer, e.g. a gateway that should have refused to start. */
  readonly timeoutMs?: number;
}

export const MAIN = join(import.meta.dirname, "../../../src/cli/main.ts");

export interface SvcResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `svc <args>` as a real subprocess against `home` and waits for it to exit. */
export function svc(home: TempHome, args: readonly string[], options: SvcOptions = {}): Promise<SvcResult> {
  return runNode(home, [MAIN, ...args], options);
}

export function runNode(
  home: TempHome,
  args: readonly string[],
  options: SvcOptions = {},
): Promise<SvcResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
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
  const child = spawn(process.execPath, ["--import", "tsx", ...nodeArgs, MAIN, "gateway", "run", ...args], {
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
