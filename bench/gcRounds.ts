/**
 * `node --import tsx bench/gcRounds.ts [rounds] [seconds] [tree]`: the accepted path's garbage collections,
 * round by round. Each round starts a fresh gateway (`state.backend: local`, echo agent, log at INFO) pinned
 * to CPU 0 under V8's `--trace-gc-nvp`, runs wrk (32 connections, unique delivery ids) on CPU 1, and prints
 * req/s, p99, the scavenges (count, mean and longest pause, bytes promoted per scavenge), the mark-compacts
 * (each one's pause)
 * and, with `--trace-pretenuring --trace-pretenuring-statistics` among the flags, the allocation sites V8
 * decided to tenure. Rounds of the
 * same tree differ: this shows which kind each was. `BENCH_KIND=ignored` (or `401`) sends those requests instead of
 * accepted ones. BENCH_NODE_ARGS (space-separated) adds Node flags, e.g.
 * `--heap-growing-percent=100` or `--single-threaded-gc`. `BENCH_GC_SERVER=obligations` runs the obligations
 * bound instead of the gateway, to set its collections beside the gateway's; `BENCH_STATE=memory` (read by
 * `bench/server.ts`) runs the gateway without the journal. `BENCH_GC_LONG=<ms>` prints each scavenge that
 * paused at least that long as V8 traced it. `BENCH_WARMUP=<s>` sends that long first, uncounted (default 0).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import {
  requestKind,
  runPullRequests,
  SECRET,
  startServer,
  stopServer,
  writeBenchConfig,
} from "./benchServer.js";
import { runsSettled } from "./runsSettled.js";

const rounds = Number(process.argv[2] ?? 4);
const seconds = Number(process.argv[3] ?? 8);
const tree = process.argv[4];
/** `BENCH_KIND`: the requests sent (accepted, 401 or ignored; default accepted). */
const KIND = requestKind(process.env.BENCH_KIND ?? "accepted", "gcRounds.ts (BENCH_KIND)");
const extraArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
/**
 * `BENCH_WARMUP`: seconds of the same requests before each round's measured run (default 0), their
 * collections not counted: a fresh server compiles its code under the first requests (see `bench/run.ts`).
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 0);
/** `BENCH_GC_SERVER=obligations`: the obligations bound (`bench/obligations.ts`) instead of the gateway. */
const bound = process.env.BENCH_GC_SERVER === "obligations";

/** One `--trace-gc-nvp` line's `name=value` pairs. */
function fields(line: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of line.split(" ")) {
    const at = part.indexOf("=");
    if (at > 0) out.set(part.slice(0, at), part.slice(at + 1));
  }
  return out;
}

for (let round = 1; round <= rounds; round++) {
  const home = mkdtempSync(join(tmpdir(), "svc-gc-"));
  writeBenchConfig(home, undefined);
  const { child, port } = await startServer(bound ? ["obligations", SECRET, home] : ["gateway", home], {
    ...(tree === undefined ? {} : { tree }),
    pinned: true,
    nodeArgs: ["--trace-gc-nvp", ...extraArgs],
    env: { BENCH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info" },
  });
  const scavenges: Array<{ pause: number; promoted: number; line: string }> = [];
  const markCompacts: number[] = [];
  let tenured = 0;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    if (line.includes("=> tenure")) tenured += 1;
    if (!line.includes(" gc=")) return;
    const f = fields(line);
    if (f.get("gc") === "s")
      scavenges.push({ pause: Number(f.get("pause")), promoted: Number(f.get("promoted")), line });
    else if (f.get("gc") === "mc") markCompacts.push(Number(f.get("pause")));
  });
  if (WARMUP > 0) {
    await runPullRequests(home, port, KIND, WARMUP, `gc${round}-warmup`);
    // The bound runs its events inline; the gateway's warm-up runs would load the measured run.
    if (!bound && KIND === "accepted") await runsSettled(port);
    scavenges.length = 0;
    markCompacts.length = 0;
    tenured = 0;
  }
  const result = await runPullRequests(home, port, KIND, seconds, `gc${round}`);
  await stopServer(child);
  rmSync(home, { recursive: true, force: true });
  const count = Math.max(1, scavenges.length);
  const sum = (pick: (s: { pause: number; promoted: number }) => number) =>
    scavenges.reduce((total, s) => total + pick(s), 0);
  console.log(
    `round ${round}: ${result.reqPerSec} req/s, p99 ${result.p99} ms; ${scavenges.length} scavenges, ` +
      `mean ${(sum((s) => s.pause) / count).toFixed(2)} ms, longest ${Math.max(0, ...scavenges.map((s) => s.pause)).toFixed(1)} ms, ` +
      `${(sum((s) => s.promoted) / count / 1024).toFixed(0)} KB promoted each; ${markCompacts.length} mark-compacts` +
      ` (pauses ${markCompacts.map((pause) => pause.toFixed(1)).join(", ")} ms)` +
      (extraArgs.includes("--trace-pretenuring") ? `; ${tenured} sites tenured` : ""),
  );
  // BENCH_GC_LONG=<ms>: the scavenges that paused at least that long, each as V8 traced it.
  const long = Number(process.env.BENCH_GC_LONG ?? Number.POSITIVE_INFINITY);
  for (const s of scavenges.filter((s) => s.pause >= long)) console.log(`  ${s.line}`);
}
