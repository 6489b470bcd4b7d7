/**
 * `node --import tsx bench/cpuAb.ts <treeA> <treeB> [rounds] [seconds] [accepted|401|ignored]`: interleaved A/B of
 * the server CPU per request. Each tree is a directory holding `bench/server.ts` and a compiled `dist/` (a
 * copy of an older build, with `node_modules` linked in, is enough). For each round, A then B: the gateway
 * (`state.backend: local`, echo agent, log at INFO) pinned to CPU 0, wrk (1 thread, 32 connections) on CPU 1;
 * the server's user + system CPU time (`/proc/<pid>/stat`, all its threads: the libuv pool included) over the
 * wrk run divided by the requests answered. On a shared machine CPU per request moves far less than req/s.
 * `BENCH_NODE_ARGS_A` / `BENCH_NODE_ARGS_B` (space-separated) give each tree's server extra Node flags, e.g.
 * the same tree twice with `BENCH_NODE_ARGS_B=--max-semi-space-size=32` to measure a V8 flag.
 * `BENCH_AB_BUNDLE=1` runs `svc gateway run` from each tree's bundle (`dist/cli/main.js`, as users start it)
 * instead of `bench/server.ts` on the per-file build, which resolves packages such as rxjs from node_modules,
 * not as the bundle holds them. A runs before B in each round: run it both ways round, as the machine drifts.
 * `BENCH_STATE=redis` runs each gateway on `state.backend: redis` against a private `redis-server` of its own
 * (started per measurement, as `test/helpers/redis.ts` does), waits after wrk until every accepted event has run
 * (`bench/runsSettled.ts`), and counts the CPU from wrk's start to the last run, the server's and Redis's, per
 * accepted request; it prints too the events accepted and run end to end per second (wrk's time plus the
 * backlog's drain), and per accepted event the commands Redis ran (those its scripts call included) and the
 * reads of its sockets (`INFO stats`: about one per write of a client's that Redis found on its own).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startTestRedis, type TestRedis } from "../test/helpers/redis.js";
import {
  cpuSeconds,
  requestKind,
  runPullRequests,
  startServer,
  stopServer,
  writeBenchConfig,
} from "./benchServer.js";
import { runsSettled } from "./runsSettled.js";

const [treeA, treeB, roundsArg, secondsArg, kindArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined) {
  process.stderr.write("usage: cpuAb.ts <treeA> <treeB> [rounds] [seconds] [accepted|401|ignored]\n");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const seconds = Number(secondsArg ?? 6);
const kind = requestKind(kindArg ?? "accepted", "cpuAb.ts");

const onRedis = process.env.BENCH_STATE === "redis";

/** The pid of the private redis-server listening on `port` (it names its address in its title). */
function redisPid(port: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmd.startsWith("redis-server") && cmd.includes(`:${port}`)) return Number(entry);
    } catch {}
  }
  throw new Error(`no redis-server on port ${port}`);
}

/** The write system calls of `pid` so far, all its threads (`syscw` of /proc/<pid>/io: write, writev, pwrite). */
function writeCalls(pid: number): number {
  return Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
}

const nodeArgsOf = (name: "A" | "B") =>
  (process.env[`BENCH_NODE_ARGS_${name}`] ?? "").split(" ").filter(Boolean);

/** `svc gateway run` from `tree`'s bundle in `home`, pinned to CPU 0, once it says where it listens. */
async function startBundledGateway(
  tree: string,
  home: string,
  nodeArgs: readonly string[],
): Promise<{ child: ChildProcess; port: number }> {
  const argv = [
    process.execPath,
    ...nodeArgs,
    join(tree, "dist/cli/main.js"),
    "gateway",
    "run",
    "--port",
    "0",
  ];
  const child = spawn("taskset", ["-c", "0", ...argv], {
    env: { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let said = "";
    // Read to the end either way: a gateway logging at INFO must never block on a full pipe.
    const read = (chunk: Buffer) => {
      said += chunk;
      const listening = /Listening on 127\.0\.0\.1:(\d+)/.exec(said);
      if (listening !== null) resolve(Number(listening[1]));
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", () => reject(new Error(`the gateway exited before listening: ${said}`)));
  });
  return { child, port };
}

async function measure(
  tree: string,
  tag: string,
  nodeArgs: readonly string[],
): Promise<{
  rps: number;
  usPerReq: number;
  p99: number;
  redisUs: number;
  endToEnd: number;
  redisStats: string;
}> {
  const home = mkdtempSync(join(tmpdir(), "svc-ab-"));
  const redis: TestRedis | undefined = onRedis ? await startTestRedis() : undefined;
  writeBenchConfig(home, redis === undefined ? undefined : { backend: "redis", redis_url: redis.url });
  const { child, port } =
    process.env.BENCH_AB_BUNDLE === "1"
      ? await startBundledGateway(tree, home, nodeArgs)
      : await startServer(["gateway", home], {
          tree,
          pinned: true,
          nodeArgs,
          env: { BENCH_LOG_LEVEL: "info" },
        });
  const pid = child.pid as number; // taskset execs node: same pid
  const rpid = redis === undefined ? undefined : redisPid(redis.port);
  const stats = redis === undefined ? undefined : new Redis(redis.url);
  await stats?.config("RESETSTAT");
  const before = cpuSeconds(pid);
  const writesBefore = writeCalls(pid);
  const redisBefore = rpid === undefined ? 0 : cpuSeconds(rpid);
  const r = await runPullRequests(home, port, kind, seconds, tag);
  const settled = redis === undefined ? undefined : await runsSettled(port);
  const used = cpuSeconds(pid) - before;
  const writes = writeCalls(pid) - writesBefore;
  const redisUsed = rpid === undefined ? 0 : cpuSeconds(rpid) - redisBefore;
  const info = (await stats?.info("stats")) ?? "";
  stats?.disconnect();
  const stat = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? 0);
  await stopServer(child);
  await redis?.cleanup();
  rmSync(home, { recursive: true, force: true });
  // Per accepted event where events were accepted (the backlog ran after wrk), else per request answered.
  const requests = settled !== undefined && settled.accepted > 0 ? settled.accepted : r.reqPerSec * seconds;
  if (settled !== undefined && settled.ran < settled.accepted)
    console.log(`${tag}: ${settled.accepted - settled.ran} accepted events never ran (LOST)`);
  return {
    rps: r.reqPerSec,
    usPerReq: (used / requests) * 1e6,
    p99: r.p99,
    redisUs: (redisUsed / requests) * 1e6,
    endToEnd: settled === undefined ? 0 : settled.accepted / (seconds + settled.waitedMs / 1000),
    redisStats:
      settled === undefined
        ? ""
        : `, per ${kind === "accepted" ? "event" : "request"}: ${(writes / requests).toFixed(2)} write calls of the gateway, Redis ${(stat("total_commands_processed") / requests).toFixed(1)} commands and ${(stat("total_reads_processed") / requests).toFixed(2)} socket reads`,
  };
}

const results: Record<"A" | "B", number[]> = { A: [], B: [] };
for (let i = 0; i < rounds; i++) {
  for (const [name, tree] of [
    ["A", treeA],
    ["B", treeB],
  ] as const) {
    const m = await measure(tree, `${name}${i}`, nodeArgsOf(name));
    results[name].push(m.usPerReq);
    console.log(
      `${name} round ${i + 1}: ${m.rps} req/s, ${m.usPerReq.toFixed(1)} µs CPU/request, p99 ${m.p99} ms${onRedis ? `, Redis ${m.redisUs.toFixed(1)} µs/request, ${Math.round(m.endToEnd)} events/s end to end${m.redisStats}` : ""}, load ${loadavg()[0]?.toFixed(1)}`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `median µs CPU/request (${kind}): A ${median(results.A).toFixed(1)}  B ${median(results.B).toFixed(1)}  (B/A ${(median(results.B) / median(results.A)).toFixed(3)})`,
);
