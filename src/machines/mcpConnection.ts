import { type ActorRefFrom, and, assign, fromPromise, type SnapshotFrom, setup } from "xstate";

/**
 * One MCP server connection (spec mcp-client 3). No I/O here: `connect`, `ping` and `close` are actors
 * provided by name (the hub supplies real ones, tests fakes), and every timer is a named delay.
 *
 *   skipped                        enabled: false — nothing happens
 *   lazy ──CONNECT/CALL_START──▶ connecting ──ok──▶ connected ──idle/age (stdio)──▶ recycling ─▶ recycled
 *                                   │ fail/timeout      │ ping fails / session lost
 *                                   ▼                   ▼
 *                                 failed ──retryDelay──▶ connecting ◀──retryDelay── reconnecting ─▶ backoff
 *                                   ▲ (session closed)
 *                                failing ◀──LOGIN_NEEDED (a call found the saved OAuth login unusable)── connected
 *                    (on demand: lazy or recycled — failed waits for the next CONNECT instead)
 */

export type StartIn = "skipped" | "lazy" | "connecting";

export interface McpConnectionInput {
  readonly name: string;
  readonly kind: "stdio" | "http" | "sse";
  readonly startIn: StartIn;
  readonly connectTimeoutMs: number;
  /** 0 disables pings. */
  readonly keepaliveMs: number;
  /** 0 disables recycling on idle time (stdio only). */
  readonly idleMs: number;
  /** 0 disables recycling on age (stdio only). */
  readonly maxLifetimeMs: number;
  readonly cachedToolCount?: number;
}

export interface Connected {
  readonly session: unknown;
  readonly toolCount: number;
}

export interface McpConnectionContext extends McpConnectionInput {
  session: unknown;
  toolCount: number;
  lastError: string | undefined;
  /** Failed connects and connections lost before they were stable, in a row; drives the backoff. */
  attempt: number;
  inFlight: number;
  recyclePending: boolean;
  /** Why the process was last recycled: `idle_timeout_seconds` or `max_lifetime_seconds` (the hub logs it). */
  recycledBy: "idle" | "age" | undefined;
  retryNow: boolean;
  /**
   * Connected only for calls (`lazy`, not yet connected; a process recycled): a connect that fails is tried
   * again by the next call or reload, not in the background, which would spawn a process nobody asked for.
   */
  onDemand: boolean;
  /**
   * What the server was before the connect under way: `failed` (a connect failed) or `reconnecting` (its
   * connection was lost); kept through the connect that succeeds until that connection has stayed up
   * `STABLE_CONNECTION_MS` (when the backoff starts over), and unset by a recycle. `svc_mcp_servers` counts
   * a retry, and a connection not yet stable after one, so.
   */
  downAs: "failed" | "reconnecting" | undefined;
  /**
   * Connects that failed since the server was added (never reset): a call that waited for its turn (one
   * call at a time) while one of them ran takes its failure rather than starting a connect of its own.
   */
  connectsFailed: number;
}

export type McpConnectionEvent =
  | { type: "CONNECT" }
  | { type: "CALL_START" }
  | { type: "CALL_END" }
  | { type: "SESSION_LOST"; reason: string; immediate?: boolean }
  /**
   * A call found the server's saved login unusable (its refresh token refused): reconnecting would fail the
   * same way until the user logs in again, so the server is failed at once, with `reason` as its error.
   */
  | { type: "LOGIN_NEEDED"; reason: string }
  | { type: "STOP" };

const MAX_BACKOFF_MS = 300_000;

/**
 * A connection that stays up this long starts the backoff over. One that drops sooner (a server that
 * crashes right after its handshake) keeps growing it, instead of being respawned every second forever.
 */
export const STABLE_CONNECTION_MS = 30_000;

/** 1 s, 2 s, 4 s ... capped at 5 minutes. */
export function backoffMs(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempt - 1), MAX_BACKOFF_MS);
}

/** `lastError` when a connect outlasts connect_timeout (the hub adds a stdio server's stderr so far). */
export function connectTimeoutMessage(connectTimeoutMs: number): string {
  return `connect timed out after ${connectTimeoutMs / 1000} s (connect_timeout)`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const mcpConnectionMachine = setup({
  types: {
    context: {} as McpConnectionContext,
    events: {} as McpConnectionEvent,
    input: {} as McpConnectionInput,
  },
  actors: {
    connect: fromPromise<Connected, { name: string; attempt: number }>(async () => {
      throw new Error("connect actor not provided");
    }),
    ping: fromPromise<void, { session: unknown }>(async () => undefined),
    close: fromPromise<void, { session: unknown }>(async () => undefined),
  },
  actions: {
    started: assign({ inFlight: ({ context }) => context.inFlight + 1 }),
    ended: assign({ inFlight: ({ context }) => Math.max(0, context.inFlight - 1) }),
    recycledSession: assign({
      session: undefined,
      recyclePending: false,
      attempt: 0,
      onDemand: true,
      downAs: undefined,
    }),
    recycledByIdle: assign({ recycledBy: "idle" as const }),
    recycledByAge: assign({ recycledBy: "age" as const }),
    /** Provided anew by the hub, which knows what a stdio server wrote on stderr while it waited. */
    connectTimedOut: assign({ lastError: ({ context }) => connectTimeoutMessage(context.connectTimeoutMs) }),
  },
  delays: {
    connectTimeout: ({ context }) => context.connectTimeoutMs,
    keepalive: ({ context }) => context.keepaliveMs,
    idleTimeout: ({ context }) => context.idleMs,
    maxLifetime: ({ context }) => context.maxLifetimeMs,
    retryDelay: ({ context }) => backoffMs(context.attempt),
    stable: STABLE_CONNECTION_MS,
  },
  guards: {
    startSkipped: ({ context }) => context.startIn === "skipped",
    startLazy: ({ context }) => context.startIn === "lazy",
    keepaliveOn: ({ context }) => context.keepaliveMs > 0,
    idleRecycleOn: ({ context }) => context.kind === "stdio" && context.idleMs > 0 && context.inFlight === 0,
    ageRecycleOn: ({ context }) => context.kind === "stdio" && context.maxLifetimeMs > 0,
    idleNow: ({ context }) => context.inFlight === 0,
    busyNow: ({ context }) => context.inFlight > 0,
    /**
     * On SSE a call's answer comes on the event stream, which stays silent while the call runs: a proxy that
     * ends streams idle for a while (nginx: 60 s) would cut it, answer and all. A ping's answer is traffic.
     */
    pingsWaitForCalls: ({ context }) => context.inFlight > 0 && context.kind !== "sse",
    lastCall: ({ context }) => context.inFlight <= 1,
    lastCallAndRecyclePending: ({ context }) => context.inFlight <= 1 && context.recyclePending,
    retryNow: ({ context }) => context.retryNow,
    immediateLoss: ({ event }) => event.type === "SESSION_LOST" && event.immediate === true,
    wantedAgain: ({ context }) => context.retryNow || context.inFlight > 0,
    retriedInBackground: ({ context }) => !context.onDemand,
  },
}).createMachine({
  id: "mcpConnection",
  context: ({ input }) => ({
    ...input,
    session: undefined,
    toolCount: input.startIn === "lazy" ? (input.cachedToolCount ?? 0) : 0,
    lastError: undefined,
    attempt: 0,
    inFlight: 0,
    recyclePending: false,
    recycledBy: undefined,
    retryNow: false,
    onDemand: input.startIn === "lazy",
    downAs: undefined,
    connectsFailed: 0,
  }),
  initial: "start",
  on: {
    CALL_START: { actions: "started" },
    CALL_END: { actions: "ended" },
    STOP: { target: ".stopping" },
  },
  states: {
    start: {
      always: [
        { guard: "startSkipped", target: "skipped" },
        { guard: "startLazy", target: "lazy" },
        { target: "connecting" },
      ],
    },
    skipped: { on: { CONNECT: {}, CALL_START: {} } },
    lazy: {
      on: { CONNECT: "connecting", CALL_START: { target: "connecting", actions: "started" } },
    },
    connecting: {
      entry: assign({ retryNow: false }),
      invoke: {
        src: "connect",
        input: ({ context }) => ({ name: context.name, attempt: context.attempt }),
        onDone: {
          target: "connected",
          actions: assign({
            session: ({ event }) => event.output.session,
            toolCount: ({ event }) => event.output.toolCount,
            lastError: undefined,
            recyclePending: false,
            onDemand: false,
          }),
        },
        onError: {
          target: "failed",
          actions: assign({
            lastError: ({ event }) => errorText(event.error),
            attempt: ({ context }) => context.attempt + 1,
          }),
        },
      },
      after: {
        connectTimeout: {
          target: "failed",
          actions: ["connectTimedOut", assign({ attempt: ({ context }) => context.attempt + 1 })],
        },
      },
    },
    connected: {
      type: "parallel",
      on: {
        SESSION_LOST: {
          target: "reconnecting",
          actions: assign({
            lastError: ({ event }) => event.reason,
            retryNow: ({ event }) => event.immediate === true,
            attempt: ({ context }) => context.attempt + 1,
          }),
        },
        LOGIN_NEEDED: {
          target: "failing",
          actions: assign({
            lastError: ({ event }) => event.reason,
            attempt: ({ context }) => context.attempt + 1,
          }),
        },
      },
      after: {
        stable: { actions: assign({ attempt: 0, downAs: undefined }) },
        // Age recycling never interrupts a call: it waits for the last one to end.
        maxLifetime: [
          { guard: and(["ageRecycleOn", "idleNow"]), target: "recycling", actions: "recycledByAge" },
          { guard: "ageRecycleOn", actions: assign({ recyclePending: true }) },
        ],
      },
      states: {
        keepalive: {
          initial: "waiting",
          states: {
            waiting: {
              after: {
                keepalive: [
                  // A call in flight is the liveness check: its own timeout and loss detection cover it, and
                  // a server busy with it (a tool blocking its event loop) may not answer a ping until the
                  // call is done, so a ping then would close a healthy session under the call. On SSE pings
                  // go on (`pingsWaitForCalls`), and one that fails under a call gives no verdict (below).
                  { guard: and(["keepaliveOn", "pingsWaitForCalls"]), target: "waiting", reenter: true },
                  { guard: "keepaliveOn", target: "pinging" },
                ],
              },
            },
            pinging: {
              invoke: {
                src: "ping",
                input: ({ context }) => ({ session: context.session }),
                onDone: "waiting",
                onError: [
                  // A call started while the ping waited: the same reason, no verdict.
                  { guard: "busyNow", target: "waiting" },
                  {
                    target: "#mcpConnection.reconnecting",
                    actions: assign({
                      lastError: ({ event }) => `keepalive ping failed: ${errorText(event.error)}`,
                      attempt: ({ context }) => context.attempt + 1,
                    }),
                  },
                ],
              },
            },
          },
        },
        activity: {
          initial: "idle",
          states: {
            idle: {
              always: { guard: "busyNow", target: "busy" },
              after: {
                idleTimeout: {
                  guard: "idleRecycleOn",
                  target: "#mcpConnection.recycling",
                  actions: "recycledByIdle",
                },
              },
              on: { CALL_START: { target: "busy", actions: "started" } },
            },
            busy: {
              on: {
                CALL_START: { actions: "started" },
                CALL_END: [
                  {
                    guard: "lastCallAndRecyclePending",
                    target: "#mcpConnection.recycling",
                    actions: ["ended", "recycledByAge"],
                  },
                  { guard: "lastCall", target: "idle", actions: "ended" },
                  { actions: "ended" },
                ],
              },
            },
          },
        },
      },
    },
    recycling: {
      // Closing a process can take seconds (SDK: stdin EOF, then SIGTERM after 2 s): a call or CONNECT
      // arriving meanwhile is remembered and connects as soon as the old process is gone.
      on: { CONNECT: { actions: assign({ retryNow: true }) } },
      invoke: {
        src: "close",
        input: ({ context }) => ({ session: context.session }),
        onDone: [
          { guard: "wantedAgain", target: "connecting", actions: "recycledSession" },
          { target: "recycled", actions: "recycledSession" },
        ],
        onError: [
          { guard: "wantedAgain", target: "connecting", actions: "recycledSession" },
          { target: "recycled", actions: "recycledSession" },
        ],
      },
    },
    recycled: {
      on: { CONNECT: "connecting", CALL_START: { target: "connecting", actions: "started" } },
    },
    reconnecting: {
      entry: assign({ downAs: "reconnecting" as const }),
      // The process's exit (or the stream's end) is often seen before the call it cut off: that call's
      // `immediate` loss, a call or a reload arriving while the old session closes, still connect at once.
      on: {
        SESSION_LOST: { guard: "immediateLoss", actions: assign({ retryNow: true }) },
        CONNECT: { actions: assign({ retryNow: true }) },
      },
      invoke: {
        src: "close",
        input: ({ context }) => ({ session: context.session }),
        onDone: { target: "backoff", actions: assign({ session: undefined }) },
        onError: { target: "backoff", actions: assign({ session: undefined }) },
      },
    },
    backoff: {
      always: { guard: "retryNow", target: "connecting" },
      after: { retryDelay: "connecting" },
      on: { CONNECT: "connecting", SESSION_LOST: { guard: "immediateLoss", target: "connecting" } },
    },
    failing: {
      // Shown as failed while the session closes; a reload or call arriving meanwhile connects once it is
      // closed (a login may have been done since).
      on: { CONNECT: { actions: assign({ retryNow: true }) } },
      invoke: {
        src: "close",
        input: ({ context }) => ({ session: context.session }),
        onDone: { target: "failed", actions: assign({ session: undefined }) },
        onError: { target: "failed", actions: assign({ session: undefined }) },
      },
    },
    failed: {
      entry: assign({
        downAs: "failed" as const,
        connectsFailed: ({ context }) => context.connectsFailed + 1,
      }),
      // (Only `failing` leaves retryNow set: a connect asked for while its session closed.)
      always: { guard: "retryNow", target: "connecting" },
      after: { retryDelay: { guard: "retriedInBackground", target: "connecting" } },
      on: { CONNECT: "connecting" },
    },
    stopping: {
      invoke: {
        src: "close",
        input: ({ context }) => ({ session: context.session }),
        onDone: { target: "stopped", actions: assign({ session: undefined }) },
        onError: { target: "stopped", actions: assign({ session: undefined }) },
      },
      on: { STOP: {} },
    },
    stopped: { type: "final" },
  },
});

export type McpConnectionActor = ActorRefFrom<typeof mcpConnectionMachine>;
export type McpConnectionSnapshot = SnapshotFrom<typeof mcpConnectionMachine>;

export type ConnectionState =
  | "skipped"
  | "lazy"
  | "connecting"
  | "connected"
  | "recycled"
  | "reconnecting"
  | "failed"
  | "stopped";

/**
 * The state `svc_mcp_servers` counts a server under: its status name, except that a connect retrying a
 * server that failed or lost its connection counts as that, and so does the connection it makes until that
 * has stayed up `STABLE_CONNECTION_MS` (as long as the backoff takes to start over). A server that never
 * answers spends each try's `connect_timeout` connecting, and one that crashes right after each handshake is
 * connected for a moment at each try: counted so, either would leave `failed` or `reconnecting` at every
 * retry, and an alert on them held for some minutes (`for: 10m`) would start over each time, never firing.
 */
export function gaugeState(snapshot: McpConnectionSnapshot): ConnectionState {
  const state = connectionState(snapshot);
  return state === "connecting" || state === "connected" ? (snapshot.context.downAs ?? state) : state;
}

/** The status name shown by `svc mcp list` and the inspector. */
export function connectionState(snapshot: McpConnectionSnapshot): ConnectionState {
  const value = snapshot.value;
  const top = typeof value === "string" ? value : Object.keys(value)[0];
  switch (top) {
    case "skipped":
    case "lazy":
    case "connecting":
    case "connected":
    case "recycled":
    case "failed":
      return top;
    case "failing":
      return "failed";
    case "recycling":
      return "recycled";
    case "reconnecting":
    case "backoff":
      return "reconnecting";
    case "stopping":
    case "stopped":
      return "stopped";
    default:
      return "connecting";
  }
}
