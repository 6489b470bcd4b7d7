/**
 * `node --import tsx bench/ingressThread.ts [rounds] [seconds]`: the gateway (`local` state, echo, INFO) with
 * `platforms.webhook.workers` 0, 1 and 2, interleaved; wrk (1 thread, 32 connections) on CPU 1. Rows: 0 pinned
 * to CPU 0 (as `npm run bench`), then 0, 1 and 2 free to use both cores. For each: req/s, p99, and the CPU per
 * request of the main thread alone and of the whole process (`/proc/<pid>/task/*`).
 * What the main thread spends per request bounds what more ingress threads could give on more cores.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runPullRequests, startServer, stopServer, writeBenchConfig } from "./benchServer.js";

const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const TICKS_PER_S = 100;

const ticksOf = (path: string) => {
  const fields = readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]);
};
const cpu = (pid: number) => ({
  main: ticksOf(`/proc/${pid}/task/${pid}/stat`),
  all: ticksOf(`/proc/${pid}/stat`),
  threads: readdirSync(`/proc/${pid}/task`).length,
});

const modes = [
  { name: "workers: 0, pinned to CPU 0", pinned: true, workers: 0 },
  { name: "workers: 0, both cores", pinned: false, workers: 0 },
  { name: "workers: 1, both cores", pinned: false, workers: 1 },
  { name: "workers: 2, both cores", pinned: false, workers: 2 },
] as const;
const results = new Map<string, { rps: number; p99: number; main: number; all: number }[]>();

for (const kind of ["accepted", "ignored"] as const) {
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      const home = mkdtempSync(join(tmpdir(), "svc-ingress-"));
      writeBenchConfig(home, undefined, mode.workers);
      const { child, port } = await startServer(["gateway", home], {
        pinned: mode.pinned,
        env: { BENCH_LOG_LEVEL: "info" },
      });
      const pid = child.pid as number;
      const before = cpu(pid);
      const r = await runPullRequests(home, port, kind, seconds, `${kind}${round}`);
      const after = cpu(pid);
      await stopServer(child);
      rmSync(home, { recursive: true, force: true });
      const requests = r.reqPerSec * seconds;
      const us = (ticks: number) => ((ticks / TICKS_PER_S) * 1e6) / requests;
      const row = {
        rps: r.reqPerSec,
        p99: r.p99,
        main: us(after.main - before.main),
        all: us(after.all - before.all),
      };
      const key = `${kind}: ${mode.name}`;
      results.set(key, [...(results.get(key) ?? []), row]);
      console.log(
        `${key} round ${round + 1}: ${Math.round(row.rps)} req/s, p99 ${row.p99} ms, main thread ${row.main.toFixed(1)} µs/request, process ${row.all.toFixed(1)} µs/request (${after.threads} threads), load ${loadavg()[0]?.toFixed(1)}`,
      );
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  "\n| path and server | req/s (median) | p99 ms (median) | main thread µs/request | process µs/request |",
);
console.log("|---|---|---|---|---|");
for (const [key, rows] of results)
  console.log(
    `| ${key} | ${Math.round(median(rows.map((r) => r.rps)))} | ${median(rows.map((r) => r.p99)).toFixed(1)} | ${median(rows.map((r) => r.main)).toFixed(1)} | ${median(rows.map((r) => r.all)).toFixed(1)} |`,
  );
