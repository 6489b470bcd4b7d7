import { type ActorRefFrom, assign, enqueueActions, fromPromise, setup, waitFor } from "xstate";
import type { Logger } from "../io/log.js";
import type { AcceptedEvent } from "../streams/context.js";

/** Does one agent run for an accepted event: agent, then delivery. Rejects on failure. */
export type RunExecutor = (event: AcceptedEvent, signal: AbortSignal) => Promise<void>;

export interface RunsInput {
  readonly maxConcurrent: number;
  readonly execute: RunExecutor;
  readonly logger: Logger;
}

interface RunsContext extends RunsInput {
  /**
   * Waiting events, first in first out. Held by reference and mutated in place: a burst of thousands of
   * events must not copy the list on every enqueue. Capped by `enqueueRun` (RUN_QUEUE_CAP).
   */
  readonly waiting: AcceptedEvent[];
  /** Runs in progress by child actor id. */
  readonly active: Map<string, AcceptedEvent>;
  readonly running: number;
  readonly seq: number;
}

type RunsEvent = { type: "enqueue"; event: AcceptedEvent } | { type: string; error?: unknown };

const runLogic = fromPromise<void, { event: AcceptedEvent; execute: RunExecutor }>(({ input, signal }) =>
  input.execute(input.event, signal),
);

const RUN_DONE = /^xstate\.(done|error)\.actor\.(run-\d+)$/;

/** The bounded run queue (`agent.max_concurrent_runs`); each run is a child actor, a failing run is only logged. */
export const runsMachine = setup({
  types: { context: {} as RunsContext, events: {} as RunsEvent, input: {} as RunsInput },
  actors: { run: runLogic },
  actions: {
    remember: ({ context, event }) => {
      context.waiting.push((event as { event: AcceptedEvent }).event);
    },
    startWaiting: assign(({ context, spawn }) => {
      let { running, seq } = context;
      while (running < context.maxConcurrent && context.waiting.length > 0) {
        const event = context.waiting.shift() as AcceptedEvent;
        seq += 1;
        const id = `run-${seq}`;
        context.active.set(id, event);
        spawn("run", { id, input: { event, execute: context.execute } });
        running += 1;
      }
      return { running, seq };
    }),
  },
}).createMachine({
  id: "runs",
  context: ({ input }) => ({ ...input, waiting: [], active: new Map(), running: 0, seq: 0 }),
  on: {
    enqueue: [
      // At capacity the event only joins the list: no spawn, no context change.
      { guard: ({ context }) => context.running >= context.maxConcurrent, actions: "remember" },
      { actions: ["remember", "startWaiting"] },
    ],
    "*": {
      actions: [
        assign(({ context, event }) => {
          const match = RUN_DONE.exec(event.type);
          if (match === null) return {};
          const id = match[2] as string;
          const finished = context.active.get(id);
          if (finished === undefined) return {};
          context.active.delete(id);
          if (match[1] === "error") {
            context.logger.error(
              {
                route: finished.routeName,
                delivery_id: finished.deliveryId,
                err: describe((event as { error?: unknown }).error),
              },
              `[webhook] ${finished.routeName}: agent run failed`,
            );
          }
          return { running: context.running - 1 };
        }),
        // A finished child must leave the snapshot, or every later event copies an ever-growing children map.
        enqueueActions(({ event, enqueue }) => {
          const match = RUN_DONE.exec(event.type);
          if (match !== null) enqueue.stopChild(match[2] as string);
        }),
        "startWaiting",
      ],
    },
  },
});

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export type RunsRef = ActorRefFrom<typeof runsMachine>;

/**
 * Waiting runs kept at most; past it new agent events are answered 503 (retry later) instead of
 * growing memory without bound under sustained overload. A burst below the cap loses nothing.
 */
export const RUN_QUEUE_CAP = 10_000;

/** Enqueues unless the waiting list is at its cap; false means the event was not taken. */
export function enqueueRun(ref: RunsRef, event: AcceptedEvent, cap = RUN_QUEUE_CAP): boolean {
  if (ref.getSnapshot().context.waiting.length >= cap) return false;
  ref.send({ type: "enqueue", event });
  return true;
}

/** Waits until no run is waiting or running; resolves false when `timeoutMs` passes first. */
export async function drainRuns(ref: RunsRef, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(ref, (s) => s.context.running === 0 && s.context.waiting.length === 0, {
      timeout: timeoutMs,
    });
    return true;
  } catch {
    return false;
  }
}

/** Events not yet finished (running, then waiting), for the shutdown log. */
export function unfinishedRuns(ref: RunsRef): AcceptedEvent[] {
  const { active, waiting } = ref.getSnapshot().context;
  return [...active.values(), ...waiting];
}
