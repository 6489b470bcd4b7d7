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

interface SpawnEvent {
  type: "spawn";
  id: string;
  logic: AnyActorLogic;
  input: unknown;
}
type SpawnFn = (
  logic: AnyActorLogic,
  options: { id: string; systemId: string; input: unknown },
) => AnyActorRef;
interface StopEvent {
  type: "stopChild";
  id: string;
}

/**
 * The root of every long-lived actor (routes, coalescing groups, runs, cron, MCP connections, logins).
 * A child that fails is logged and removed; it never takes the gateway down.
 */
export function rootMachine(logger: Logger) {
  return setup({
    types: {
      context: {} as { children: Record<string, AnyActorRef> },
      events: {} as SpawnEvent | StopEvent,
    },
  }).createMachine({
    id: "gateway",
    context: { children: {} },
    on: {
      spawn: {
        actions: assign({
          children: ({ context, event, spawn }) => ({
            ...context.children,
            [event.id]: (spawn as unknown as SpawnFn)(event.logic, {
              id: event.id,
              systemId: event.id,
              input: event.input,
            }),
          }),
        }),
      },
      stopChild: {
        actions: [
          ({ context, event }) => context.children[event.id]?.stop(),
          assign({
            children: ({ context, event }) => {
              const { [event.id]: _gone, ...rest } = context.children;
              return rest;
            },
          }),
        ],
      },
      "*": {
        actions: [
          ({ event }) => {
            const type = (event as { type: string }).type;
            if (type.startsWith("xstate.error.actor.")) {
              logger.error(
                {
                  actor: type.slice("xstate.error.actor.".length),
                  err: (event as { error?: unknown }).error,
                },
                "[system] actor failed and was stopped",
              );
            }
          },
          assign({
            children: ({ context, event }) => {
              const type = (event as { type: string }).type;
              if (!type.startsWith("xstate.error.actor.") && !type.startsWith("xstate.done.actor."))
                return context.children;
              const id = type.replace(/^xstate\.(error|done)\.actor\./, "");
              const { [id]: _gone, ...rest } = context.children;
              return rest;
            },
          }),
        ],
      },
    },
  });
}

export interface GatewaySystem {
  readonly root: AnyActorRef;
  /** Starts `logic` as a supervised child of the root, addressable by `id` through `get`. */
  spawn<T extends AnyActorLogic>(id: string, logic: T, input?: InputFrom<T>): ActorRefFrom<T>;
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
    spawn<T extends AnyActorLogic>(id: string, logic: T, input?: InputFrom<T>) {
      if (root.getSnapshot().context.children[id] !== undefined) {
        throw new Error(`an actor with id "${id}" is already running`);
      }
      root.send({ type: "spawn", id, logic, input });
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
