/**
 * The request stream alone, in one process: `node --import tsx bench/pipelineMicro.ts [iterations]`.
 * Submits N signed requests (unique delivery ids) on a synchronous static route of the real route
 * registry (in-memory limiter and seen cache, agent runs queued synchronously, no script, no direct
 * delivery), admitted on the headers then pushed with the body as the ingress does, and prints the
 * best of five rounds. Runs on a pipeline with `admit` or, for a before/after, one with only `preflight`.
 */
import { createHmac } from "node:crypto";
import { createRouteRegistry, routeTable } from "../src/actors/routes.js";
import { configSchema } from "../src/config/schema.js";
import { createPipeline } from "../src/streams/pipeline.js";
import { createFixedWindowLimiter } from "../src/streams/rateLimiter.js";
import { createSeenCache } from "../src/streams/seenCache.js";
import { verifySignature } from "../src/streams/signatures.js";
import type { Inbound, Outcome } from "../src/streams/types.js";

const iterations = Number(process.argv[2] ?? 200_000);
const SECRET = "bench-secret";
const registry = createRouteRegistry(
  routeTable(
    configSchema.parse({
      platforms: { webhook: { enabled: true, max_body_bytes: 1 << 20, routes: { r: { secret: SECRET } } } },
    }),
  ),
);
const limiter = createFixedWindowLimiter({ limit: 1e12, windowMs: 60_000, now: () => 0 });
const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100_000, now: () => 0 });
let queued = 0;
let ids = 0;
const pipeline = createPipeline({
  routes: {
    lookup: (name) => registry.lookup(name),
    multiplexProfiles: () => registry.current().multiplexProfiles,
  },
  maxBodyBytes: () => registry.current().maxBodyBytes,
  isSpent: (name) => limiter.isSpent(name),
  tryAcquire: (name) => limiter.tryAcquire(name),
  auth: { verify: verifySignature },
  filters: { listReader: () => ({ readList: () => new Set() }) },
  script: { runScript: async (req) => ({ kind: "payload", payload: req.payload }) },
  idempotency: { checkAndAdd: (key) => seen.checkAndAdd(key), randomId: () => `rnd-${++ids}` },
  dispatch: {
    modes: {},
    enqueueRun: () => {
      queued += 1;
      return true;
    },
    forget: (key) => seen.delete(key),
  },
  deliver: { deliverDirect: async () => true, forget: (key) => seen.delete(key) },
  onFailure: (stage, err) => {
    throw new Error(`stage ${stage} failed: ${String(err)}`);
  },
});

const body = Buffer.from('{"action":"opened","number":1,"repository":{"full_name":"octo/repo"}}');
const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
let seq = 0;
function inbound(): Inbound {
  seq += 1;
  return {
    method: "POST",
    path: "/webhooks/r",
    routeName: "r",
    profile: undefined,
    headers: {
      "content-length": String(body.length),
      "x-hub-signature-256": signature,
      "x-github-event": "issues",
      "x-github-delivery": `d-${seq}`,
    },
    body,
    receivedAt: 0,
  };
}

let answered = 0;
let accepted = 0;
const reply = (outcome: Outcome) => {
  answered += 1;
  if (outcome.status === 202) accepted += 1;
};

const EMPTY = Buffer.alloc(0);
/** The ingress's two steps: the headers (empty body) admitted, then the request pushed with its body. */
const send: (request: Inbound) => void =
  "admit" in pipeline
    ? (request) => {
        const admitted = pipeline.admit({ ...request, body: EMPTY });
        if (admitted.outcome !== undefined) throw new Error(`admission answered ${admitted.outcome.status}`);
        pipeline.push(request, reply, admitted);
      }
    : (request) => {
        const early = (pipeline as { preflight(head: Inbound): Outcome | undefined }).preflight({
          ...request,
          body: EMPTY,
        });
        if (early !== undefined) throw new Error(`preflight answered ${early.status}`);
        (pipeline as { push(inbound: Inbound, reply: (o: Outcome) => void): void }).push(request, reply);
      };

/** One round: wall seconds, and this process's CPU seconds (less disturbed by a loaded machine). */
function round(n: number): { wall: number; cpu: number } {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) send(inbound());
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6 };
}

round(20_000); // warm-up
let best = Number.POSITIVE_INFINITY;
let bestCpu = Number.POSITIVE_INFINITY;
for (let r = 0; r < 5; r++) {
  const { wall, cpu } = round(iterations);
  best = Math.min(best, wall);
  bestCpu = Math.min(bestCpu, cpu);
}
const expected = 20_000 + 5 * iterations;
if (answered !== expected || accepted !== expected || queued !== expected) {
  throw new Error(`answered ${answered}, accepted ${accepted}, queued ${queued}; expected ${expected}`);
}
const perRequest = (seconds: number) => ((seconds / iterations) * 1e6).toFixed(2);
console.log(
  `pipeline: ${iterations} requests in ${best.toFixed(3)} s (best of 5), ${Math.round(iterations / best)} req/s, ${perRequest(best)} µs/request wall, ${perRequest(bestCpu)} µs/request CPU`,
);
await pipeline.close();
