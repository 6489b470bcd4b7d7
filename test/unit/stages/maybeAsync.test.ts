import { from, lastValueFrom, Subject, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import type { AcceptedEvent, PipelineCtx } from "../../../src/streams/context.js";
import { acceptStage } from "../../../src/streams/stages/accept.js";
import { dispatchStage, QUEUE_FULL } from "../../../src/streams/stages/dispatch.js";
import { DUPLICATE, idempotencyStage } from "../../../src/streams/stages/idempotency.js";
import { applyMaybeAsyncStages, maybeAsyncStagesOperator } from "../../../src/streams/stages/maybeAsync.js";
import { INTERNAL_ERROR } from "../../../src/streams/stages/operator.js";
import { RATE_LIMITED, rateLimitStage } from "../../../src/streams/stages/rateLimit.js";
import { STATE_UNAVAILABLE, StateUnavailableError } from "../../../src/streams/stateUnavailable.js";
import type { Inbound } from "../../../src/streams/types.js";

const inbound: Inbound = {
  method: "POST",
  path: "/webhooks/r",
  routeName: "r",
  profile: undefined,
  headers: { "x-github-delivery": "d-1" },
  body: Buffer.from("{}"),
  receivedAt: 1_700_000_000_000,
};
const ctx: PipelineCtx = {
  inbound,
  route: {
    name: "r",
    route: { deliver: "log", deliver_only: false, mirror_to_session: false },
    secret: "s",
    profile: "default",
  },
  payload: {},
};

describe("stages backed by shared state (Promise answers)", () => {
  it("in memory every stage answers synchronously: the context comes out in the same call", () => {
    const stages = [
      ["rate_limit", rateLimitStage({ isSpent: () => false, tryAcquire: () => true })],
      ["idempotency", idempotencyStage({ checkAndAdd: () => false, randomId: () => "x" })],
      ["accept", acceptStage],
      ["dispatch", dispatchStage({ modes: {}, enqueueRun: () => true, forget: () => {} })],
    ] as const;
    const out = applyMaybeAsyncStages(stages, ctx);
    expect(out).not.toBeInstanceOf(Promise);
    expect((out as PipelineCtx).outcome?.status).toBe(202);
  });

  it("a shared store answers through the Promise: rate limit, duplicate, accepted once stored", async () => {
    const stored: string[] = [];
    const stages = [
      ["rate_limit", rateLimitStage({ isSpent: () => false, tryAcquire: async () => true })],
      ["idempotency", idempotencyStage({ checkAndAdd: async (key) => key !== "r:d-1", randomId: () => "x" })],
      ["accept", acceptStage],
      [
        "dispatch",
        dispatchStage({
          modes: {},
          enqueueRun: async (event: AcceptedEvent) => {
            stored.push(event.deliveryId);
            return true;
          },
          forget: () => {},
        }),
      ],
    ] as const;
    const out = await applyMaybeAsyncStages(stages, ctx);
    expect(out.outcome).toMatchObject({ status: 202, body: { delivery_id: "d-1" } });
    expect(stored).toEqual(["d-1"]);
    const dup = await applyMaybeAsyncStages(stages, {
      ...ctx,
      inbound: { ...inbound, headers: { "x-github-delivery": "d-2" } },
    });
    expect(dup.outcome).toBe(DUPLICATE);
    const limited = await applyMaybeAsyncStages(
      [["rate_limit", rateLimitStage({ isSpent: () => false, tryAcquire: async () => false })]],
      ctx,
    );
    expect(limited.outcome).toBe(RATE_LIMITED);
  });

  it("an unreachable store answers 503 with Retry-After, never 202, and forgets the delivery id", async () => {
    const forgotten: string[] = [];
    const down = () => Promise.reject(new StateUnavailableError("Redis unreachable"));
    const stages = [
      ["idempotency", idempotencyStage({ checkAndAdd: async () => false, randomId: () => "x" })],
      ["accept", acceptStage],
      ["dispatch", dispatchStage({ modes: {}, enqueueRun: down, forget: (key) => void forgotten.push(key) })],
    ] as const;
    const out = await applyMaybeAsyncStages(stages, ctx);
    expect(out.outcome).toBe(STATE_UNAVAILABLE);
    expect(out.outcome?.headers).toEqual({ "Retry-After": "5" });
    expect(forgotten).toEqual(["r:d-1"]);
    const failures: string[] = [];
    const broken = await applyMaybeAsyncStages(
      [
        [
          "rate_limit",
          rateLimitStage({ isSpent: () => false, tryAcquire: () => Promise.reject(new Error("bug")) }),
        ],
      ],
      ctx,
      (stage) => failures.push(stage),
    );
    expect(broken.outcome).toBe(INTERNAL_ERROR);
    expect(failures).toEqual(["rate_limit"]);
    const full = await applyMaybeAsyncStages(
      [
        ["idempotency", idempotencyStage({ checkAndAdd: async () => false, randomId: () => "x" })],
        ["accept", acceptStage],
        ["dispatch", dispatchStage({ modes: {}, enqueueRun: async () => false, forget: () => {} })],
      ],
      ctx,
    );
    expect(full.outcome).toBe(QUEUE_FULL);
  });

  it("the operator emits synchronous answers at once and completes only after the pending ones", async () => {
    let release: (ok: boolean) => void = () => {};
    const slow = new Promise<boolean>((resolve) => {
      release = resolve;
    });
    const input = new Subject<PipelineCtx>();
    const seen: string[] = [];
    const stage = rateLimitStage({
      isSpent: () => false,
      tryAcquire: (route) => (route === "slow" ? slow : true),
    });
    const done = lastValueFrom(input.pipe(maybeAsyncStagesOperator([["rate_limit", stage]]), toArray()));
    input
      .pipe(maybeAsyncStagesOperator([["rate_limit", stage]]))
      .subscribe((c) => seen.push(c.inbound.routeName));
    input.next({ ...ctx, inbound: { ...inbound, routeName: "slow" } });
    input.next(ctx);
    expect(seen).toEqual(["r"]);
    input.complete();
    release(true);
    const all = await done;
    expect(all.map((c) => c.inbound.routeName)).toEqual(["r", "slow"]);
    expect(await lastValueFrom(from([ctx]).pipe(maybeAsyncStagesOperator([]), toArray()))).toEqual([ctx]);
  });
});
