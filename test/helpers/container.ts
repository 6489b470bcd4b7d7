import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { CLI_MAIN, CLI_NODE_ARGS } from "./cliEntry.js";

/** Whether `unshare` can make a PID namespace here (root, or user namespaces allowed). */
export const UNSHARE = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;

/** `svc` run as a container's process (`inContainer`). */
export interface Contained {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

const started: ChildProcess[] = [];

/** What else a contained command runs with: preloads (`--import` of a test helper) and environment. */
export interface ContainerOptions {
  /** Node's arguments before the entry script, after the loader (e.g. `["--import", <preload>]`). */
  readonly nodeArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * `svc <args>` as a container's process: pid 1 of a PID namespace of its own, which dies with `unshare`
 * when that is killed (`--kill-child`), as a container's processes do. `SVC_HOME` and `HOME` are `dir`.
 */
export function inContainer(dir: string, args: readonly string[], options: ContainerOptions = {}): Contained {
  const node = [process.execPath, ...CLI_NODE_ARGS, ...(options.nodeArgs ?? []), CLI_MAIN];
  const child = spawn("unshare", ["--pid", "--fork", "--mount-proc", "--kill-child", ...node, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { child, exited, output: () => out };
}

/** Kills every container `inContainer` started that still runs (for `afterEach`). */
export function killContainers(): void {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
}
