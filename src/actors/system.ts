import {
  type ActorRefFrom,
  type AnyActorLogic,
  type AnyActorRef,
  assign,
  createActor,
  type InputFrom,
  type InspectionEvent,
  type Observer,
  setup,
} from "xstate";
import type { Logger } from "../io/log.js";

/** What the root does when a child fails: `stop` (logged, removed) or start it again, at most `max` times. */
export type RestartPolicy =
  | { readonly restart: "never" }
  | { readonly restart: "on-error"; readonly max: number };

const NEVER: RestartPolicy = { restart: "never" };

interface ChildSpec {
  readonly logic: AnyActorLogic;
  readonly input: unknown;
  readonly policy: RestartPolicy;
  /** Restarts so far. */
  readonly restarts: number;
}

interface SpawnEvent extends ChildSpec {
  type: "spawn";
  id: string;
}
interface StopEvent {
  type: "stopChild";
  id: string;
}
/** XState's own report of a spawned child that failed (what `onError` is for an invoked one). */
interface FailedEvent {
  type: `xstate.error.actor.${string}`;
  actorId: string;
  error: unknown;
}
/** XState's report of a child that reached its final state (a finished login); it is removed. */
interface DoneEvent {
  type: `xstate.done.actor.${string}`;
  actorId: string;
}
type RootEvent = SpawnEvent | StopEvent | FailedEvent | DoneEvent;

type SpawnFn = (
  logic: AnyActorLogic,
  options: { id: string; systemId: string; input: unknown },
) => AnyActorRef;

interface RootContext {
  children: Record<string, AnyActorRef>;
  specs: Record<string, ChildSpec>;
}

const without = <T>(record: Record<string, T>, id: string): Record<string, T> => {
  const { [id]: _gone, ...rest } = record;
  return rest;
};

/**
 * The root of every long-lived actor (routes, coalescer, runs, cron, MCP connections, logins). Each child
 * is spawned with its id and supervised through XState's own reports: a failure (`xstate.error.actor.<id>`,
 * the spawned child's `onError`) is logged and, by the child's restart policy, the child is removed or
 * started again; a child that finishes (`xstate.done.actor.<id>`) is removed. A failing child never takes
 * the gateway down.
 */
export function rootMachine(logger: Logger) {
  return setup({
    types: { context: {} as RootContext, events: {} as RootEvent },
  }).createMachine({
    id: "gateway",
    context: { children: {}, specs: {} },
    on: {
      spawn: {
        actions: assign(({ context, event, spawn }) => {
          const ref = (spawn as unknown as SpawnFn)(event.logic, {
            id: event.id,
            systemId: event.id,
            input: event.input,
          });
          const { logic, input, policy, restarts } = event;
          return {
            children: { ...context.children, [event.id]: ref },
            specs: { ...context.specs, [event.id]: { logic, input, policy, restarts } },
          };
        }),
      },
      stopChild: {
        actions: [
          ({ context, event }) => context.children[event.id]?.stop(),
          assign(({ context, event }) => ({
            children: without(context.children, event.id),
            specs: without(context.specs, event.id),
          })),
        ],
      },
      // Always taken: an unhandled error event would fail the root itself (XState's rule).
      "xstate.error.actor.*": {
        actions: [
          ({ context, event, self }) => {
            // A report about a child stopped meanwhile changes nothing.
            if (context.children[event.actorId] === undefined) return;
            const spec = context.specs[event.actorId];
            const again = spec !== undefined && canRestart(spec);
            logger.error(
              { actor: event.actorId, err: event.error },
              again ? "[system] actor failed and was restarted" : "[system] actor failed and was stopped",
            );
            // Spawned after this transition removed the failed one.
            if (again) self.send({ type: "spawn", id: event.actorId, ...spec, restarts: spec.restarts + 1 });
          },
          assign(({ context, event }) => ({
            children: without(context.children, event.actorId),
            specs: without(context.specs, event.actorId),
          })),
        ],
      },
      "xstate.done.actor.*": {
        actions: assign(({ context, event }) => ({
          children: without(context.children, event.actorId),
          specs: without(context.specs, event.actorId),
        })),
      },
    },
  });
}

const canRestart = (spec: ChildSpec) => spec.policy.restart === "on-error" && spec.restarts < spec.policy.max;

export interface GatewaySystem {
  readonly root: AnyActorRef;
  /**
   * Starts `logic` as a supervised child of the root, addressable by `id` through `get`; `policy` says
   * whether a failure stops it (default) or starts it again.
   */
  spawn<T extends AnyActorLogic>(
    id: string,
    logic: T,
    input?: InputFrom<T>,
    policy?: RestartPolicy,
  ): ActorRefFrom<T>;
  get<T extends AnyActorRef = AnyActorRef>(id: string): T | undefined;
  stopChild(id: string): void;
  shutdown(): void;
}

export interface SystemOptions {
  readonly logger: Logger;
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

export function startSystem(options: SystemOptions): GatewaySystem {
  const root = createActor(rootMachine(options.logger), options.inspect ? { inspect: options.inspect } : {});
  root.subscribe({
    error: (err) => options.logger.error({ err }, "[system] root actor failed"),
  });
  root.start();
  return {
    root,
    spawn<T extends AnyActorLogic>(
      id: string,
      logic: T,
      input?: InputFrom<T>,
      policy: RestartPolicy = NEVER,
    ) {
      if (root.getSnapshot().context.children[id] !== undefined) {
        throw new Error(`an actor with id "${id}" is already running`);
      }
      root.send({ type: "spawn", id, logic, input, policy, restarts: 0 });
      return root.getSnapshot().context.children[id] as ActorRefFrom<T>;
    },
    get<T extends AnyActorRef>(id: string) {
      return root.getSnapshot().context.children[id] as T | undefined;
    },
    stopChild(id: string) {
      root.send({ type: "stopChild", id });
    },
    shutdown() {
      root.stop();
    },
  };
}
