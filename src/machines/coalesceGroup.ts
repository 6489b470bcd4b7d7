import { assign, setup } from "xstate";
import { MAX_TIMER_MS } from "../config/timerSeconds.js";
import { KEY_PLACEHOLDER } from "../streams/coalesceKey.js";
import { foundText, lookupPath, type PathLookup } from "../streams/payloadPath.js";

/**
 * One coalescing group: the pending events of one route for one rendered key.
 *
 *   pending.quiet ──offer──▶ pending.quiet   (latest event replaced, quiet timer restarts)
 *   pending ──quietWindow | maxWait | flush──▶ dispatched (final; output = latest + superseded)
 *
 * `maxWait` lives on the outer `pending` state, so re-entering `quiet` on each offer never restarts it:
 * it is counted from the group's first event. The item is opaque to the machine.
 */
export interface CoalesceGroupInput {
  readonly item: unknown;
  readonly quietWindowMs: number;
  readonly maxWaitMs: number;
  /** A group reopened at a start: the events it had merged (default 1) and what was left of its quiet window. */
  readonly merged?: number;
  readonly quietLeftMs?: number;
}

export interface CoalesceGroupContext {
  readonly latest: unknown;
  /** Events merged into this group, the first one included. */
  readonly merged: number;
  readonly quietWindowMs: number;
  readonly maxWaitMs: number;
  /** The quiet window now running: what was left of it for a reopened group, until its next offer. */
  readonly quietLeftMs: number;
}

export interface CoalesceGroupOutput {
  readonly item: unknown;
  /** Earlier events replaced by `item` (merged - 1). */
  readonly superseded: number;
  readonly reason: "quiet_window" | "max_wait" | "flush";
}

/**
 * How long after a group fires its key remembers the event it dispatched (docs/coalescing-and-cron.md): an
 * event of the key received before that one, which reaches the coalescer only later, was superseded by its
 * run. An hour, as long as a delivery id is remembered: far past the longest an earlier request can still be
 * on its way (its body trickled up to the request deadline, its wait for a script slot, its script).
 */
export const LAST_DISPATCHED_MS = 60 * 60 * 1000;

/** Longer windows and max waits than a timer holds are capped here rather than dispatching at once. */
export const timerDelay = (ms: number): number => Math.min(ms, MAX_TIMER_MS);

export type CoalesceGroupEvent =
  /** `again`: a sender's retry of an event of the group answered 503, counted when it was first offered. */
  { type: "offer"; item: unknown; again?: boolean } | { type: "flush" };

export const coalesceGroupMachine = setup({
  types: {
    input: {} as CoalesceGroupInput,
    context: {} as CoalesceGroupContext & { reason: CoalesceGroupOutput["reason"] },
    events: {} as CoalesceGroupEvent,
    output: {} as CoalesceGroupOutput,
  },
  delays: {
    quietWindow: ({ context }) => timerDelay(context.quietLeftMs),
    maxWait: ({ context }) => timerDelay(context.maxWaitMs),
  },
  actions: {
    merge: assign(({ context, event }) =>
      event.type === "offer"
        ? {
            latest: event.item,
            merged: context.merged + (event.again === true ? 0 : 1),
            quietLeftMs: context.quietWindowMs,
          }
        : {},
    ),
  },
}).createMachine({
  id: "coalesceGroup",
  context: ({ input }) => ({
    latest: input.item,
    merged: input.merged ?? 1,
    quietWindowMs: input.quietWindowMs,
    maxWaitMs: input.maxWaitMs,
    quietLeftMs: input.quietLeftMs ?? input.quietWindowMs,
    reason: "quiet_window",
  }),
  initial: "pending",
  states: {
    pending: {
      initial: "quiet",
      after: {
        maxWait: { target: "dispatched", actions: assign({ reason: "max_wait" as const }) },
      },
      on: {
        flush: { target: "dispatched", actions: assign({ reason: "flush" as const }) },
      },
      states: {
        quiet: {
          after: {
            quietWindow: {
              target: "#coalesceGroup.dispatched",
              actions: assign({ reason: "quiet_window" as const }),
            },
          },
          on: {
            offer: { target: "quiet", reenter: true, actions: "merge" },
          },
        },
      },
    },
    dispatched: { type: "final" },
  },
  output: ({ context }) => ({ item: context.latest, superseded: context.merged - 1, reason: context.reason }),
});

/** The value as the sender wrote it: `9007199254740993` and `...992` (one JavaScript number) are two keys. */
function keyText(hit: PathLookup): string | undefined {
  if (!hit.found || hit.value === null || hit.value === undefined) return undefined;
  const text = foundText(hit);
  return text === "" ? undefined : text;
}

/** `event_type` names the resolved event type when the payload has no such key, as in prompt templates. */
const EVENT_TYPE = "event_type";

function keyPart(payload: unknown, path: string, event: string | undefined): string | undefined {
  const hit = lookupPath(payload, path);
  if (!hit.found && path === EVENT_TYPE && event !== undefined && event !== "") return event;
  return keyText(hit);
}

/**
 * The rendered key of `coalesce.key` (a bare dotted path, or a template with `{dotted.path}` placeholders) for a payload, or `undefined` when it does not resolve: a missing
 * path, a `null` or empty-string value, or (for a template) any placeholder left unresolved.
 * Scalars render as the sender wrote them, objects and lists as compact JSON; `event_type` falls back
 * to the resolved event type (`event`, from the sender's header).
 */
export function renderCoalesceKey(spec: string, payload: unknown, event?: string): string | undefined {
  if (!spec.includes("{")) return keyPart(payload, spec.trim(), event);
  let unresolved = false;
  const rendered = spec.replace(KEY_PLACEHOLDER, (_match, path: string) => {
    const text = keyPart(payload, path.trim(), event);
    if (text === undefined) unresolved = true;
    return text ?? "";
  });
  return unresolved ? undefined : rendered;
}
