/**
 * The accepted path with `state.backend: redis` (docs/durability.md), against the same path with
 * `local` in the same run (same machine load): a private redis-server on a free port (no persistence),
 * the real gateway in this process (echo agent, log delivery at WARN), autocannon with 32 connections
 * and a unique delivery id per request. With redis every 202 costs the shared rate limit, the shared
 * idempotency SET NX and the BullMQ enqueue; this instance's workers run the echo agent meanwhile.
 *
 *   node --import tsx bench/redisAccept.ts          (BENCH_REDIS_SECONDS, default 20)
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startTestRedis } from "../test/helpers/redis.js";
import { loadEchoGateway, startEchoGateway } from "./echoGateway.js";

const SECRET = "bench-secret";
const SECONDS = Number(process.env.BENCH_REDIS_SECONDS ?? 20);

async function accepted(state: Record<string, unknown>, label: string): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "svc-bench-redis-"));
  const gateway = await startEchoGateway(home, SECRET, { state });
  const result = await loadEchoGateway(gateway.port, SECRET, SECONDS);
  await gateway.stop();
  rmSync(home, { recursive: true, force: true });
  const total = result["2xx"] + result.non2xx;
  return `| ${label} | ${total.toLocaleString("en")} | ${Math.round(result.requests.average).toLocaleString("en")} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} |`;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(", ");
console.log(`load average before: ${load()} (${SECONDS} s per row, 32 connections)`);
const redis = await startTestRedis();
try {
  console.log("| backend | requests | req/s | p50 ms | p99 ms | non-2xx |");
  console.log("|---|---|---|---|---|---|");
  console.log(
    await accepted(
      { backend: "redis", redis_url: redis.url, redis_key_prefix: `bench${randomUUID().slice(0, 8)}` },
      "redis",
    ),
  );
  console.log(await accepted({ backend: "local" }, "local"));
} finally {
  await redis.cleanup();
}
console.log(`load average after: ${load()}`);
process.exit(0);
