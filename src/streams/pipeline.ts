import { Subject } from "rxjs";
import type { PipelineCtx, ResolvedRoute } from "./context.js";
import { SHUTTING_DOWN, UNKNOWN_ROUTE } from "./frontAnswers.js";
import { createIdempotencyRecord, type IdempotencyStore } from "./idempotencyRecord.js";
import { OpenReplies, Reply, type SendAnswer } from "./reply.js";
import { acceptStage } from "./stages/accept.js";
import { type AuthDeps, authStage } from "./stages/auth.js";
import { decodeStage } from "./stages/decode.js";
import { type DeliverDeps, deliverStage, needsDirectDelivery } from "./stages/deliver.js";
import { type DispatchDeps, dispatchStage } from "./stages/dispatch.js";
import { durableOperator, promisesKept } from "./stages/durable.js";
import { eventCheckStage } from "./stages/events.js";
import { type FilterDeps, filterStage } from "./stages/filters.js";
import { type IdempotencyDeps, idempotencyStage, seenKey } from "./stages/idempotency.js";
import { maybeAsyncStagesOperator, type NamedMaybeAsyncStage } from "./stages/maybeAsync.js";
import { asyncStageOperator, INTERNAL_ERROR, type StageFailure } from "./stages/operator.js";
import { parseStage } from "./stages/parse.js";
import { rateLimited, rateLimitStage } from "./stages/rateLimit.js";
import { type RouteLookupDeps, routeFinder, routeLookupStage } from "./stages/route.js";
import { type ScriptDeps, scriptStage } from "./stages/script.js";
import { bodySizeStage, declaredOver, PAYLOAD_TOO_LARGE } from "./stages/size.js";
import type { MaybePromise } from "./stateUnavailable.js";
import type { Inbound, Outcome } from "./types.js";

/** The answer to a request that arrives while the gateway stops (also to `/health` then). */

export interface PipelineDeps {
  readonly routes: RouteLookupDeps;
  maxBodyBytes(): number;
  /** The route's quota is known to be spent: answer 429 without counting. */
  isSpent(routeName: string): boolean;
  /** Spends one unit of the route's quota (every request past the body size check); a Promise when shared (Redis). */
  tryAcquire(routeName: string): MaybePromise<boolean>;
  msUntilReset?(routeName: string): number;
  readonly auth: AuthDeps;
  onPing?: (routeName: string, event: string) => void;
  readonly filters: FilterDeps;
  readonly script: ScriptDeps;
  /** `shared`: a store other instances use too (direct deliveries under way are told to them). */
  readonly idempotency: IdempotencyDeps & {
    readonly shared?: Pick<IdempotencyStore, "begin" | "delivered" | "stopped" | "elsewhere">;
  };
  readonly dispatch: DispatchDeps;
  readonly deliver: DeliverDeps;
  readonly onFailure: StageFailure;
  /** The state store's durability (docs/durability.md): 202s wait for it; absent, nothing waits (memory). */
  durable?(): Promise<void> | undefined;
  /**
   * Called once answers that promise something kept have been written: the 202s one `durable()` promise
   * held (see DurableDeps.answered), a direct delivery's `200 delivered`. The delivery history writes their
   * lines then, not at the end of the turn, so a gateway killed before it ends still shows them.
   */
  answeredKept?(): void;
  /**
   * With a shared store (Redis) nothing waits for a sync: each kept answer (202, 200 duplicate) comes out of
   * the promise of its own store's reply (the run stored, the group joined). `afterReactions(write)` runs
   * `write` once the promise reactions under way have all run (process.nextTick), and `answeredKept` is
   * called there: the lines of the answers one read of the store's replies released are written with them,
   * in one write, not at the end of the turn.
   */
  afterReactions?(write: () => void): void;
  /** Bounds on the asynchronous stages. */
  readonly scriptConcurrency?: number;
  readonly deliveryConcurrency?: number;
}

/** What admission made of a request's headers: an answer that ends the request, or what the stream reuses. */
export interface Admission {
  readonly outcome?: Outcome;
  /** The route found; the stream keeps it unless it was retired meanwhile or is a subscription's (`ResolvedRoute.standing`). */
  readonly route?: ResolvedRoute;
  /** The body limit the declared size passed; the stream checks the declared size again only if it changed. */
  readonly maxBodyBytes?: number;
}

export interface Pipeline {
  /**
   * Runs processing steps 1–2 (route, declared size) on the headers alone, before the body is read. An
   * `outcome` ends the request; otherwise hand the result to `push`, which then does not redo them
   * unless the routes or the body limit changed in between (then it answers what a fresh lookup says).
   */
  admit(head: Inbound): Admission;
  /**
   * Step 3 on the headers alone, for a request `admit` let through: the 429 of a route whose quota is
   * already known to be spent (counting nothing, as the stage answers it), so its body is never read;
   * undefined while the quota lasts, and once the stream is closed (the stop's 503 comes first).
   */
  spent(head: Inbound): Outcome | undefined;
  /** `admit`, answering only: an Outcome ends the request. */
  preflight(head: Inbound): Outcome | undefined;
  /**
   * Pushes a request into the stream; `reply` is called exactly once with its answer (and, for a refusal
   * with a reason, that reason as its third argument: see `SendAnswer`). `admitted` (from
   * `admit` on the same request's headers) spares the route lookup and the declared-size check while
   * they would answer the same.
   */
  push(inbound: Inbound, reply: SendAnswer, admitted?: Admission): void;
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
  const input = new Subject<PipelineCtx>();
  const open = new OpenReplies();
  const record = createIdempotencyRecord({
    ...deps.idempotency.shared,
    checkAndAdd: (key) => deps.idempotency.checkAndAdd(key),
    forget: (key) => deps.deliver.forget(key),
  });

  // Consecutive stages run fused in one operator each (the processing order unchanged); the ones that may
  // answer with a Promise (shared state) stay synchronous when they answer synchronously. A request
  // admitted with a route still current carries it (see `push`), and is not looked up again.
  const checks: readonly NamedMaybeAsyncStage[] = [
    ["route", (ctx) => (ctx.route === undefined ? route(ctx) : ctx)],
    ["size", size],
    ["rate_limit", rateLimitStage(deps)],
    ["decode", decodeStage(deps)],
    ["auth", authStage(deps.auth)],
    ["parse", parseStage],
    ["events", eventCheckStage(deps.onPing ? { onPing: deps.onPing } : {})],
    ["filters", filterStage(deps.filters)],
  ];
  const decisions: readonly NamedMaybeAsyncStage[] = [
    [
      "idempotency",
      idempotencyStage({
        checkAndAdd: record.checkAndAdd,
        randomId: () => deps.idempotency.randomId(),
        inFlight: record.outcomeOf,
        ...(deps.idempotency.onWaitsForOriginal === undefined
          ? {}
          : { onWaitsForOriginal: deps.idempotency.onWaitsForOriginal }),
      }),
    ],
    ["accept", acceptStage],
    ["dispatch", dispatchStage({ ...deps.dispatch, beginDirect: record.begin })],
  ];
  // A request that fails (500) after its delivery id was recorded forgets it again, as a 503 does: its
  // event was neither run nor stored, so the sender's retry must be processed, not answered `duplicate`.
  // A duplicate (`duplicateOf`: waiting for its original) recorded nothing of its own.
  const failedAfterRecord: StageFailure = (stage, err, ctx) => {
    deps.onFailure(stage, err, ctx);
    if (stage === "idempotency" || ctx.deliveryId === undefined || ctx.duplicateOf !== undefined) return;
    const routeName = ctx.route?.name;
    if (routeName !== undefined) deps.dispatch.forget(seenKey(routeName, ctx.deliveryId));
  };
  const checked = input.pipe(maybeAsyncStagesOperator(checks, deps.onFailure));
  const answered = checked.pipe(
    asyncStageOperator(
      "script",
      scriptStage(deps.script),
      deps.scriptConcurrency ?? 16,
      deps.onFailure,
      hasScript,
    ),
    maybeAsyncStagesOperator(decisions, failedAfterRecord),
    deps.durable === undefined
      ? (ctxs) => ctxs
      : durableOperator({
          durable: () => deps.durable?.(),
          forget: (key) => deps.dispatch.forget(key),
          withdrawn: (event) => deps.dispatch.withdraw?.(event),
          kept: (event) => deps.dispatch.kept?.(event),
          answered: () => deps.answeredKept?.(),
        }),
    asyncStageOperator(
      "deliver",
      deliverStage({ ...deps.deliver, endDirect: record.end }),
      deps.deliveryConcurrency ?? 64,
      deps.onFailure,
      needsDirectDelivery,
    ),
  );

  // The kept answers a shared store's replies released (see afterReactions): their lines in one write after them.
  let keptWriteDue = false;
  const writeKept = () => {
    keptWriteDue = false;
    deps.answeredKept?.();
  };
  const afterReactions = deps.afterReactions;
  const keptAnswered =
    deps.answeredKept === undefined || afterReactions === undefined
      ? undefined
      : () => {
          if (keptWriteDue) return;
          keptWriteDue = true;
          afterReactions(writeKept);
        };

  let broken = false; // the stream errored (unreachable): whatever is pushed is answered 500
  const done = new Promise<void>((resolve) => {
    answered.subscribe({
      next: (ctx) => {
        try {
          ctx.reply?.answer(ctx.outcome ?? INTERNAL_ERROR, ctx.refusal);
          if ((ctx.outcome?.body as { status?: unknown } | undefined)?.status === "delivered")
            deps.answeredKept?.();
          else if (keptAnswered !== undefined && promisesKept(ctx)) keptAnswered();
        } catch (err) {
          // A failing writer (e.g. a vanished socket) must never error the shared stream.
          deps.onFailure("reply", err, ctx);
        }
      },
      error: (err: unknown) => {
        // Unreachable by construction (every stage catches); answer whoever waits rather than hang.
        broken = true;
        const waiting = open.all();
        deps.onFailure("pipeline", err, { inbound: waiting[0]?.inbound as Inbound });
        for (const reply of waiting) {
          try {
            reply.answer(INTERNAL_ERROR);
          } catch {
            // The writer is gone; nothing more to do for this one.
          }
        }
        resolve();
      },
      complete: () => resolve(),
    });
  });
  let closed = false;

  // Steps 1–2 on the headers alone: the route and size stages' answers, without a context to carry.
  const findRoute = routeFinder(deps.routes);
  const admit = (head: Inbound): Admission => {
    let found: ResolvedRoute | undefined;
    try {
      found = findRoute(head);
    } catch (err) {
      deps.onFailure("route", err, { inbound: head });
      return { outcome: INTERNAL_ERROR };
    }
    if (found === undefined) return { outcome: UNKNOWN_ROUTE };
    let max: number;
    try {
      max = deps.maxBodyBytes();
    } catch (err) {
      deps.onFailure("size", err, { inbound: head, route: found });
      return { outcome: INTERNAL_ERROR };
    }
    if (declaredOver(head.headers, max) || head.body.length > max) return { outcome: PAYLOAD_TOO_LARGE };
    return { route: found, maxBodyBytes: max };
  };

  return {
    admit,
    spent(head) {
      if (closed || !deps.isSpent(head.routeName)) return undefined;
      return rateLimited(deps.msUntilReset?.(head.routeName));
    },
    preflight: (head) => admit(head).outcome,
    push(inbound, reply, admitted) {
      if (closed) return reply(SHUTTING_DOWN);
      const carried = new Reply(inbound, reply, open);
      // The admitted route is kept only while its table is current; otherwise the route stage looks it
      // up again, so a route removed or replaced while the body arrived answers as it does now.
      const kept = admitted?.route;
      input.next(
        kept !== undefined &&
          kept.standing?.retired === false &&
          kept.dynamic !== true &&
          admitted?.maxBodyBytes !== undefined
          ? { inbound, reply: carried, route: kept, declaredSizeCheckedAgainst: admitted.maxBodyBytes }
          : { inbound, reply: carried },
      );
      if (broken) carried.answer(INTERNAL_ERROR);
      else carried.keepIfUnanswered();
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
