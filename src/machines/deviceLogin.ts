import { assign, setup } from "xstate";
import { failureOf, type LoginFailure, type LoginOutput, notProvided } from "./oauthLogin.js";

/**
 * Device authorization (RFC 8628), one actor per login. The named actors do the I/O
 * (`actors/oauth/deviceLogin.ts`); polling cadence and the overall bound are named delays.
 */
export interface DeviceLoginInput {
  readonly serverName: string;
  /** The command that logs in again (`svc mcp login <server> --flow device`, with the profile's `--profile`). */
  readonly loginCommand?: string;
  readonly job: unknown;
  /** `oauth.timeout` in ms (default 300 s); the code lifetime may cut it shorter. */
  readonly timeoutMs: number;
}

export interface DeviceCode {
  readonly userCode: string;
  readonly verificationUri: string;
  readonly verificationUriComplete?: string;
  /** Seconds; RFC 8628 default 5 when the server gives none. */
  readonly interval: number;
  /** Seconds the device code lives. */
  readonly expiresIn: number;
  readonly handle: unknown;
}

export type PollResult =
  | { readonly kind: "pending" }
  | { readonly kind: "slow_down"; readonly interval?: number }
  | { readonly kind: "tokens"; readonly tokens: unknown }
  | { readonly kind: "denied"; readonly message: string }
  /** No OAuth answer (network failure, 5xx, 429): retried with backoff a few times (RFC 8628 3.5). */
  /** `message` ends the login (with what to do); `reason` is the failure alone, for a retry's warning. */
  | { readonly kind: "unreachable"; readonly message: string; readonly reason: string }
  /**
   * Any other answer without an OAuth error (a firewall's 403 page, a proxy's 404): not the authorization
   * server's word on the code, so polling goes on at the interval until the code expires. `answer` is
   * "<endpoint> answered <status>: <excerpt>".
   */
  | { readonly kind: "not_oauth"; readonly status: number; readonly answer: string }
  | { readonly kind: "expired"; readonly message: string };

interface Context {
  readonly input: DeviceLoginInput;
  readonly device?: DeviceCode;
  readonly intervalMs: number;
  readonly polls: number;
  /** Consecutive polls that got no OAuth answer. */
  readonly unreachable: number;
  /** The last poll's answer, when it carried no OAuth error (`not_oauth`); cleared by an OAuth answer. */
  readonly notOAuth?: string | undefined;
  /** Whether an answer without an OAuth error was said already (once a login). */
  readonly notOAuthSaid?: boolean;
  readonly tokens?: unknown;
  readonly result?: unknown;
  readonly error?: LoginFailure;
}

/**
 * RFC 8628 3.5: `slow_down` adds five seconds to the polling interval for this and later requests;
 * a longer interval stated with it (GitHub) wins.
 */
export const SLOW_DOWN_STEP_MS = 5000;

/** Polls in a row without an OAuth answer that are retried (each after twice the previous wait). */
export const MAX_UNREACHABLE_POLLS = 3;

export function deviceDeadlineMs(input: DeviceLoginInput, device: DeviceCode | undefined): number {
  const lifetime = (device?.expiresIn ?? Number.POSITIVE_INFINITY) * 1000;
  return Math.min(input.timeoutMs, lifetime);
}

function timeoutFailure(context: Context): LoginFailure {
  const name = context.input.serverName;
  const command = context.input.loginCommand ?? `svc mcp login ${name} --flow device`;
  const codeLimited =
    (context.device?.expiresIn ?? Number.POSITIVE_INFINITY) * 1000 <= context.input.timeoutMs;
  // Polls the authorization server never answered: the code may have been approved meanwhile.
  const lastPoll =
    context.notOAuth !== undefined ? ` — the last poll got no OAuth answer (${context.notOAuth})` : "";
  return {
    message: codeLimited
      ? `${name}: the device code expired before it was approved${lastPoll} — run \`${command}\` again`
      : `${name}: no approval within ${Math.round(context.input.timeoutMs / 1000)} s (oauth.timeout)${lastPoll} — run \`${command}\` again, or raise oauth.timeout`,
  };
}

export const deviceLoginMachine = setup({
  types: {
    context: {} as Context,
    input: {} as DeviceLoginInput,
    output: {} as LoginOutput<unknown>,
  },
  actors: {
    requestCode: notProvided<DeviceCode, DeviceLoginInput>("requestCode"),
    poll: notProvided<PollResult, { device: DeviceCode; input: DeviceLoginInput }>("poll"),
    save: notProvided<unknown, { device: DeviceCode; tokens: unknown; input: DeviceLoginInput }>("save"),
  },
  actions: {
    /** Shows the verification URL and user code; the runner provides the terminal output. */
    announce: (_args, _params: { device: DeviceCode }) => {},
    /** A poll that got no OAuth answer is tried again after `waitMs`; the runner logs it. */
    retrying: (_args, _params: { reason: string; waitMs: number }) => {},
    /** The first poll answered without an OAuth error; polling goes on every `intervalMs`. The runner logs it. */
    notOAuth: (_args, _params: { status: number; answer: string; intervalMs: number }) => {},
    keepNotOAuth: assign({
      polls: ({ context }) => context.polls + 1,
      unreachable: 0,
      notOAuth: ({ event }) => (event as unknown as { output: { answer: string } }).output.answer,
      notOAuthSaid: true,
    }),
  },
  delays: {
    pollInterval: ({ context }: { context: Context }) => context.intervalMs,
    deadline: ({ context }: { context: Context }) => deviceDeadlineMs(context.input, context.device),
  },
}).createMachine({
  id: "deviceLogin",
  context: ({ input }) => ({ input, intervalMs: 5000, polls: 0, unreachable: 0 }),
  initial: "requesting",
  states: {
    requesting: {
      invoke: {
        src: "requestCode",
        input: ({ context }) => context.input,
        onDone: {
          target: "authorizing",
          actions: [
            assign({
              device: ({ event }) => event.output,
              intervalMs: ({ event }) => Math.max(1, event.output.interval) * 1000,
            }),
            { type: "announce", params: ({ event }) => ({ device: event.output }) },
          ],
        },
        onError: { target: "failed", actions: assign({ error: ({ event }) => failureOf(event.error) }) },
      },
    },
    authorizing: {
      initial: "waiting",
      after: {
        deadline: { target: "failed", actions: assign({ error: ({ context }) => timeoutFailure(context) }) },
      },
      states: {
        waiting: { after: { pollInterval: "polling" } },
        polling: {
          invoke: {
            src: "poll",
            input: ({ context }) => ({ device: context.device as DeviceCode, input: context.input }),
            onDone: [
              {
                guard: ({ event }) => event.output.kind === "pending",
                target: "waiting",
                actions: assign({
                  polls: ({ context }) => context.polls + 1,
                  unreachable: 0,
                  notOAuth: undefined,
                }),
              },
              {
                // Polled again at the same interval, without a bound: only the code's lifetime (or
                // oauth.timeout) ends the wait, as authorization_pending does. Said the first time only.
                guard: ({ context, event }) =>
                  event.output.kind === "not_oauth" && context.notOAuthSaid !== true,
                target: "waiting",
                actions: [
                  {
                    type: "notOAuth",
                    params: ({ context, event }) => ({
                      ...(event.output as { status: number; answer: string }),
                      intervalMs: context.intervalMs,
                    }),
                  },
                  "keepNotOAuth",
                ],
              },
              {
                guard: ({ event }) => event.output.kind === "not_oauth",
                target: "waiting",
                actions: "keepNotOAuth",
              },
              {
                guard: ({ context, event }) =>
                  event.output.kind === "unreachable" && context.unreachable < MAX_UNREACHABLE_POLLS,
                target: "waiting",
                actions: [
                  assign({
                    polls: ({ context }) => context.polls + 1,
                    unreachable: ({ context }) => context.unreachable + 1,
                    intervalMs: ({ context }) => context.intervalMs * 2,
                  }),
                  {
                    type: "retrying",
                    params: ({ context, event }) => ({
                      reason: (event.output as { reason: string }).reason,
                      waitMs: context.intervalMs,
                    }),
                  },
                ],
              },
              {
                guard: ({ event }) => event.output.kind === "slow_down",
                target: "waiting",
                actions: assign({
                  polls: ({ context }) => context.polls + 1,
                  unreachable: 0,
                  notOAuth: undefined,
                  intervalMs: ({ context, event }) =>
                    Math.max(
                      context.intervalMs + SLOW_DOWN_STEP_MS,
                      ((event.output as { interval?: number }).interval ?? 0) * 1000,
                    ),
                }),
              },
              {
                guard: ({ event }) => event.output.kind === "tokens",
                target: "#deviceLogin.saving",
                actions: assign({ tokens: ({ event }) => (event.output as { tokens: unknown }).tokens }),
              },
              {
                target: "#deviceLogin.failed",
                actions: assign({
                  error: ({ event }) => ({
                    message: (event.output as { message?: string }).message ?? "device login failed",
                  }),
                }),
              },
            ],
            onError: {
              target: "#deviceLogin.failed",
              actions: assign({ error: ({ event }) => failureOf(event.error) }),
            },
          },
        },
      },
    },
    saving: {
      invoke: {
        src: "save",
        input: ({ context }) => ({
          device: context.device as DeviceCode,
          tokens: context.tokens,
          input: context.input,
        }),
        onDone: { target: "done", actions: assign({ result: ({ event }) => event.output }) },
        onError: { target: "failed", actions: assign({ error: ({ event }) => failureOf(event.error) }) },
      },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
  output: ({ context }) =>
    context.error !== undefined ? { ok: false, error: context.error } : { ok: true, result: context.result },
});
