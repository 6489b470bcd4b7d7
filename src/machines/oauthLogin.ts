import { assign, fromPromise, setup } from "xstate";

/**
 * Browser login (authorization code + PKCE), one actor per login. I/O lives in the named actors,
 * provided by `actors/oauth/browserLogin.ts`; the five-minute wait is the named delay `loginTimeout`.
 */
export interface OAuthLoginInput {
  readonly serverName: string;
  /** The command that logs in again (`svc mcp login <server>`, with the profile's `--profile`). */
  readonly loginCommand?: string;
  /** Opaque to the machine: what the actors need (entry, store, options). */
  readonly job: unknown;
  readonly timeoutMs: number;
}

export interface PreparedLogin {
  readonly authorizationUrl: string;
  /** True when the client_id is a client metadata document URL (timeout message points to `cimd: false`). */
  readonly usesDocument: boolean;
  /** Opaque handles the later actors need (callback listener, verifier, metadata, client). */
  readonly handle: unknown;
}

export interface LoginFailure {
  readonly message: string;
  readonly cause?: unknown;
  /** The authorization server refused the client metadata document (`invalid_client`). */
  readonly documentRejected?: boolean;
}

export type LoginOutput<R> =
  | { readonly ok: true; readonly result: R }
  | { readonly ok: false; readonly error: LoginFailure };

interface Context {
  readonly input: OAuthLoginInput;
  readonly prepared?: PreparedLogin;
  readonly code?: unknown;
  readonly result?: unknown;
  readonly error?: LoginFailure;
  readonly documentRetried: boolean;
}

/** Placeholder for an I/O actor the runner must provide (machines stay free of I/O). */
export function notProvided<O, I>(name: string) {
  return fromPromise<O, I>(async () => {
    throw new Error(`actor "${name}" was not provided`);
  });
}

export interface PrepareInput {
  readonly input: OAuthLoginInput;
  readonly documentRetried: boolean;
}
export interface ExchangeInput {
  readonly prepared: PreparedLogin;
  readonly code: unknown;
}

export function failureOf(error: unknown): LoginFailure {
  if (error !== null && typeof error === "object" && "documentRejected" in error) {
    return {
      message: String((error as { message?: unknown }).message),
      cause: error,
      documentRejected: true,
    };
  }
  return { message: error instanceof Error ? error.message : String(error), cause: error };
}

export function timeoutMessage(
  serverName: string,
  usesDocument: boolean,
  minutes: number,
  command = `svc mcp login ${serverName}`,
): string {
  const base = `${serverName}: login timed out after ${minutes} minute${minutes === 1 ? "" : "s"} waiting for the browser redirect.`;
  return usesDocument
    ? `${base} The authorization server may be unable to fetch or validate the client metadata document (oauth.client_metadata_url); set \`cimd: false\` under mcp_servers.${serverName}.oauth to use dynamic client registration instead, then run \`${command}\`.`
    : `${base} Run \`${command}\` again and finish the login in the browser.`;
}

export const oauthLoginMachine = setup({
  types: {
    context: {} as Context,
    input: {} as OAuthLoginInput,
    output: {} as LoginOutput<unknown>,
  },
  actors: {
    prepare: notProvided<PreparedLogin, PrepareInput>("prepare"),
    awaitRedirect: notProvided<unknown, PreparedLogin>("awaitRedirect"),
    exchange: notProvided<unknown, ExchangeInput>("exchange"),
  },
  delays: {
    loginTimeout: ({ context }: { context: Context }) => context.input.timeoutMs,
  },
  guards: {
    documentRejectedFirstTime: ({ context, event }) =>
      !context.documentRetried && failureOf((event as { error?: unknown }).error).documentRejected === true,
  },
}).createMachine({
  id: "oauthLogin",
  context: ({ input }) => ({ input, documentRetried: false }),
  initial: "preparing",
  states: {
    preparing: {
      invoke: {
        src: "prepare",
        input: ({ context }) => ({ input: context.input, documentRetried: context.documentRetried }),
        onDone: { target: "awaitingRedirect", actions: assign({ prepared: ({ event }) => event.output }) },
        onError: { target: "failed", actions: assign({ error: ({ event }) => failureOf(event.error) }) },
      },
    },
    awaitingRedirect: {
      invoke: {
        src: "awaitRedirect",
        input: ({ context }) => context.prepared as PreparedLogin,
        onDone: { target: "exchanging", actions: assign({ code: ({ event }) => event.output }) },
        onError: { target: "failed", actions: assign({ error: ({ event }) => failureOf(event.error) }) },
      },
      after: {
        loginTimeout: {
          target: "failed",
          actions: assign({
            error: ({ context }) => ({
              message: timeoutMessage(
                context.input.serverName,
                context.prepared?.usesDocument === true,
                Math.round(context.input.timeoutMs / 60_000),
                context.input.loginCommand,
              ),
            }),
          }),
        },
      },
    },
    exchanging: {
      invoke: {
        src: "exchange",
        input: ({ context }) => ({ prepared: context.prepared as PreparedLogin, code: context.code }),
        onDone: { target: "done", actions: assign({ result: ({ event }) => event.output }) },
        onError: [
          {
            guard: "documentRejectedFirstTime",
            target: "preparing",
            actions: assign({ documentRetried: true }),
          },
          { target: "failed", actions: assign({ error: ({ event }) => failureOf(event.error) }) },
        ],
      },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
  output: ({ context }) =>
    context.error !== undefined ? { ok: false, error: context.error } : { ok: true, result: context.result },
});
