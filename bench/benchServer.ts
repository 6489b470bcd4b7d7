import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import examples from "@octokit/webhooks-examples";
import { stringify } from "yaml";
import { runWrk, type WrkResult } from "./wrk.js";

/** What the pinned-server benches share: the route's secret, its config, the payload and the server process. */

export const SECRET = "bench-secret";

/**
 * A pull_request payload trimmed to about 1 KB; with `BENCH_BODY=full`, GitHub's whole example payload
 * (~21 KB, as GitHub sends it: nested objects, dozens of URLs) with `action` set.
 */
export function payload(action: string): string {
  const defs = examples as unknown as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
  const pr = defs
    .find((d) => d.name === "pull_request")
    ?.examples.find((e) => e.action === "opened") as Record<string, any>;
  if (process.env.BENCH_BODY === "full") return JSON.stringify({ ...pr, action });
  const body = {
    action,
    number: pr.number,
    pull_request: {
      title: pr.pull_request.title,
      body: pr.pull_request.body,
      html_url: pr.pull_request.html_url,
      state: pr.pull_request.state,
      draft: false,
      user: { login: pr.pull_request.user.login, id: pr.pull_request.user.id },
      head: { ref: pr.pull_request.head.ref, sha: pr.pull_request.head.sha },
      base: { ref: pr.pull_request.base.ref, sha: pr.pull_request.base.sha },
    },
    repository: {
      full_name: pr.repository.full_name,
      html_url: pr.repository.html_url,
      default_branch: pr.repository.default_branch,
    },
    sender: { login: pr.sender.login, id: pr.sender.id },
  };
  let text = JSON.stringify(body);
  if (text.length < 1024) text = JSON.stringify({ ...body, padding: "x".repeat(1024 - text.length - 14) });
  return text;
}

/** `X-Hub-Signature-256` for `text`: a valid one, or for the 401 rows one of the right shape that fails. */
export function signatureFor(text: string, valid = true): string {
  return valid
    ? `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`
    : `sha256=${"0".repeat(64)}`;
}

/** The request of each kind of row: 202 (`opened`), 401 (a failing signature) or filter-ignored (`closed`). */
export type RequestKind = "accepted" | "401" | "ignored";

/** `text` as a request kind; anything else stops `tool` with a usage error (exit 2). */
export function requestKind(text: string, tool: string): RequestKind {
  if (text === "accepted" || text === "401" || text === "ignored") return text;
  process.stderr.write(`${tool}: unknown kind "${text}" (accepted, 401 or ignored)\n`);
  process.exit(2);
}

/** wrk (see `runWrk`) sending route `pr` the signed pull_request of `kind` over 32 connections (`BENCH_CONNECTIONS`). */
export function runPullRequests(
  dir: string,
  port: number,
  kind: RequestKind,
  seconds: number,
  tag: string,
): Promise<WrkResult> {
  const text = payload(kind === "ignored" ? "closed" : "opened");
  const headers = {
    "x-github-event": "pull_request",
    "x-hub-signature-256": signatureFor(text, kind !== "401"),
  };
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  return runWrk(dir, port, "/webhooks/pr", text, headers, connections, seconds, tag);
}

/**
 * The gateway's config.yaml for the benches: route `pr` (no limit) with an event list, a filter on `action`
 * and a prompt template; the echo agent; `state` is the `state:` section (default `local`); `workers` the
 * gateway's ingress threads (`platforms.webhook.workers`, default `BENCH_WORKERS` or 0).
 */
export function writeBenchConfig(
  home: string,
  state: Record<string, unknown> | undefined,
  workers = Number(process.env.BENCH_WORKERS ?? 0),
): void {
  writeFileSync(
    join(home, "config.yaml"),
    stringify({
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          rate_limit: 1_000_000_000,
          ...(process.env.BENCH_NO_HISTORY === "1" ? { delivery_history: false } : {}),
          workers,
          routes: {
            pr: {
              secret: SECRET,
              events: ["pull_request"],
              filters: [{ field: "action", in: ["opened", "synchronize", "reopened"] }],
              prompt:
                "Review PR #{number} {pull_request.title} by {pull_request.user.login} in {repository.full_name}",
            },
          },
        },
      },
      agent: { provider: "echo" },
      ...(state === undefined ? {} : { state }),
    }),
  );
}

export interface ServerOptions {
  readonly env?: Record<string, string>;
  /** Pins the server to CPU 0 (`taskset`), leaving CPU 1 to wrk. */
  readonly pinned?: boolean;
  /** Node's arguments before the script (e.g. `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
  /** The checkout whose `bench/server.ts` (and `dist/`) runs; default this one. */
  readonly tree?: string;
}

/**
 * The V8 flags `svc gateway start` gives the gateway it starts (`src/cli/gatewayHeap.ts`), on the CPUs the
 * server may use: one when pinned. `BENCH_GATEWAY_V8_FLAGS=0` starts the gateway without them, as a plain
 * `node … svc gateway run` does.
 */
async function launchFlags(nodeArgs: readonly string[], pinned: boolean): Promise<string[]> {
  if (process.env.BENCH_GATEWAY_V8_FLAGS === "0") return [];
  const { gatewayV8Flags } = (await import(
    new URL("../dist/cli/gatewayHeap.js", import.meta.url).href
  )) as typeof import("../src/cli/gatewayHeap.js");
  return gatewayV8Flags(nodeArgs, process.env.NODE_OPTIONS, pinned ? 1 : availableParallelism());
}

/** Starts `bench/server.ts <args>` in its own process and resolves once it prints its port. */
export async function startServer(
  args: readonly string[],
  options: ServerOptions = {},
): Promise<{ child: ChildProcess; port: number }> {
  const tree = options.tree ?? join(import.meta.dirname, "..");
  const nodeArgs = options.nodeArgs ?? [];
  const argv = [
    process.execPath,
    ...(args[0] === "gateway" ? await launchFlags(nodeArgs, options.pinned === true) : []),
    ...nodeArgs,
    "--import",
    "tsx",
    join(tree, "bench", "server.ts"),
    ...args,
  ];
  const command = options.pinned === true ? ["taskset", "-c", "0", ...argv] : argv;
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...options.env },
    cwd: tree,
  });
  // A bench that fails (wrk missing, an error in the tool) must not leave its server running after the error
  // is printed: it held the port, and the caller's stderr, which it inherits, open for good.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line.startsWith('{"port"')) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once("exit", () => reject(new Error("server exited before listening")));
  });
  // Keep reading, as a log collector would: a server that logs to stdout (log at INFO) must never block on a
  // full pipe. Past the port line the chunks are dropped unsplit: splitting ~20k lines a second into strings
  // was this process's own work, not the server's.
  lines.close();
  child.stdout?.on("data", () => {}).resume();
  return { child, port };
}

/** A process's user + system CPU in seconds, all its threads (`/proc/<pid>/stat` utime and stime, USER_HZ 100). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
