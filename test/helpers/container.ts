import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CLI_MAIN, CLI_NODE_ARGS } from "./cliEntry.js";

/** Whether `unshare` can make a PID namespace here (root, or user namespaces allowed). */
export const UNSHARE = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;

/** `svc` run as a container's process (`inContainer`). */
export interface Contained {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
  /**
   * `docker kill`: SIGKILL to `unshare`, then until every process of the namespace is gone. `exited` alone
   * comes before that: `--kill-child` kills the namespace's pid 1 as `unshare` dies, and the kernel takes the
   * namespace's other processes after it, while they may still write in SVC_HOME.
   */
  kill(): Promise<void>;
}

const started: Contained[] = [];

/** The pids of `pid`'s children (`/proc/<pid>/task/<tid>/children`), none once it has gone. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether `pid` still runs: neither gone nor a zombie (which writes nothing more). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The host's pid of the container's first process (the one `unshare` forked): ask once it has said something. */
export function hostPid(contained: Contained): number {
  const pid = contained.child.pid === undefined ? undefined : childrenOf(contained.child.pid)[0];
  if (pid === undefined) throw new Error("the container has no process of its own (not yet forked, or gone)");
  return pid;
}

async function killed(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  // The namespace's pid 1, read before the kill: it exits only once the namespace's other processes have.
  const inside = child.pid === undefined ? [] : childrenOf(child.pid);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await exited;
  const deadline = Date.now() + 30_000;
  while (inside.some(running)) {
    if (Date.now() > deadline)
      throw new Error(`the contained processes ${inside.join(", ")} outlived a SIGKILL by 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const contained: Contained = { child, exited, output: () => out, kill: () => killed(child, exited) };
  started.push(contained);
  return contained;
}

/** Kills every container `inContainer` started, until its processes are gone (for `afterEach`). */
export async function killContainers(): Promise<void> {
  await Promise.all(started.splice(0).map((contained) => contained.kill()));
}
