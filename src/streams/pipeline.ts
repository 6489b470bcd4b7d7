import { map, Subject } from "rxjs";
import type { PipelineCtx } from "./context.js";
import { acceptStage } from "./stages/accept.js";
import { type AuthDeps, authStage } from "./stages/auth.js";
import { type DeliverDeps, deliverStage, needsDirectDelivery } from "./stages/deliver.js";
import { type DispatchDeps, dispatchStage } from "./stages/dispatch.js";
import { durableOperator } from "./stages/durable.js";
import { eventCheckStage } from "./stages/events.js";
import { type FilterDeps, filterStage } from "./stages/filters.js";
import { type IdempotencyDeps, idempotencyStage } from "./stages/idempotency.js";
import { DirectDeliveries } from "./stages/inFlight.js";
import { maybeAsyncStagesOperator, type NamedMaybeAsyncStage } from "./stages/maybeAsync.js";
import { applyStage, asyncStageOperator, INTERNAL_ERROR, type StageFailure } from "./stages/operator.js";
import { parseStage } from "./stages/parse.js";
import { rateLimitStage, rateSpendStage } from "./stages/rateLimit.js";
import { type RouteLookupDeps, routeLookupStage } from "./stages/route.js";
import { type ScriptDeps, scriptStage } from "./stages/script.js";
import { bodySizeStage } from "./stages/size.js";
import type { MaybePromise } from "./stateUnavailable.js";
import { type Inbound, type Outcome, unavailableOutcome } from "./types.js";

const SHUTTING_DOWN = unavailableOutcome("Shutting down");

export interface PipelineDeps {
  readonly routes: RouteLookupDeps;
  maxBodyBytes(): number;
  /** The route's quota is spent: answer 429 before authentication. */
  isSpent(routeName: string): boolean;
  /** Spends one unit of the route's quota (only authenticated requests); a Promise when shared (Redis). */
  tryAcquire(routeName: string): MaybePromise<boolean>;
  msUntilReset?(routeName: string): number;
  readonly auth: AuthDeps;
  onPing?: (routeName: string, event: string) => void;
  readonly filters: FilterDeps;
  readonly script: ScriptDeps;
  readonly idempotency: IdempotencyDeps;
  readonly dispatch: DispatchDeps;
  readonly deliver: DeliverDeps;
  readonly onFailure: StageFailure;
  /** The state store's durability (docs/durability.md): 202s wait for it; absent, nothing waits (memory). */
  durable?(): Promise<void> | undefined;
  /** Bounds on the asynchronous stages. */
  readonly scriptConcurrency?: number;
  readonly deliveryConcurrency?: number;
}

export interface Pipeline {
  /** Runs processing steps 1–2 on the headers alone, before the body is read; an Outcome ends the request. */
  preflight(head: Inbound): Outcome | undefined;
  /** Pushes a request into the stream; `reply` is called exactly once with its answer. */
  push(inbound: Inbound, reply: (answer: Outcome) => void): void;
  /** `push` as a Promise (never rejects). */
  submit(inbound: Inbound): Promise<Outcome>;
  /** Stops taking requests and resolves once every request in flight has been answered. */
  close(): Promise<void>;
}

const hasScript = (ctx: PipelineCtx) => ctx.route?.route.script !== undefined;

/** The webhook request stream: the processing order of docs/webhook.md, one operator per stage. */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const route = routeLookupStage(deps.routes);
  const size = bodySizeStage(deps);
  const input = new Subject<Inbound>();
  const direct = new DirectDeliveries();
  const waiting = new Map<Inbound, (outcome: Outcome) => void>();
  // The request being pushed: when every stage it meets is synchronous (no script, no direct delivery)
  // it is answered inside `input.next` and never needs a `waiting` entry.
  let pushing: Inbound | undefined;
  let pushingReply: ((outcome: Outcome) => void) | undefined;

  // Consecutive stages run fused in one operator each (the processing order unchanged); the ones that may
  // answer with a Promise (shared state) stay synchronous when they answer synchronously.
  const checks: readonly NamedMaybeAsyncStage[] = [
    ["route", route],
    ["size", size],
    ["rate_limit", rateLimitStage(deps)],
    ["auth", authStage(deps.auth)],
    ["rate_spend", rateSpendStage(deps)],
    ["parse", parseStage],
    ["events", eventCheckStage(deps.onPing ? { onPing: deps.onPing } : {})],
    ["filters", filterStage(deps.filters)],
  ];
  const decisions: readonly NamedMaybeAsyncStage[] = [
    ["idempotency", idempotencyStage({ ...deps.idempotency, inFlight: (key) => direct.outcomeOf(key) })],
    ["accept", acceptStage],
    ["dispatch", dispatchStage({ ...deps.dispatch, beginDirect: (key) => direct.begin(key) })],
  ];
  const checked = input.pipe(
    map((inbound): PipelineCtx => ({ inbound })),
    maybeAsyncStagesOperator(checks, deps.onFailure),
  );
  const answered = checked.pipe(
    asyncStageOperator(
      "script",
      scriptStage(deps.script),
      deps.scriptConcurrency ?? 16,
      deps.onFailure,
      hasScript,
    ),
    maybeAsyncStagesOperator(decisions, deps.onFailure),
    deps.durable === undefined
      ? (ctxs) => ctxs
      : durableOperator({ durable: () => deps.durable?.(), forget: (key) => deps.dispatch.forget(key) }),
    asyncStageOperator(
      "deliver",
      deliverStage({ ...deps.deliver, endDirect: (key, ok) => direct.end(key, ok) }),
      deps.deliveryConcurrency ?? 64,
      deps.onFailure,
      needsDirectDelivery,
    ),
  );

  const done = new Promise<void>((resolve) => {
    answered.subscribe({
      next: (ctx) => {
        let reply: ((outcome: Outcome) => void) | undefined;
        if (ctx.inbound === pushing) {
          reply = pushingReply;
          pushing = undefined;
          pushingReply = undefined;
        } else {
          reply = waiting.get(ctx.inbound);
          waiting.delete(ctx.inbound);
        }
        try {
          reply?.(ctx.outcome ?? INTERNAL_ERROR);
        } catch (err) {
          // A failing writer (e.g. a vanished socket) must never error the shared stream.
          deps.onFailure("reply", err, ctx);
        }
      },
      error: (err: unknown) => {
        // Unreachable by construction (every stage catches); answer whoever waits rather than hang.
        if (pushing !== undefined && pushingReply !== undefined) waiting.set(pushing, pushingReply);
        pushing = undefined;
        pushingReply = undefined;
        deps.onFailure("pipeline", err, { inbound: [...waiting.keys()][0] as Inbound });
        for (const reply of waiting.values()) reply(INTERNAL_ERROR);
        waiting.clear();
        resolve();
      },
      complete: () => resolve(),
    });
  });
  let closed = false;

  return {
    preflight(head) {
      const ctx = applyStage(
        "size",
        size,
        applyStage("route", route, { inbound: head }, deps.onFailure),
        deps.onFailure,
      );
      return ctx.outcome;
    },
    push(inbound, reply) {
      if (closed) return reply(SHUTTING_DOWN);
      pushing = inbound;
      pushingReply = reply;
      input.next(inbound);
      if (pushing === inbound) {
        // Not answered yet: an asynchronous stage holds it and answers later through `waiting`.
        pushing = undefined;
        pushingReply = undefined;
        waiting.set(inbound, reply);
      }
    },
    submit(inbound) {
      return new Promise<Outcome>((resolve) => this.push(inbound, resolve));
    },
    async close() {
      closed = true;
      input.complete();
      await done;
    },
  };
}
