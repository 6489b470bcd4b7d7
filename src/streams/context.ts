import type { Route } from "../config/sections/webhook.js";
import type { DirectOutcome } from "./idempotencyRecord.js";
import type { Reply } from "./reply.js";
import type { Inbound, Outcome } from "./types.js";

/** A route as the pipeline uses it: the configuration entry plus what the request path needs resolved. */
export interface ResolvedRoute {
  readonly name: string;
  readonly route: Route;
  /** Route secret, else the global one; `undefined` never reaches the pipeline (startup rule 1). */
  readonly secret: string;
  /** The profile that runs the route (`default` when unbound). */
  readonly profile: string;
  /**
   * The route's standing in the route table that resolved it (a dynamic route's: the table current at its
   * lookup): retired once a reload replaces that table. Until then, looking a static route up again gives
   * this same route under the same profile rule, so a request admitted on its headers keeps it. Retired,
   * absent, or on a dynamic route (which may change at any lookup), the request's route is looked up again
   * once its body has arrived. The dispatch stage reads it too: an event whose route a reload retired while
   * the event was in its script is not grouped, since the reload flushed the groups.
   */
  readonly standing?: RouteStanding;
  /** A dynamic subscription's route (`svc webhook subscribe`), not config.yaml's: looked up again at each request. */
  readonly dynamic?: true;
}

export interface RouteStanding {
  readonly retired: boolean;
}

/** Everything a request has gathered so far; each stage adds its part and passes it on. */
export interface PipelineCtx {
  readonly inbound: Inbound;
  /** The request's way back: the pipeline answers through it once the last stage is done. */
  readonly reply?: Reply;
  /** Resolved by the route stage, or at admission on the headers when still current (not looked up again). */
  readonly route?: ResolvedRoute;
  /** The body limit the declared `Content-Length` passed at admission: unless it changed, only the body is measured. */
  readonly declaredSizeCheckedAgainst?: number;
  /**
   * A form body's `payload` field when the signature covered only it (Gitea, Forgejo and Gogs sign the JSON
   * they put in the form, not the form): the parse stage reads the payload from exactly these bytes.
   */
  readonly signedFormPayload?: Buffer;
  /** The parsed JSON body; after the script stage, the script's replacement. */
  readonly payload?: Record<string, unknown> | undefined;
  /** Resolved event type; `undefined` when the request names none. */
  readonly event?: string | undefined;
  readonly deliveryId?: string;
  /** The request named no delivery id: `deliveryId` is one the gateway made (see `AcceptedEvent.madeId`). */
  readonly madeId?: true | undefined;
  /** Set by the accept stage: the event with its prompt and extras rendered. */
  readonly accepted?: AcceptedEvent;
  /**
   * A repeated delivery id whose original is still being delivered directly: the answer waits for it
   * (true: delivered, so `duplicate`; false: failed, so 502 like the original; "stopped": the gateway's
   * stop ended its wait, so 503 Shutting down like the original).
   */
  readonly duplicateOf?: Promise<DirectOutcome>;
  /** The terminal answer, once a stage has decided it; later stages pass the context through untouched. */
  readonly outcome?: Outcome;
  /**
   * Why the stage that decided `outcome` refused or ignored the request, for the delivery history; never
   * sent. The auth stage's reason (a header missing, a signature that does not match, a stale timestamp),
   * never secret material: no secret, no signature sent or expected; the events stage's fixed text (the
   * event type is read from the record when shown); the filter that did not match, as config.yaml names it;
   * what the route's script did (its exit, never its output). Strings that exist before the request.
   */
  readonly refusal?: string;
}

/**
 * `{ ...ctx, ...part }`, as one object shape: every key of the context copied by name (absent ones as
 * undefined), then `part`'s. A spread or `Object.assign({}, ctx, part)` copies each source generically
 * (V8's `SetDataProperties`, ~0.5 µs per filter-ignored request over its six stages) and makes a context
 * of another shape at each stage, so the stages' property loads see many shapes; this makes one shape for
 * every context after the first stage.
 */
export function withCtx(ctx: PipelineCtx, part: Partial<PipelineCtx>): PipelineCtx {
  // Every key named (the type refuses one left out): a key added to PipelineCtx is added here.
  const next: { [K in keyof PipelineCtx]-?: PipelineCtx[K] | undefined } = {
    inbound: ctx.inbound,
    reply: ctx.reply,
    route: ctx.route,
    declaredSizeCheckedAgainst: ctx.declaredSizeCheckedAgainst,
    signedFormPayload: ctx.signedFormPayload,
    payload: ctx.payload,
    event: ctx.event,
    deliveryId: ctx.deliveryId,
    madeId: ctx.madeId,
    accepted: ctx.accepted,
    duplicateOf: ctx.duplicateOf,
    outcome: ctx.outcome,
    refusal: ctx.refusal,
  };
  // Absent keys are undefined here: no stage tells the two apart.
  return Object.assign(next, part) as PipelineCtx;
}

/**
 * A stage's end of the request with why it refused or ignored it (`refusal`, for the delivery history): the
 * context the pipeline would make of the bare answer (`withCtx(ctx, { outcome })`) with one key more, so a
 * refusal costs what a bare answer did.
 */
export function refusedWith(ctx: PipelineCtx, outcome: Outcome, refusal: string): PipelineCtx {
  return withCtx(ctx, { outcome, refusal });
}

/** A stage: enrich the context, or end the request with an Outcome. */
export type Stage = (ctx: PipelineCtx) => PipelineCtx | Outcome;
export type AsyncStage = (ctx: PipelineCtx) => Promise<PipelineCtx | Outcome>;

/** An event that passed every check, with its prompt and delivery extras rendered. */
export interface AcceptedEvent {
  readonly routeName: string;
  readonly route: Route;
  readonly profile: string;
  /** Resolved event type, `undefined` when the request names none. */
  readonly event: string | undefined;
  readonly deliveryId: string;
  /**
   * The request named no delivery id, so `deliveryId` is one the gateway made: no sender can send it again,
   * so nothing keeps it for idempotency (it would only push the senders' ids out of the cache). Absent on
   * an event whose sender named its id, and on one stored by a version that did not record this.
   */
  readonly madeId?: true | undefined;
  readonly payload: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
  readonly prompt: string;
  readonly extra: Readonly<Record<string, string>>;
  /**
   * The keys of `extra` whose template left a placeholder as written (the payload has no such field).
   * Absent on an event stored by a version that did not record them: its text alone then tells.
   */
  readonly unfilled?: readonly string[] | undefined;
  readonly receivedAt: number;
  /** `Inbound.receivedTick`: which of two events of a coalescing group is the latest, across a clock step. */
  readonly receivedTick?: number | undefined;
}

const NO_FIELDS: Readonly<Record<string, never>> = Object.freeze({});

/**
 * What is kept of an accepted event once its prompt and extras are rendered: everything a run reads (route,
 * ids, prompt, extras, times), not the parsed payload or the headers (empty objects in their place). What a
 * pending coalescing group keeps (100,000 of them fit in a small heap) and what a request waiting for its
 * journal sync holds. A literal, not a spread: a spread copy costs ~3× the memory.
 */
export function renderedOnly(event: AcceptedEvent): AcceptedEvent {
  return {
    routeName: event.routeName,
    route: event.route,
    profile: event.profile,
    event: event.event,
    deliveryId: event.deliveryId,
    madeId: event.madeId,
    payload: NO_FIELDS,
    headers: NO_FIELDS,
    prompt: event.prompt,
    extra: event.extra,
    unfilled: event.unfilled,
    receivedAt: event.receivedAt,
    receivedTick: event.receivedTick,
  };
}

/**
 * Hooks for the route modes built elsewhere (coalescing, event-triggered cron jobs), injected into
 * `startGateway({ eventModes })`. Dispatch calls them synchronously after idempotency:
 * - `coalesce(event)` for routes with `coalesce`: `"coalesced"` answers 202 `{status: "coalesced"}`, and so
 *   does `{supersededBy}` (a run already dispatched superseded the event: `Superseded`);
 *   `"not_grouped"` (the key did not resolve) dispatches an agent run at once (202 accepted).
 *   Absent hook: the route runs as a plain agent route (logged once).
 * - `fireCronJob(jobRef, event)` for routes with `cron_job`: both `"fired"` and `{skipped}` (paused or
 *   disabled job, which the hook logs) answer 202 accepted, the job runs in the background;
 *   `"unreadable"` (the cron store cannot be read) answers 503, so the sender retries.
 *   Absent hook: 202 accepted, and a log line says cron is not available.
 */
/**
 * A coalescing route's event that joined no group: a run its key's group already dispatched, of an event
 * received after it (`supersededBy`, that event's delivery id), superseded it. Answered 202 coalesced, it
 * never runs; the delivery history says so (`SUPERSEDED_REASON`).
 */
export interface Superseded {
  readonly supersededBy: string;
}

/** What offering an event to its coalescing group did (`EventModes.coalesce`). */
export type Coalesced = "coalesced" | "not_grouped" | Superseded;

export interface EventModes {
  /** A Promise when the groups are shared (Redis); a rejection answers 503. */
  coalesce?: (event: AcceptedEvent) => Coalesced | Promise<Coalesced>;
  /**
   * `coalesce` for an event whose route a reload retired while it was in the pipeline (groups in memory only:
   * a reload does not flush shared ones): it opens no group, and is `not_grouped` (it runs at once) unless a
   * run its key's group already dispatched was of an event received after it (`Coalescer.offerRetired`).
   */
  coalesceRetired?: (event: AcceptedEvent) => Coalesced;
  /**
   * The run queue took the run of an event `coalesceRetired` answered `not_grouped` (called in the same turn):
   * its key remembers it (`Coalescer.retiredQueued`). Not called for one refused (503).
   */
  retiredQueued?: (event: AcceptedEvent) => void;
  /** `queue_full`: the run queue is at its cap; the event is answered 503 like an agent event. */
  fireCronJob?: (jobRef: string, event: AcceptedEvent) => CronFireResult | Promise<CronFireResult>;
}

/** What firing a route's cron job did: `queue_full` and `unreadable` (the store) are answered 503. */
export type CronFireResult = "fired" | CronSkipped | "queue_full" | "unreadable";

/**
 * A fire that dropped the event (the job paused, disabled, missing or invalid), with why (`cron_job nightly
 * is paused; event dropped`): the delivery history's reason, so the 202 does not read as a run to come.
 */
export interface CronSkipped {
  readonly skipped: string;
}
