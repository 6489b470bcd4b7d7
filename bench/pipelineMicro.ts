/**
 * The request stream alone, in one process: `node --import tsx bench/pipelineMicro.ts [iterations]`.
 * Submits N signed requests (unique delivery ids) on a synchronous route (in-memory limiter and seen
 * cache, agent runs queued synchronously, no script, no direct delivery), preflight then push as the
 * ingress does, and prints requests per second for the best of five rounds.
 */
import { createHmac } from "node:crypto";
import type { ResolvedRoute } from "../src/streams/context.js";
import { createPipeline } from "../src/streams/pipeline.js";
import { createFixedWindowLimiter } from "../src/streams/rateLimiter.js";
import { createSeenCache } from "../src/streams/seenCache.js";
import { verifySignature } from "../src/streams/signatures.js";
import type { Inbound, Outcome } from "../src/streams/types.js";

const iterations = Number(process.argv[2] ?? 200_000);
const SECRET = "bench-secret";
const route: ResolvedRoute = {
  name: "r",
  route: { deliver: "log", deliver_only: false, mirror_to_session: false },
  secret: SECRET,
  profile: "default",
};
const limiter = createFixedWindowLimiter({ limit: 1e12, windowMs: 60_000, now: () => 0 });
const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100_000, now: () => 0 });
let queued = 0;
let ids = 0;
const pipeline = createPipeline({
  routes: { lookup: (name) => (name === "r" ? route : undefined), multiplexProfiles: () => false },
  maxBodyBytes: () => 1 << 20,
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

function round(n: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const request = inbound();
    const admitted = pipeline.admit(request);
    if (admitted.outcome !== undefined) throw new Error(`preflight answered ${admitted.outcome.status}`);
    pipeline.push(request, reply, admitted);
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

round(20_000); // warm-up
let best = Number.POSITIVE_INFINITY;
for (let r = 0; r < 5; r++) best = Math.min(best, round(iterations));
const expected = 20_000 + 5 * iterations;
if (answered !== expected || accepted !== expected || queued !== expected) {
  throw new Error(`answered ${answered}, accepted ${accepted}, queued ${queued}; expected ${expected}`);
}
console.log(
  `pipeline: ${iterations} requests in ${best.toFixed(3)} s (best of 5), ${Math.round(iterations / best)} req/s, ${((best / iterations) * 1e6).toFixed(2)} µs/request`,
);
await pipeline.close();
