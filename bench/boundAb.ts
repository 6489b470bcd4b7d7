/**
 * `node --import tsx bench/boundAb.ts [accepted|401|ignored] [seconds] [rounds]`: the floor, the obligations
 * bound (`bench/obligations.ts`) and the gateway (`state.backend: local`, echo agent, log at INFO), one after
 * the other in each round, each pinned to CPU 0 with wrk (1 thread, 32 connections) on CPU 1; prints req/s,
 * p99 and the server's CPU per request (user + system, all threads, from `/proc`), which moves far less than
 * req/s on a shared machine. `BENCH_AB_MODES` (default `floor,obligations,gateway`) sets the servers and order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cpuSeconds,
  requestKind,
  runPullRequests,
  SECRET,
  startServer,
  stopServer,
  writeBenchConfig,
} from "./benchServer.js";

const kind = requestKind(process.argv[2] ?? "accepted", "boundAb.ts");
const seconds = Number(process.argv[3] ?? 5);
const rounds = Number(process.argv[4] ?? 3);
const modes = (process.env.BENCH_AB_MODES ?? "floor,obligations,gateway").split(",");

const work = mkdtempSync(join(tmpdir(), "svc-bound-ab-"));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const mode of modes) {
      const dir = mkdtempSync(join(tmpdir(), "svc-bound-ab-server-"));
      if (mode === "gateway") writeBenchConfig(dir, undefined);
      const args =
        mode === "floor"
          ? ["floor", SECRET]
          : mode === "obligations"
            ? ["obligations", SECRET, dir]
            : ["gateway", dir];
      const { child, port } = await startServer(args, { pinned: true, env: { BENCH_LOG_LEVEL: "info" } });
      try {
        const before = cpuSeconds(child.pid as number);
        const result = await runPullRequests(work, port, kind, seconds, `${mode}-${round}`);
        const used = cpuSeconds(child.pid as number) - before;
        const perRequest = (used * 1e6) / (result.reqPerSec * seconds);
        console.log(
          `${kind} round ${round} ${mode}: ${result.reqPerSec} req/s, p99 ${result.p99} ms, ${perRequest.toFixed(1)} µs CPU per request`,
        );
      } finally {
        await stopServer(child);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
