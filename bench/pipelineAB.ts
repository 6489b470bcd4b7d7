/**
 * Two checkouts' request streams in one process, rounds interleaved so the load of a shared machine
 * falls on both alike: `node --import tsx bench/pipelineAB.ts <rootA> <rootB> [rounds] [perRound]`
 * (a root holds `src/`, e.g. `git archive main src package.json tsconfig.json | tar -x -C /tmp/main`
 * with a `node_modules` link). The workload is pipelineMicro's: signed requests with unique delivery
 * ids on a static route of the real registry, admitted on the headers (`admit`, or `preflight` where
 * there is none) then pushed. Prints min and median µs per request of each side.
 */
import { createHmac } from "node:crypto";
import { resolve } from "node:path";
import type { Inbound, Outcome } from "../src/streams/types.js";

const SECRET = "bench-secret";

interface AnyPipeline {
  admit?(head: Inbound): { outcome?: Outcome };
  preflight(head: Inbound): Outcome | undefined;
  push(inbound: Inbound, reply: (o: Outcome) => void, admitted?: unknown): void;
}

async function pipelineAt(root: string): Promise<AnyPipeline> {
  const at = (path: string) => import(resolve(root, path));
  const { createRouteRegistry, routeTable } = await at("src/actors/routes.ts");
  const { configSchema } = await at("src/config/schema.ts");
  const { createPipeline } = await at("src/streams/pipeline.ts");
  const { createFixedWindowLimiter } = await at("src/streams/rateLimiter.ts");
  const { createSeenCache } = await at("src/streams/seenCache.ts");
  const { verifySignature } = await at("src/streams/signatures.ts");
  const config = configSchema.parse({
    platforms: { webhook: { enabled: true, max_body_bytes: 1 << 20, routes: { r: { secret: SECRET } } } },
  });
  const registry = createRouteRegistry(routeTable(config));
  const limiter = createFixedWindowLimiter({ limit: 1e12, windowMs: 60_000, now: () => 0 });
  const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100_000, now: () => 0 });
  let ids = 0;
  return createPipeline({
    routes: {
      lookup: (name: string) => registry.lookup(name),
      multiplexProfiles: () => registry.current().multiplexProfiles,
    },
    maxBodyBytes: () => registry.current().maxBodyBytes,
    isSpent: (name: string) => limiter.isSpent(name),
    tryAcquire: (name: string) => limiter.tryAcquire(name),
    auth: { verify: verifySignature },
    filters: { listReader: () => ({ readList: () => new Set() }) },
    script: { runScript: async (req: { payload: unknown }) => ({ kind: "payload", payload: req.payload }) },
    idempotency: { checkAndAdd: (key: string) => seen.checkAndAdd(key), randomId: () => `rnd-${++ids}` },
    dispatch: { modes: {}, enqueueRun: () => true, forget: (key: string) => seen.delete(key) },
    deliver: { deliverDirect: async () => true, forget: (key: string) => seen.delete(key) },
    onFailure: (stage: string, err: unknown) => {
      throw new Error(`stage ${stage} failed: ${String(err)}`);
    },
  }) as AnyPipeline;
}

const body = Buffer.from('{"action":"opened","number":1,"repository":{"full_name":"octo/repo"}}');
const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
const EMPTY = Buffer.alloc(0);
let seq = 0;
const inbound = (): Inbound => ({
  method: "POST",
  path: "/webhooks/r",
  routeName: "r",
  profile: undefined,
  headers: {
    "content-length": String(body.length),
    "x-hub-signature-256": signature,
    "x-github-event": "issues",
    "x-github-delivery": `d-${++seq}`,
  },
  body,
  receivedAt: 0,
});

let unexpected = 0;
const reply = (outcome: Outcome) => {
  if (outcome.status !== 202) unexpected += 1;
};

function sender(pipeline: AnyPipeline): (request: Inbound) => void {
  const admit = pipeline.admit?.bind(pipeline);
  if (admit !== undefined)
    return (request) => pipeline.push(request, reply, admit({ ...request, body: EMPTY }));
  return (request) => {
    pipeline.preflight({ ...request, body: EMPTY });
    pipeline.push(request, reply);
  };
}

const [rootA, rootB] = [process.argv[2], process.argv[3]];
if (rootA === undefined || rootB === undefined) throw new Error("usage: pipelineAB.ts <rootA> <rootB>");
const rounds = Number(process.argv[4] ?? 20);
const perRound = Number(process.argv[5] ?? 15_000);
const a = sender(await pipelineAt(rootA));
const b = sender(await pipelineAt(rootB));
const round = (send: (request: Inbound) => void, n: number) => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) send(inbound());
  return Number(process.hrtime.bigint() - started) / 1e3 / n;
};
round(a, 20_000);
round(b, 20_000);
const timesA: number[] = [];
const timesB: number[] = [];
for (let i = 0; i < rounds; i++) {
  // Alternate which side goes first, so neither always runs right after the other's garbage.
  if (i % 2 === 0) {
    timesA.push(round(a, perRound));
    timesB.push(round(b, perRound));
  } else {
    timesB.push(round(b, perRound));
    timesA.push(round(a, perRound));
  }
}
if (unexpected > 0) throw new Error(`${unexpected} requests were not answered 202`);
const median = (xs: number[]) => ([...xs].sort((x, y) => x - y)[xs.length >> 1] ?? 0).toFixed(2);
const min = (xs: number[]) => Math.min(...xs).toFixed(2);
console.log(`A ${rootA}: min ${min(timesA)} median ${median(timesA)} µs/request`);
console.log(`B ${rootB}: min ${min(timesB)} median ${median(timesB)} µs/request`);
