import { createHmac } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { createRouteRegistry, routeTable } from "../../../src/actors/routes.js";
import { configSchema } from "../../../src/config/schema.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { ResolvedRoute } from "../../../src/streams/context.js";
import { createPipeline, type PipelineDeps } from "../../../src/streams/pipeline.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import type { Inbound, Outcome } from "../../../src/streams/types.js";

const SECRET = "k";
const route = (name: string, over: Partial<Route> = {}): ResolvedRoute => ({
  name,
  route: { deliver: "log", deliver_only: false, mirror_to_session: false, ...over },
  secret: SECRET,
  profile: "default",
});

/** A held Promise and its resolver, for scripts and deliveries the test finishes by hand. */
function held<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function harness(over: Partial<PipelineDeps> = {}) {
  const routes = new Map<string, ResolvedRoute>([
    ["r", route("r")],
    ["slow", route("slow", { script: "s.sh" })],
    ["direct", route("direct", { deliver_only: true })],
  ]);
  const lookups: string[] = [];
  const failures: string[] = [];
  const scripts: Array<() => void> = [];
  const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100, now: () => 0 });
  let n = 0;
  const deps: PipelineDeps = {
    routes: {
      lookup: (name) => {
        lookups.push(name);
        if (name === "throws") throw new Error("route table broken");
        return routes.get(name);
      },
      multiplexProfiles: () => false,
    },
    maxBodyBytes: () => 100,
    isSpent: () => false,
    tryAcquire: () => true,
    auth: { verify: verifySignature },
    filters: { listReader: () => ({ readList: () => new Set() }) },
    script: {
      runScript: (req) =>
        new Promise((resolve) => scripts.push(() => resolve({ kind: "payload", payload: req.payload }))),
    },
    idempotency: { checkAndAdd: (key) => seen.checkAndAdd(key), randomId: () => `rnd-${++n}` },
    dispatch: { modes: {}, enqueueRun: () => true, forget: (key) => seen.delete(key) },
    deliver: { deliverDirect: async () => true, forget: (key) => seen.delete(key) },
    onFailure: (stage) => failures.push(stage),
    ...over,
  };
  return { pipeline: createPipeline(deps), routes, lookups, failures, scripts, seen };
}

const signed = (routeName: string, body: string, headers: Record<string, string> = {}): Inbound => ({
  method: "POST",
  path: `/webhooks/${routeName}`,
  routeName,
  profile: undefined,
  headers: {
    "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  },
  body: Buffer.from(body),
  receivedAt: 0,
});

/** A reply callback that records every answer it gets, in order. */
function recorder() {
  const answers: Array<[label: string, status: number]> = [];
  return { answers, reply: (label: string) => (o: Outcome) => void answers.push([label, o.status]) };
}

describe("the request carries its own reply", () => {
  it("each request is answered exactly once: synchronous ones inside push, in order; a slow one when it is done", async () => {
    const { pipeline, scripts } = harness();
    const { answers, reply } = recorder();
    pipeline.push(signed("slow", "{}"), reply("slow"));
    pipeline.push(signed("r", "{}"), reply("a"));
    pipeline.push({ ...signed("r", "{}"), body: Buffer.from("{bad") }, reply("b"));
    pipeline.push(signed("r", "{}", { "x-github-delivery": "d1" }), reply("c"));
    pipeline.push(signed("r", "{}", { "x-github-delivery": "d1" }), reply("d"));
    expect(answers).toEqual([
      ["a", 202],
      ["b", 401],
      ["c", 202],
      ["d", 200],
    ]);
    scripts[0]?.();
    await pipeline.close();
    expect(answers.slice(4)).toEqual([["slow", 202]]);
  });

  it("a stage that throws still answers that request, once, and the stream goes on", async () => {
    const { pipeline, failures } = harness({
      auth: {
        verify: (input) => {
          if (input.body.toString() === '{"boom":1}') throw new Error("verifier crashed");
          return verifySignature(input);
        },
      },
    });
    const { answers, reply } = recorder();
    pipeline.push(signed("throws", "{}"), reply("route"));
    pipeline.push(signed("r", '{"boom":1}'), reply("auth"));
    pipeline.push(signed("r", "{}"), reply("next"));
    expect(answers).toEqual([
      ["route", 500],
      ["auth", 500],
      ["next", 202],
    ]);
    expect(failures).toEqual(["route", "auth"]);
    await pipeline.close();
    expect(answers).toHaveLength(3);
  });

  it("close() answers every request in flight before it resolves, then refuses new ones with 503", async () => {
    const { pipeline, scripts } = harness();
    const { answers, reply } = recorder();
    for (const label of ["s1", "s2", "s3"]) pipeline.push(signed("slow", `{"n":"${label}"}`), reply(label));
    let closed = false;
    const closing = pipeline.close().then(() => {
      closed = true;
      answers.push(["closed", 0]);
    });
    await Promise.resolve();
    expect(closed).toBe(false);
    expect(answers).toEqual([]);
    for (const release of scripts.reverse()) release();
    await closing;
    expect(
      answers
        .slice(0, 3)
        .map(([label]) => label)
        .sort(),
    ).toEqual(["s1", "s2", "s3"]);
    expect(answers.slice(0, 3).every(([, status]) => status === 202)).toBe(true);
    expect(answers[3]).toEqual(["closed", 0]);
    pipeline.push(signed("r", "{}"), reply("late"));
    expect(answers[4]).toEqual(["late", 503]);
  });
});

/** The pipeline on the real route registry, its lookups counted; `reload` replaces the table as SIGHUP does. */
function onRegistry(routes: Record<string, unknown>, over: Partial<PipelineDeps> = {}) {
  const tableOf = (routesNow: Record<string, unknown>, maxBodyBytes = 100) =>
    routeTable(
      configSchema.parse({
        platforms: { webhook: { enabled: true, max_body_bytes: maxBodyBytes, routes: routesNow } },
      }),
    );
  const dynamic = new Map<string, Route>();
  const registry = createRouteRegistry(tableOf(routes), {
    lookup: (name) => dynamic.get(name),
    current: () => dynamic,
  });
  const lookups: string[] = [];
  const { pipeline } = harness({
    routes: {
      lookup: (name) => {
        lookups.push(name);
        return registry.lookup(name);
      },
      multiplexProfiles: () => registry.current().multiplexProfiles,
    },
    maxBodyBytes: () => registry.current().maxBodyBytes,
    ...over,
  });
  return {
    pipeline,
    lookups,
    dynamic,
    reload: (routesNow: Record<string, unknown>, maxBodyBytes?: number) =>
      registry.replace(tableOf(routesNow, maxBodyBytes)),
  };
}

/** Admits `request` on its headers (empty body, as the ingress does), then pushes it with its body. */
function admitThenPush(
  pipeline: ReturnType<typeof harness>["pipeline"],
  request: Inbound,
  between: () => void,
  reply: (o: Outcome) => void,
) {
  const admitted = pipeline.admit({ ...request, body: Buffer.alloc(0) });
  expect(admitted.outcome).toBeUndefined();
  between();
  pipeline.push(request, reply, admitted);
}

describe("route and size are checked once", () => {
  it("a request admitted on its headers is not looked up again; one pushed without admission is looked up once", () => {
    const { pipeline, lookups } = onRegistry({ r: { secret: SECRET } });
    const { answers, reply } = recorder();
    admitThenPush(pipeline, signed("r", "{}"), () => {}, reply("admitted"));
    expect(lookups).toEqual(["r"]);
    pipeline.push(signed("r", "{}"), reply("plain"));
    expect(lookups).toEqual(["r", "r"]);
    expect(answers).toEqual([
      ["admitted", 202],
      ["plain", 202],
    ]);
  });

  it("admission answers what preflight answers: unknown route 404, declared size over the limit 413", () => {
    const { pipeline } = harness();
    expect(pipeline.admit(signed("nope", "{}")).outcome?.status).toBe(404);
    expect(pipeline.admit(signed("r", "{}", { "content-length": "101" })).outcome?.status).toBe(413);
    expect(pipeline.preflight(signed("r", "{}", { "content-length": "101" }))?.status).toBe(413);
  });

  it("an admitted request whose body is over the limit is still 413 (the body is measured in the stream)", () => {
    const { pipeline } = onRegistry({ r: { secret: SECRET } });
    const { answers, reply } = recorder();
    const small = signed("r", "{}");
    admitThenPush(pipeline, { ...small, body: Buffer.alloc(101, 32) }, () => {}, reply("big"));
    expect(answers).toEqual([["big", 413]]);
  });

  it("a route removed while the body arrived answers 404; one replaced is judged under its new config", () => {
    const { pipeline, lookups, reload } = onRegistry({ r: { secret: SECRET }, other: { secret: SECRET } });
    const { answers, reply } = recorder();
    admitThenPush(pipeline, signed("r", "{}"), () => reload({ other: { secret: SECRET } }), reply("removed"));
    reload({ r: { secret: SECRET } });
    admitThenPush(pipeline, signed("r", "{}"), () => reload({ r: { secret: "new" } }), reply("new secret"));
    admitThenPush(
      pipeline,
      signed("r", "{}", { "x-github-event": "push" }),
      () => reload({ r: { secret: SECRET, events: ["issues"] } }),
      reply("new events"),
    );
    expect(answers).toEqual([
      ["removed", 404],
      ["new secret", 401],
      ["new events", 200],
    ]);
    // Each was looked up again after the reload that retired the route it was admitted with.
    expect(lookups).toEqual(["r", "r", "r", "r", "r", "r"]);
  });

  it("a reload that leaves the route as it was: the request is looked up again and served", () => {
    const { pipeline, lookups, reload } = onRegistry({ r: { secret: SECRET } });
    const { answers, reply } = recorder();
    admitThenPush(pipeline, signed("r", "{}"), () => reload({ r: { secret: SECRET } }), reply("same"));
    expect(answers).toEqual([["same", 202]]);
    expect(lookups).toEqual(["r", "r"]);
  });

  it("a body limit lowered while the body arrived checks the declared size again (413)", () => {
    let limit = 200;
    const { pipeline } = onRegistry({ r: { secret: SECRET } }, { maxBodyBytes: () => limit });
    const { answers, reply } = recorder();
    const declaredLarge = signed("r", "{}", { "content-length": "150" });
    admitThenPush(pipeline, declaredLarge, () => (limit = 100), reply("lowered"));
    limit = 200;
    admitThenPush(pipeline, declaredLarge, () => {}, reply("unchanged"));
    expect(answers).toEqual([
      ["lowered", 413],
      ["unchanged", 202],
    ]);
  });

  it("a dynamic route (it may change at any lookup) is looked up again for every request", () => {
    const { pipeline, lookups, dynamic } = onRegistry({ r: { secret: SECRET } });
    dynamic.set("dyn", { deliver: "log", deliver_only: false, mirror_to_session: false, secret: SECRET });
    const { answers, reply } = recorder();
    admitThenPush(pipeline, signed("dyn", "{}"), () => {}, reply("kept"));
    admitThenPush(pipeline, signed("dyn", "{}"), () => dynamic.delete("dyn"), reply("unsubscribed"));
    expect(answers).toEqual([
      ["kept", 202],
      ["unsubscribed", 404],
    ]);
    expect(lookups).toEqual(["dyn", "dyn", "dyn", "dyn"]);
  });
});

describe("the route registry retires the routes of a table it replaces", () => {
  it("static routes stand until a reload replaces their table; a dynamic route stands in the table current at its lookup, and is retired with it", () => {
    const table = routeTable(
      configSchema.parse({ platforms: { webhook: { enabled: true, routes: { r: { secret: SECRET } } } } }),
    );
    const dynamic = {
      deliver: "log",
      deliver_only: false,
      mirror_to_session: false,
      secret: SECRET,
    } as const;
    const registry = createRouteRegistry(table, {
      lookup: (name) => (name === "dyn" ? dynamic : undefined),
      current: () => new Map([["dyn", dynamic]]),
    });
    const before = registry.lookup("r");
    const dynBefore = registry.lookup("dyn");
    expect(before?.standing?.retired).toBe(false);
    expect(dynBefore?.standing?.retired).toBe(false);
    expect(dynBefore?.dynamic).toBe(true);
    expect(before?.dynamic).toBeUndefined();
    expect(registry.routes().map((r) => [r.name, r.dynamic === true, r.standing?.retired])).toEqual([
      ["r", false, false],
      ["dyn", true, false],
    ]);
    registry.replace(table);
    expect(before?.standing?.retired).toBe(false);
    const next = routeTable(
      configSchema.parse({ platforms: { webhook: { enabled: true, routes: { r: { secret: SECRET } } } } }),
    );
    registry.replace(next);
    expect(before?.standing?.retired).toBe(true);
    // A reload flushes the coalescing groups: the subscription's event still in its script is not grouped after it.
    expect(dynBefore?.standing?.retired).toBe(true);
    expect(registry.lookup("r")?.standing?.retired).toBe(false);
    expect(registry.lookup("dyn")?.standing?.retired).toBe(false);
  });
});

describe("a broken stream (unreachable: every stage catches)", () => {
  it("answers every request it held 500, and every later one 500 instead of leaving it unanswered", async () => {
    const failures: string[] = [];
    const { pipeline, scripts } = harness({
      script: {
        runScript: (req) =>
          req.payload.n === "boom"
            ? Promise.reject(new Error("script crashed"))
            : new Promise((resolve) =>
                scripts.push(() => resolve({ kind: "payload", payload: req.payload })),
              ),
      },
      onFailure: (stage) => {
        failures.push(stage);
        // A failure handler that throws is what could break the shared stream.
        if (stage === "script") throw new Error("failure handler broken");
      },
    });
    const { answers, reply } = recorder();
    pipeline.push(signed("slow", '{"n":"held"}'), reply("held"));
    pipeline.push(signed("slow", '{"n":"boom"}'), reply("boom"));
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    expect(answers.map(([, status]) => status)).toEqual([500, 500]);
    expect(failures).toEqual(["script", "pipeline"]);
    pipeline.push(signed("r", "{}"), reply("later"));
    expect(answers[2]).toEqual(["later", 500]);
    await pipeline.close();
    expect(answers).toHaveLength(3);
  });
});

describe("direct deliveries in the idempotency record", () => {
  it("a duplicate while the original is pending waits for it: 502 when it fails (the retry is then new), duplicate when delivered", async () => {
    const deliveries: Array<ReturnType<typeof held<boolean>>> = [];
    const forgotten: string[] = [];
    const { pipeline, seen } = harness({
      deliver: {
        deliverDirect: () => {
          const d = held<boolean>();
          deliveries.push(d);
          return d.promise;
        },
        forget: (key) => {
          forgotten.push(key);
          seen.delete(key);
        },
      },
    });
    const id = { "x-github-delivery": "dup" };
    const original = pipeline.submit(signed("direct", "{}", id));
    const duplicate = pipeline.submit(signed("direct", "{}", id));
    expect(deliveries).toHaveLength(1);
    deliveries[0]?.resolve(false);
    expect((await original).status).toBe(502);
    expect((await duplicate).status).toBe(502);
    expect(forgotten).toEqual(["direct:dup"]);

    const retry = pipeline.submit(signed("direct", "{}", id));
    const again = pipeline.submit(signed("direct", "{}", id));
    expect(deliveries).toHaveLength(2);
    deliveries[1]?.resolve(true);
    expect((await retry).status).toBe(200);
    expect(await again).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await pipeline.submit(signed("direct", "{}", id))).toMatchObject({
      body: { status: "duplicate" },
    });
  });
});
