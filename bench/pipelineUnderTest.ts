/**
 * What pipelineMicro and pipelineAB drive: a checkout's request stream on a synchronous static route of its
 * real route registry (in-memory limiter and seen cache, agent runs queued synchronously, no script, no
 * direct delivery), and signed requests with unique delivery ids sent as the ingress sends them.
 */
import { createHmac } from "node:crypto";
import { resolve } from "node:path";
import type { Inbound, Outcome } from "../src/streams/types.js";

const SECRET = "bench-secret";

/** The part of the pipeline the benches use, on a checkout with `admit` or, before it, only `preflight`. */
export interface PipelineUnderTest {
  admit?(head: Inbound): { outcome?: Outcome };
  preflight?(head: Inbound): Outcome | undefined;
  push(inbound: Inbound, reply: (o: Outcome) => void, admitted?: unknown): void;
  close(): Promise<void>;
}

/** The request stream of the checkout at `root` (a directory holding `src/`); `onRun` sees each queued run. */
export async function pipelineAt(root: string, onRun: () => void = () => {}): Promise<PipelineUnderTest> {
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
    dispatch: {
      modes: {},
      enqueueRun: () => {
        onRun();
        return true;
      },
      forget: (key: string) => seen.delete(key),
    },
    deliver: { deliverDirect: async () => true, forget: (key: string) => seen.delete(key) },
    onFailure: (stage: string, err: unknown) => {
      throw new Error(`stage ${stage} failed: ${String(err)}`);
    },
  }) as PipelineUnderTest;
}

const body = Buffer.from('{"action":"opened","number":1,"repository":{"full_name":"octo/repo"}}');
const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
const EMPTY = Buffer.alloc(0);
let seq = 0;

/** The next signed request (a new delivery id each time). */
export function inbound(): Inbound {
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

/** The ingress's two steps: the headers (empty body) admitted, then the request pushed with its body. */
export function sender(pipeline: PipelineUnderTest, reply: (o: Outcome) => void): (request: Inbound) => void {
  const admit = pipeline.admit?.bind(pipeline);
  if (admit !== undefined)
    return (request) => {
      const admitted = admit({ ...request, body: EMPTY });
      if (admitted.outcome !== undefined) throw new Error(`admission answered ${admitted.outcome.status}`);
      pipeline.push(request, reply, admitted);
    };
  return (request) => {
    const early = pipeline.preflight?.({ ...request, body: EMPTY });
    if (early !== undefined) throw new Error(`preflight answered ${early.status}`);
    pipeline.push(request, reply);
  };
}
