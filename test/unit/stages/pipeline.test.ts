import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Route } from "../../../src/config/sections/webhook.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../src/streams/context.js";
import { createPipeline, type PipelineDeps } from "../../../src/streams/pipeline.js";
import { createFixedWindowLimiter } from "../../../src/streams/rateLimiter.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import { NOT_AMONG_EVENTS } from "../../../src/streams/stages/events.js";
import type { ScriptRequest, ScriptResult } from "../../../src/streams/stages/script.js";
import type { Inbound } from "../../../src/streams/types.js";

const SECRET = "k";
const route = (over: Partial<Route> = {}): ResolvedRoute => ({
  name: "r",
  route: { deliver: "log", deliver_only: false, mirror_to_session: false, ...over },
  secret: SECRET,
  profile: "default",
});

function harness(
  r: ResolvedRoute,
  options: {
    limit?: number;
    script?: (req: ScriptRequest) => Promise<ScriptResult>;
    /** Replaces the harness's own (a shared store's Promises). */
    deps?: Partial<PipelineDeps>;
  } = {},
) {
  const log: string[] = [];
  const queued: AcceptedEvent[] = [];
  const failures: string[] = [];
  const limiter = createFixedWindowLimiter({ limit: options.limit ?? 100, windowMs: 60_000, now: () => 0 });
  const deps: PipelineDeps = {
    routes: { lookup: (name) => (name === "r" ? r : undefined), multiplexProfiles: () => false },
    maxBodyBytes: () => 1000,
    isSpent: (name) => {
      log.push("limit?");
      return limiter.isSpent(name);
    },
    tryAcquire: (name) => {
      log.push("rate");
      return limiter.tryAcquire(name);
    },
    auth: {
      verify: (input) => {
        log.push("auth");
        return verifySignature(input);
      },
    },
    filters: { listReader: () => ({ readList: () => new Set() }) },
    script: {
      runScript:
        options.script ??
        (async (req) => {
          log.push("script");
          return { kind: "payload", payload: req.payload };
        }),
    },
    idempotency: (() => {
      const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 10, now: () => 0 });
      let n = 0;
      return {
        checkAndAdd: (k: string) => {
          log.push("seen");
          return seen.checkAndAdd(k);
        },
        randomId: () => `rnd-${++n}`,
      };
    })(),
    dispatch: {
      modes: {},
      enqueueRun: (e) => {
        queued.push(e);
        return true;
      },
      forget: () => {},
    },
    deliver: { deliverDirect: async () => true, forget: () => {} },
    onFailure: (stage) => failures.push(stage),
    ...options.deps,
  };
  return { pipeline: createPipeline(deps), log, queued, failures };
}

const sign = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
const request = (body: string, headers: Record<string, string> = {}): Inbound => ({
  method: "POST",
  path: "/webhooks/r",
  routeName: "r",
  profile: undefined,
  headers,
  body: Buffer.from(body),
  receivedAt: 0,
});
const signed = (body: string, headers: Record<string, string> = {}) =>
  request(body, { "x-hub-signature-256": sign(body), ...headers });

describe("createPipeline: spec 4.2 order", () => {
  it("every request past the body size check spends the route's quota before auth; a spent route is 429 before auth", async () => {
    const { pipeline, log } = harness(route(), { limit: 2 });
    expect((await pipeline.submit(request("{bad"))).status).toBe(401);
    expect(log).toEqual(["limit?", "rate", "auth"]);
    log.length = 0;
    expect((await pipeline.submit(signed("{bad"))).status).toBe(400);
    expect(log).toEqual(["limit?", "rate", "auth"]);
    log.length = 0;
    expect((await pipeline.submit(request("{bad"))).status).toBe(429);
    expect((await pipeline.submit(signed("{}"))).status).toBe(429);
    expect(log).toEqual(["limit?", "limit?"]);
  });

  it("a signed malformed body is 400; events before filters; filters before script; idempotency last", async () => {
    const { pipeline, log, queued } = harness(
      route({ events: ["push"], filters: [{ field: "go", equals: true }], script: "s.sh" }),
    );
    expect((await pipeline.submit(signed("{bad"))).status).toBe(400);
    expect(await pipeline.submit(signed('{"go":true}', { "x-github-event": "issues" }))).toMatchObject({
      body: { status: "ignored", event: "issues" },
    });
    expect(await pipeline.submit(signed('{"go":false}', { "x-github-event": "push" }))).toMatchObject({
      body: { reason: "filter" },
    });
    expect(log).not.toContain("script");
    expect(log).not.toContain("seen");
    log.length = 0;
    expect(
      await pipeline.submit(signed('{"go":true}', { "x-github-event": "push", "x-request-id": "1" })),
    ).toMatchObject({ status: 202 });
    expect(log).toEqual(["limit?", "rate", "auth", "script", "seen"]);
    expect(queued.map((e) => e.deliveryId)).toEqual(["1"]);
  });

  it("the payload a script returns is the one prompt and deliver_extra render (spec 2.4)", async () => {
    const { pipeline, queued } = harness(
      route({
        script: "s.py",
        prompt: "{title} {sender}",
        deliver_extra: { chat_id: "{chat}", repo: "{repository.full_name}" },
      }),
      { script: async () => ({ kind: "payload", payload: { title: "T", chat: "42" } }) },
    );
    const body = '{"title":"sent","sender":"s","chat":"1","repository":{"full_name":"o/r"}}';
    expect((await pipeline.submit(signed(body))).status).toBe(202);
    expect(queued[0]).toMatchObject({
      prompt: "T {sender}",
      extra: { chat_id: "42", repo: "{repository.full_name}" },
    });
  });

  it("preflight answers unknown routes and oversized declared bodies from the headers alone", () => {
    const { pipeline } = harness(route());
    expect(pipeline.preflight({ ...request(""), routeName: "nope" })).toMatchObject({ status: 404 });
    expect(pipeline.preflight(request("", { "content-length": "1001" }))).toMatchObject({ status: 413 });
    expect(pipeline.preflight(request("", { "content-length": "1000" }))).toBeUndefined();
  });

  it("a throwing stage answers 500 for that request and the stream keeps serving", async () => {
    const { pipeline, failures } = harness(route({ script: "s.sh" }), {
      script: async (req) => {
        if (req.payload.boom) throw new Error("script runner crashed");
        return { kind: "payload", payload: req.payload };
      },
    });
    expect(await pipeline.submit(signed('{"boom":1}'))).toEqual({
      status: 500,
      body: { error: "Internal error" },
    });
    expect(failures).toEqual(["script"]);
    expect((await pipeline.submit(signed('{"ok":1}'))).status).toBe(202);
  });

  it("a slow script does not hold up requests that end earlier", async () => {
    let release: () => void = () => {};
    const { pipeline } = harness(route({ script: "s.sh" }), {
      script: (req) =>
        new Promise((resolve) => (release = () => resolve({ kind: "payload", payload: req.payload }))),
    });
    const slow = pipeline.submit(signed("{}"));
    expect((await pipeline.submit(request("{}"))).status).toBe(401);
    release();
    expect((await slow).status).toBe(202);
  });

  it("a reply callback that throws is contained: the next request is still answered", async () => {
    const { pipeline, failures } = harness(route());
    pipeline.push(signed("{}"), () => {
      throw new Error("socket gone");
    });
    expect(failures).toEqual(["reply"]);
    expect((await pipeline.submit(signed("{}"))).status).toBe(202);
  });

  it("a refused request's answer comes with why (for the delivery history): the scheme's reason, never a signature", () => {
    const { pipeline } = harness(route({ script: "s.sh" }));
    const answers: unknown[][] = [];
    const wrong = sign("other body");
    pipeline.push(request("{}", { "x-hub-signature-256": wrong }), (...args) => answers.push(args));
    pipeline.push(request("{}"), (...args) => answers.push(args));
    pipeline.push(signed("{bad"), (...args) => answers.push(args));
    // Refused ones are answered within push (not queued behind the script); the 400 carries no reason.
    expect(
      answers.map(([answer, close, why]) => [(answer as { status: number }).status, close, why]),
    ).toEqual([
      [401, undefined, "x-hub-signature-256 does not match"],
      [401, undefined, "no recognized signature or token header"],
      [400, undefined, undefined],
    ]);
    expect(JSON.stringify(answers)).not.toContain(wrong.slice("sha256=".length));
    expect(JSON.stringify(answers)).not.toContain(sign("{}").slice("sha256=".length));
  });

  it("an ignored request's answer comes with what ignored it: the route's events, a filter, the script; the answer sent is unchanged", async () => {
    const { pipeline } = harness(
      route({ events: ["push"], filters: [{ field: "go", equals: true }], script: "s.sh" }),
      {
        script: async (req) =>
          req.payload.run === true
            ? { kind: "payload", payload: req.payload }
            : {
                kind: "ignore",
                why: "exited with code 1; stderr: private",
                reason: "script exited with code 1",
              },
      },
    );
    const answers: unknown[][] = [];
    const push = (body: string, event: string) =>
      new Promise<void>((resolve) =>
        pipeline.push(signed(body, { "x-github-event": event }), (...args) => {
          answers.push(args);
          resolve();
        }),
      );
    await push('{"go":true}', "issues");
    await push('{"go":false}', "push");
    await push('{"go":true}', "push");
    await push('{"go":true,"run":true}', "push");
    expect(answers.map(([answer, close, why]) => [answer, close, why])).toEqual([
      [{ status: 200, body: { status: "ignored", event: "issues" } }, undefined, NOT_AMONG_EVENTS],
      [{ status: 200, body: { status: "ignored", reason: "filter" } }, undefined, "filter go did not match"],
      [
        { status: 200, body: { status: "ignored", reason: "script" }, event: "push" },
        undefined,
        "script exited with code 1",
      ],
      [expect.objectContaining({ status: 202 }), undefined, undefined],
    ]);
  });

  it("close() waits for requests in flight; later submissions get 503", async () => {
    let release: () => void = () => {};
    const { pipeline } = harness(route({ script: "s.sh" }), {
      script: (req) =>
        new Promise((resolve) => (release = () => resolve({ kind: "payload", payload: req.payload }))),
    });
    const inFlight = pipeline.submit(signed("{}"));
    let closed = false;
    const closing = pipeline.close().then(() => (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
    release();
    expect((await inFlight).status).toBe(202);
    await closing;
    expect(await pipeline.submit(signed("{}"))).toEqual({
      status: 503,
      body: { error: "Shutting down" },
      headers: { "Retry-After": "30" },
    });
  });
});

describe("createPipeline: the delivery history's lines of kept answers a shared store (Redis) released", () => {
  /** A shared store's replies: each enqueue waits for its reply; `reply` answers them all in one step (one read). */
  function sharedHarness(taken = true) {
    const pending: Array<(taken: boolean) => void> = [];
    const events: string[] = [];
    const { pipeline } = harness(route(), {
      deps: {
        dispatch: {
          modes: {},
          enqueueRun: () => new Promise<boolean>((resolve) => pending.push(resolve)),
          forget: () => {},
        },
        answeredKept: () => events.push("history written"),
        afterReactions: (write) => process.nextTick(write),
      },
    });
    const push = (id: string) =>
      pipeline.push(signed(`{"n":"${id}"}`, { "x-request-id": id }), (answer) =>
        events.push(`${answer.status} ${id}`),
      );
    const reply = () => {
      for (const resolve of pending.splice(0)) resolve(taken);
    };
    return { push, reply, events };
  }
  /** Until the promise reactions and process.nextTick callbacks under way have all run. */
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it("the 202s one read of Redis's replies released are followed by one write of their lines, before the turn ends", async () => {
    const { push, reply, events } = sharedHarness();
    for (const id of ["a", "b", "c"]) push(id);
    await settled();
    expect(events).toEqual([]);
    reply();
    // What the turn leaves for its end (setImmediate), as the history's batched writer does its write.
    setImmediate(() => events.push("end of the turn"));
    await settled();
    expect(events).toEqual(["202 a", "202 b", "202 c", "history written", "end of the turn"]);
    // Another read of replies, another write.
    push("d");
    await settled();
    reply();
    await settled();
    expect(events.slice(5)).toEqual(["202 d", "history written"]);
  });

  it("answers that promise nothing kept (503: the queue full) leave their lines to the end of the turn", async () => {
    const { push, reply, events } = sharedHarness(false);
    push("a");
    await settled();
    reply();
    await settled();
    expect(events).toEqual(["503 a"]);
  });
});
