import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  type StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  type ClientCapabilities,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  type Implementation,
  LATEST_PROTOCOL_VERSION,
  McpError,
  type Progress,
  type ServerCapabilities,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { scopedSignal, systemClock, timeoutSignal } from "../../clock.js";
import { SvcError } from "../../errors.js";
import { VERSION } from "../version.js";
import { ANSWER_TOO_LARGE_TEXT } from "./answerSizeLimit.js";
import { cancelEveryRequestId } from "./cancelEveryRequestId.js";
import { cancelOnlyInFlight } from "./cancelOnlyInFlight.js";
import { knowClientErrors } from "./clientErrors.js";
import {
  autoProbeFailed,
  type EraOutcome,
  eraOutcome,
  quotedOutcome,
  statelessRetryFailed,
} from "./eraSequence.js";
import {
  type DiscoverResult,
  DiscoverResultSchema,
  isModernOnlyRejection,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  STATELESS_VERSION,
  speaksStateless,
  UnspokenVersionsError,
  withContent,
} from "./eras.js";
import { followTask, pollLostConnection, requestFailures } from "./followTask.js";
import { formFieldProblem } from "./formFieldProblem.js";
import { InvalidParamsError } from "./invalidParams.js";
import { MAX_LIST_PAGES, nextPage } from "./listPages.js";
import {
  LooseCallToolResultSchema,
  LooseLogNotificationSchema,
  LooseToolListSchema,
  listedTools,
  type ServerLogParams,
} from "./looseAnswers.js";
import { askingFor, offeredVersion, offersOnlyStateless } from "./offeredVersion.js";
import { refuseTooDeep } from "./resultDepth.js";
import { isTaskEnd, type TaskEnd, TaskEndError, TaskPollError } from "./taskPollError.js";
import {
  answeredWithError,
  ComposedError,
  composedError,
  describeMalformed,
  describeTransportError,
  ownErrorInSseStream,
  type Quoting,
  refusedAfterInitialize,
  sseDropCause,
  summarizeZodError,
} from "./transportErrors.js";
import { neverCancelInitialize } from "./uncancelledInitialize.js";

// The transports' errors are read by modules loaded before them (./clientErrors.ts).
knowClientErrors({ SseError, StreamableHTTPError });

export type Era = "legacy" | "stateless";
export type ProtocolChoice = "auto" | "stateless" | "legacy";

/** Answers to server-initiated requests; absent handlers are not advertised as capabilities. */
export interface SessionHandlers {
  sampling?: (params: CreateMessageRequest["params"], signal: AbortSignal) => Promise<CreateMessageResult>;
  elicitation?: (params: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult>;
  /** The server sent `notifications/tools/list_changed`. */
  onToolsChanged?: () => void;
  /** The server sent a log message (`notifications/message`). */
  onLog?: (params: ServerLogParams) => void;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** The tool's `execution.taskSupport` is `required`: the call is task-augmented and polled. */
  readonly task?: boolean;
  /** `notifications/progress` for this call (svc sends a progress token with every call). */
  readonly onProgress?: (progress: Progress) => void;
}

/** How long cancelling a timed-out task may take before the timeout is reported anyway. */
const TASK_CANCEL_TIMEOUT_MS = 2000;

export interface OpenSessionOptions {
  readonly name: string;
  readonly protocol: ProtocolChoice;
  /** A fresh transport per attempt (a fallback never reuses a closed one). */
  readonly makeTransport: () => Transport;
  readonly timeoutMs: number;
  readonly handlers?: SessionHandlers;
  /** Called once when the connection closes without `close()` (process exit, stream end). */
  readonly onLost?: (reason: string) => void;
  /**
   * The server sent an answer whose id is none of svc's pending requests (the SDK drops it, and the
   * request it meant waits until it times out), as its JSON text.
   */
  readonly onStrayAnswer?: (answer: string) => void;
  /**
   * Called as each attempt's transport is made, just before its handshake (`initialize`, or the stateless
   * era's `server/discover`) is sent: a connect given up later was waiting for the server's answer.
   */
  readonly onHandshake?: () => void;
  /**
   * The era sequence goes on to its next request (`auto`'s `server/discover` probe after a refused
   * `initialize`, `stateless`'s legacy `initialize` retry after a failed probe): what became of the one
   * before, told before the next one's `onHandshake`. A connect given up while the next one waits names both.
   */
  readonly onEraFallback?: (outcome: EraOutcome) => void;
  readonly signal?: AbortSignal;
  /**
   * What is redacted from a server's text in the errors the opening composes (the entry's credentials, the
   * gateway's own secrets), before it is cut (describeTransportError); none when not given.
   */
  readonly secrets?: () => readonly string[];
  /**
   * A url a `${VAR}` gave, and its host, named as config.yaml writes it (withUrlAsWritten) in the errors the
   * opening composes, before `secrets` are hidden: a host `.env` gave is one of them.
   */
  readonly shown?: (text: string) => string;
}

/** What `options` has redacted from a server's text before it is cut. */
const secretsOf = (options: OpenSessionOptions): readonly string[] => options.secrets?.() ?? [];

/** An error the opening composes from errors of the server's (`composedError`), worded as `options` say. */
const composed = (options: OpenSessionOptions, compose: (quote: Quoting) => string, cause: unknown) =>
  composedError(compose, secretsOf(options), options.shown, { cause }, ComposedError);

const TERMINATE_TIMEOUT_MS = 2000;

/** Waits for `work` (its failure ignored) at most TERMINATE_TIMEOUT_MS: the close is best-effort there. */
async function bounded(work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, TERMINATE_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
}

export const CLIENT_INFO: Implementation = { name: "svc", version: VERSION };

/** One live MCP connection, in either protocol era. */
export class McpSession {
  private closing = false;
  /** The connection closed without `close()` (process exit, stream end). */
  lostUnexpectedly = false;
  /**
   * stdio: how the server process ended (and `when`) with its last stderr lines, once it has exited; SSE: an
   * answer on its stream over svc's size limit, once svc closed the stream for it.
   */
  exitReport: ((when?: string) => string | undefined) | undefined;
  /** svc closed the connection because the server wrote a message over svc's size limit (stdio, SSE). */
  closedOverLongMessage: (() => boolean) | undefined;
  /** The entry's credentials (see `entrySecrets`): redacted from call errors as from connect errors. */
  secrets: readonly string[] = [];
  /**
   * A remote server without `auth: oauth`: what to do when it answers a request of this session with HTTP
   * 401 (the credentials it took at connect are refused now), as `unauthorizedHint` says it at connect.
   */
  unauthorizedHint: string | undefined;
  /** A remote server: what to check when a request of this session finds nothing listening at its url. */
  unreachableHint: ((text: string) => string) | undefined;
  /**
   * A remote server whose url a `${VAR}` gave: a call error's text with that url, and its host, named as
   * config.yaml writes it, as its connect's errors name them.
   */
  shownAsWritten: ((text: string) => string) | undefined;
  private readonly cleanups: Array<() => Promise<void>> = [];
  /** Messages being sent (a POST on HTTP and SSE): the close lets them go out before it aborts them. */
  private readonly sending = new Set<Promise<void>>();
  /** The transport's failure behind a request made with a signal (`requestFailures`). */
  private readonly failureOf: (signal: AbortSignal) => Error | undefined;
  constructor(
    readonly era: Era,
    readonly client: Client,
    readonly transport: Transport,
    readonly capabilities: ServerCapabilities,
    readonly instructions: string | undefined,
  ) {
    // Wrapped first: `requestFailures` keys each failure by the call's own signal, not the request's.
    cancelOnlyInFlight(client);
    this.failureOf = requestFailures(client);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const sent = send(message, options);
      this.sending.add(sent);
      const done = () => this.sending.delete(sent);
      sent.then(done, done);
      return sent;
    };
  }

  /**
   * Every page of `tools/list`. `incomplete` says why the list may lack tools: the server answered a cursor
   * it had already sent (a loop), or it still had a next page after MAX_LIST_PAGES. A server's error answer
   * is quoted with `secrets` redacted (describeTransportError).
   */
  async listTools(
    timeoutMs: number,
    secrets: readonly string[] = [],
  ): Promise<{ tools: Tool[]; incomplete?: string; skipped: string[]; unanswered?: true }> {
    const tools: Tool[] = [];
    const skipped: string[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let n = 1; n <= MAX_LIST_PAGES; n++) {
      // A loose schema: the SDK's strips unknown annotation keys such as the snake-case `read_only_hint`.
      const page = await this.client
        .request(
          { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
          LooseToolListSchema,
          {
            timeout: timeoutMs,
          },
        )
        .catch((err: unknown) => {
          // A server that declares tools but has no tools/list at all lists none: the connect goes on (its
          // resources and prompts stay usable) rather than failing, and being retried, for ever.
          if (n === 1 && err instanceof McpError && err.code === ErrorCode.MethodNotFound) return undefined;
          const malformed = describeMalformed(err, "the server's tools/list result");
          if (malformed !== undefined) throw new SvcError("mcp_connect", malformed);
          // The server's own error answer ("MCP error -32603: ...") names neither the request nor the page.
          if (!answeredWithError(err)) throw err;
          const page =
            cursor === undefined ? "" : ` at page ${n} (cursor ${JSON.stringify(cursor.slice(0, 40))})`;
          throw composedError(
            (quote) => `tools/list failed${page}: ${quote.error(err)}`,
            secrets,
            this.shownAsWritten,
            { cause: err },
            ComposedError,
          );
        });
      if (page === undefined) {
        return {
          tools,
          skipped,
          unanswered: true,
          incomplete: `the server declares the tools capability but answers tools/list with -32601 (Method not found), so no tool of it is registered — fix the server, or have it declare no tools`,
        };
      }
      const listed = listedTools(page.tools, n);
      tools.push(...listed.tools);
      skipped.push(...listed.skipped);
      const next = page.nextCursor;
      cursor = nextPage(next, seen);
      if (cursor === undefined && typeof next === "string" && next !== "") {
        return {
          tools,
          skipped,
          incomplete: `tools/list stopped after ${n} page${n === 1 ? "" : "s"}: the server sent cursor ${JSON.stringify(next.slice(0, 40))} again (a loop in its paging), so any tools of later pages are not registered`,
        };
      }
      if (cursor === undefined) return { tools, skipped };
    }
    return {
      tools,
      skipped,
      incomplete: `tools/list stopped after ${MAX_LIST_PAGES} pages (svc's limit) with more to come, so the tools of later pages are not registered`,
    };
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    if (options.task === true) return this.callAsTask(name, args, timeoutMs, options);
    return scopedSignal(options.signal === undefined ? [] : [options.signal], (signal) =>
      // The SDK's signature takes its own schema's type; the preprocess parses to the same result.
      this.client.callTool(
        { name, arguments: args },
        LooseCallToolResultSchema as unknown as typeof CallToolResultSchema,
        {
          timeout: timeoutMs,
          signal,
          ...(options.onProgress === undefined ? {} : { onprogress: options.onProgress }),
        },
      ),
    ).then(withContent);
  }

  /**
   * A tool that only runs as a task (`execution.taskSupport: "required"`): `tools/call` with `task`, then
   * `tasks/get` polls until it ends and `tasks/result` fetches the result. `timeoutMs` bounds the whole
   * call, not each poll; when it passes, the task is cancelled (best-effort) and a timeout is reported.
   */
  private callAsTask(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    options: CallOptions,
  ): Promise<CallToolResult> {
    const deadline = timeoutSignal(timeoutMs);
    return scopedSignal(options.signal === undefined ? [deadline] : [options.signal, deadline], (signal) =>
      this.pollTask(name, args, timeoutMs, options, deadline, signal),
    );
  }

  private async pollTask(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    options: CallOptions,
    deadline: AbortSignal,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    let taskId: string | undefined;
    // The stream's requests: given up with the call, but for a tools/call still waiting for its answer then
    // (see below), whose task MCP cancels with tasks/cancel rather than notifications/cancelled.
    const requests = new AbortController();
    const stream = this.client.experimental.tasks.callToolStream(
      { name, arguments: args },
      CallToolResultSchema,
      {
        timeout: timeoutMs,
        signal: requests.signal,
        task: {},
        ...(options.onProgress === undefined ? {} : { onprogress: options.onProgress }),
      },
    );
    // The SDK sleeps `pollInterval` (the server's choice) between polls and looks at the signal only
    // after it: race each step against the signal so the timeout holds whatever the server asks for.
    const iterator = stream[Symbol.asyncIterator]();
    const stopped = new Promise<"stopped">((resolve) => {
      if (signal.aborted) resolve("stopped");
      signal.addEventListener("abort", () => resolve("stopped"), { once: true });
    });
    let pollMs = 1000;
    // The status `tasks/get` last reported, when the task ended `failed` or `cancelled`: the stream's error
    // that follows it is the task's own end (told by the status, never the SDK's words for it).
    let ended: TaskEnd | undefined;
    // The step asked for and not yet taken (the call was given up while it was awaited).
    let next: ReturnType<typeof iterator.next> | undefined;
    for (;;) {
      next ??= iterator.next();
      const step = await Promise.race([next, stopped]);
      if (step !== "stopped") next = undefined;
      let message = step === "stopped" || step.done === true ? undefined : step.value;
      if (message?.type === "taskCreated") {
        taskId = message.task.taskId;
        pollMs = message.task.pollInterval ?? pollMs;
      }
      if (message?.type === "taskStatus")
        ended = isTaskEnd(message.task.status) ? message.task.status : undefined;
      if (message?.type === "result") {
        refuseTooDeep(message.result);
        return message.result as CallToolResult;
      }
      if (message !== undefined && message.type !== "error") continue;
      if (message !== undefined && taskId !== undefined && ended !== undefined && !signal.aborted)
        throw new TaskEndError(taskId, ended, { cause: message.error });
      // A poll that lost its connection (the task was created): the task runs on, so it is followed again.
      // The stream hands a transport's failure on as an McpError of its text: told by the failure as thrown.
      if (
        message !== undefined &&
        !signal.aborted &&
        taskId !== undefined &&
        this.usable() &&
        pollLostConnection(
          message.error.code === ErrorCode.InternalError
            ? (this.failureOf(requests.signal) ?? message.error)
            : message.error,
        )
      ) {
        const result = await followTask(this.client, taskId, message.error, {
          timeoutMs,
          signal,
          pollMs,
          usable: () => this.usable(),
        });
        if (result !== undefined) {
          refuseTooDeep(result);
          return result;
        }
        message = undefined;
      }
      // The call refused before the server made a task (an expired session's 404, a refused token's 401, a
      // server gone): the transport's failure as thrown, told as a plain call's is.
      if (message !== undefined && !signal.aborted)
        throw taskId === undefined
          ? (this.failureOf(requests.signal) ?? message.error)
          : new TaskPollError(
              taskId,
              message.error,
              message.error.code === ErrorCode.InternalError ? this.failureOf(requests.signal) : undefined,
            );
      if (step !== "stopped" && step.done === true) break;
      // Given up while the tools/call waits for its answer: the server may be making the task, so its answer is
      // waited for (at most TASK_CANCEL_TIMEOUT_MS) to cancel the task it names; none by then, the tools/call
      // itself is cancelled.
      if (step === "stopped" && taskId === undefined && next !== undefined)
        taskId = await this.taskMadeMeanwhile(next);
      requests.abort(signal.reason);
      void iterator.return?.(undefined).catch(() => undefined);
      if (taskId !== undefined) {
        await this.client.experimental.tasks
          .cancelTask(taskId, { timeout: TASK_CANCEL_TIMEOUT_MS })
          .catch(() => undefined);
      }
      if (deadline.aborted)
        throw new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs });
      throw message?.error ?? signal.reason;
    }
    throw new McpError(ErrorCode.InternalError, `task for ${name} ended without a result`);
  }

  /** The id of the task the stream's tools/call makes, when its answer comes within TASK_CANCEL_TIMEOUT_MS. */
  private async taskMadeMeanwhile(
    next: Promise<IteratorResult<{ type: string; task?: { taskId: string } }>>,
  ): Promise<string | undefined> {
    const waited = new AbortController();
    const late = await Promise.race([
      next.catch(() => undefined),
      systemClock.sleep(TASK_CANCEL_TIMEOUT_MS, waited.signal).catch(() => undefined),
    ]);
    waited.abort();
    return late?.done === false && late.value.type === "taskCreated" ? late.value.task?.taskId : undefined;
  }

  /**
   * Liveness: `ping` in the legacy era; `server/discover` in the stateless one (it has no ping). A JSON-RPC
   * error answer counts as alive: ping is optional, and servers that do not implement it answer
   * `-32601 Method not found`, `Unknown method: ping` or `-32603 Method not supported: ping` — taking that
   * for a dead connection reconnected them at every keepalive. Only no answer in time, a closed
   * connection, a transport error (an expired HTTP session) or an answer that the session is gone fails
   * the ping (see `answeredWithError`).
   */
  async ping(timeoutMs: number): Promise<void> {
    try {
      if (this.era === "legacy") await this.client.ping({ timeout: timeoutMs });
      else
        await this.client.request({ method: "server/discover" }, DiscoverResultSchema, {
          timeout: timeoutMs,
        });
    } catch (err) {
      if (!answeredWithError(err)) throw err;
    }
  }

  /** Neither closed by svc nor lost: a request may still be sent on it. */
  private usable(): boolean {
    return !this.closing && !this.lostUnexpectedly;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /**
   * The session sits in its connection actor's context, which the inspector (`--inspect`) serializes:
   * only a summary, never the client and transport (the child's env, the request headers) or `secrets`.
   */
  toJSON(): { era: Era; capabilities: ServerCapabilities; closing: boolean } {
    return { era: this.era, capabilities: this.capabilities, closing: this.closing };
  }

  /**
   * Streamable HTTP: ends the server's session with `DELETE` (as the Python SDK's client does), so the
   * server frees it now rather than at its own timeout. Best-effort and bounded: a server that is gone
   * or does not support it (405) does not hold up the close.
   */
  private async terminate(): Promise<void> {
    const transport = this.transport as Partial<StreamableHTTPClientTransport>;
    if (typeof transport.terminateSession !== "function" || transport.sessionId === undefined) return;
    await bounded(transport.terminateSession());
  }

  /** Runs after the transport closed (e.g. releasing the TLS connection pool). */
  addCleanup(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  async close(): Promise<void> {
    const wasClosing = this.closing;
    this.closing = true;
    if (!wasClosing && !this.lostUnexpectedly) {
      // A call that just timed out sent notifications/cancelled: closing the transport would abort its POST.
      await bounded(Promise.allSettled([...this.sending]));
      await this.terminate();
    }
    try {
      await this.client.close();
    } finally {
      await this.transport.close().catch(() => undefined);
      for (const cleanup of this.cleanups.splice(0)) await cleanup().catch(() => undefined);
    }
  }
}

function clientCapabilities(handlers: SessionHandlers): ClientCapabilities {
  return {
    ...(handlers.sampling ? { sampling: {} } : {}),
    ...(handlers.elicitation ? { elicitation: { form: {}, url: {} } } : {}),
  };
}

/**
 * The schemas the SDK's `Protocol` parses a server's sampling or elicitation request with before anything
 * else: loose, so a malformed request reaches the SDK `Client`'s own check, which answers JSON-RPC's
 * `-32602` Invalid params (`Invalid sampling request: …`) — parsed strictly there, it failed as `-32603`
 * Internal error, as if svc had broken. The handlers parse the request strictly once it passed that check.
 */
const LooseSamplingRequestSchema = z.looseObject({
  method: z.literal("sampling/createMessage"),
  params: z.unknown().transform(readableInvalidParams("sampling/createMessage", "sampling")),
});
const LooseElicitRequestSchema = z.looseObject({
  method: z.literal("elicitation/create"),
  params: z.unknown().transform(readableInvalidParams("elicitation/create", "elicitation")),
});

/**
 * The SDK `Client` answers a malformed sampling or elicitation request with `-32602` and the issues' JSON
 * (two hundred lines for one form field of another type): the same answer, said on one line. A form
 * field svc cannot ask for (an object, a list of free text, a type of no form) is named with what a
 * form field can be.
 */
function readableInvalidParams(method: string, what: "sampling" | "elicitation") {
  const schema = what === "sampling" ? CreateMessageRequestSchema : ElicitRequestSchema;
  return (params: unknown): unknown => {
    const checked = schema.safeParse({ method, params });
    if (checked.success) return params;
    const field = what === "elicitation" ? formFieldProblem(params) : undefined;
    const problem = field ?? summarizeZodError(checked.error) ?? "it does not have the expected shape";
    throw new InvalidParamsError(`Invalid ${what} request: ${problem}`);
  };
}

function newClient(handlers: SessionHandlers): Client {
  const client = new Client(CLIENT_INFO, { capabilities: clientCapabilities(handlers) });
  cancelEveryRequestId(client);
  const sampling = handlers.sampling;
  if (sampling)
    client.setRequestHandler(LooseSamplingRequestSchema, (req, extra) =>
      sampling(CreateMessageRequestSchema.parse(req).params, extra.signal),
    );
  const onToolsChanged = handlers.onToolsChanged;
  if (onToolsChanged)
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged());
  const onLog = handlers.onLog;
  if (onLog) client.setNotificationHandler(LooseLogNotificationSchema, (n) => onLog(n.params));
  const elicitation = handlers.elicitation;
  if (elicitation)
    client.setRequestHandler(LooseElicitRequestSchema, (req, extra) =>
      elicitation(ElicitRequestSchema.parse(req).params, extra.signal),
    );
  return client;
}

/** The SDK's report of an answer it dropped: its id is none of the requests it waits on. */
const UNKNOWN_ID = "Received a response for an unknown message ID: ";

/** Reports each answer of an unknown id while the session opens (`watchLoss` goes on once it is open). */
function watchStrayAnswers(client: Client, options: OpenSessionOptions): void {
  const report = options.onStrayAnswer;
  if (report === undefined) return;
  client.onerror = (err) => {
    const text = err instanceof Error ? err.message : String(err);
    if (text.startsWith(UNKNOWN_ID)) report(text.slice(UNKNOWN_ID.length));
  };
}

/** The SDK's report of one failed attempt to reopen a Streamable HTTP event stream. */
const REOPEN_FAILED = "Failed to reconnect SSE stream: ";

function watchLoss(session: McpSession, options: OpenSessionOptions): void {
  let reported = false;
  const lost = (reason: string) => {
    if (reported || session.isClosing) return;
    reported = true;
    session.lostUnexpectedly = true;
    options.onLost?.(reason);
  };
  session.client.onclose = () => {
    const exit = session.exitReport?.();
    lost(exit === undefined ? "the connection closed" : `the connection closed: ${exit}`);
  };
  // On the SSE transport the event stream is the session: when it drops, the server's session is gone
  // even though the EventSource reconnects by itself (into a new, never-initialized server session).
  // On Streamable HTTP the SDK reopens a dropped event stream by itself, twice; when that fails too (the
  // server is gone, or a restarted one no longer knows the session) it only reports it, and the session
  // would look alive until the next call or ping — with server→client messages silently lost meanwhile.
  let reopenFailure: string | undefined;
  session.client.onerror = (err) => {
    if (err instanceof SseError) {
      const cause = sseDropCause(err);
      // An answer over svc's size limit (boundedAnswers) came on the stream: the call it answered would get
      // the same answer if replayed, as a stdio server's too long line.
      if (ANSWER_TOO_LARGE_TEXT.test(cause)) {
        session.closedOverLongMessage = () => true;
        session.exitReport = () => cause;
      }
      lost(`the SSE stream closed (${cause})`);
    }
    const text = err instanceof Error ? err.message : String(err);
    // Its tools are listed after this (still within the connect): an answer to that listing too.
    if (text.startsWith(UNKNOWN_ID)) options.onStrayAnswer?.(text.slice(UNKNOWN_ID.length));
    else if (text.startsWith(REOPEN_FAILED)) reopenFailure = text.slice(REOPEN_FAILED.length);
    else if (/^Maximum reconnection attempts \(\d+\) exceeded/.test(text)) {
      lost(
        `the server's event stream dropped and could not be reopened${reopenFailure === undefined ? "" : ` (${reopenFailure})`}`,
      );
    }
  };
}

const CANCELLED = "connect was cancelled";

/**
 * `value` with every object key whose value is `null` taken out (in place), `levels` deep: the fields of an
 * initialize answer sit a few levels down, and a hostile answer nested thousands deep must not overflow.
 */
function dropNulls(value: unknown, levels = 8): void {
  if (value === null || typeof value !== "object" || levels === 0) return;
  if (Array.isArray(value)) {
    for (const item of value) dropNulls(item, levels - 1);
    return;
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (object[key] === null) delete object[key];
    else dropNulls(object[key], levels - 1);
  }
}

/**
 * A server that writes each optional field of its initialize answer it leaves unset as `null` (pydantic's
 * `model_dump()` without `exclude_none`, a C++ server's default JSON value: `"logging": null`,
 * `"tools": {"listChanged": null}`, `"instructions": null`) fails the SDK's schema, and with it the whole
 * connect. As in svc's other answers (a call's `isError: null`), a field sent as null counts as left out:
 * the SDK's client calls a transport's `onmessage` set before it connects ahead of its own, so this one
 * takes the nulls out of the first result, the answer to `initialize`, before the SDK reads it.
 */
function leaveOutNullsOfInitialize(transport: Transport): void {
  let answered = false;
  transport.onmessage = (message) => {
    if (answered || !("result" in message)) return;
    answered = true;
    dropNulls(message.result);
    readableServerInfo(message.result);
  };
}

/**
 * `serverInfo` is for display only, and svc reads none of it (the stateless era's `server/discover` does
 * not need it either), but the SDK's schema requires it with a text `name` and `version` and checks its
 * other fields: a server that leaves it out, or its version (`{"name": "x"}`), writes the version as a
 * number (`1.0`), or an icon's `sizes` as text (`"48x48"`, as drafts before 2025-11-25 had it) failed the
 * whole connect for it. It is read as its name and version only, as text (empty when missing).
 */
function readableServerInfo(result: unknown): void {
  if (result === null || typeof result !== "object" || Array.isArray(result)) return;
  const answer = result as Record<string, unknown>;
  const given = answer.serverInfo;
  const info =
    given !== null && typeof given === "object" && !Array.isArray(given)
      ? (given as Record<string, unknown>)
      : {};
  const text = (value: unknown) =>
    typeof value === "string" ? value : value === undefined ? "" : (JSON.stringify(value) ?? "");
  answer.serverInfo = { name: text(info.name), version: text(info.version) };
}

/**
 * The `initialize` handshake. A server that refuses the version asked for (the SDK's latest) naming the
 * versions it supports is asked once more, in the newest of them svc speaks (see `offeredVersion`).
 */
async function openHandshake(options: OpenSessionOptions): Promise<McpSession> {
  try {
    return await openLegacy(options);
  } catch (err) {
    const version = offeredVersion(err, LATEST_PROTOCOL_VERSION);
    if (version === undefined || options.signal?.aborted === true) throw err;
    return await openLegacy(options, version);
  }
}

async function openLegacy(options: OpenSessionOptions, version?: string): Promise<McpSession> {
  // A listener added to an already aborted signal never runs: a given-up connect must not start.
  if (options.signal?.aborted === true) throw new Error(CANCELLED);
  const handlers = options.handlers ?? {};
  const client = newClient(handlers);
  watchStrayAnswers(client, options);
  const transport = options.makeTransport();
  options.onHandshake?.();
  if (version !== undefined) askingFor(transport, version);
  neverCancelInitialize(transport);
  leaveOutNullsOfInitialize(transport);
  const abort = () => void transport.close().catch(() => undefined);
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (err) {
    const sessionId = (transport as Partial<StreamableHTTPClientTransport>).sessionId;
    // The server's capabilities are known once its initialize answer is: what failed came after it (the
    // notifications/initialized that follows), and no 404 of it means a wrong path.
    const answered = client.getServerCapabilities() !== undefined;
    const sseEndpoint = notFoundAtSseEndpoint(transport, err);
    await transport.close().catch(() => undefined);
    if (sessionId !== undefined || answered) {
      const refused = refusedAfterInitialize(
        err,
        sessionId,
        "notifications/initialized",
        secretsOf(options),
        options.shown,
      );
      if (refused !== undefined) throw refused;
    }
    if (sseEndpoint !== undefined)
      throw composed(options, (quote) => `${quote.error(err)} — ${quote.text(sseEndpoint)}`, err);
    throw err;
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
  const session = new McpSession(
    "legacy",
    client,
    transport,
    client.getServerCapabilities() ?? {},
    client.getInstructions(),
  );
  watchLoss(session, options);
  return session;
}

/**
 * The SSE transport's POST refused with 404 (the path the server's stream named, or the session on it):
 * what that endpoint was and the usual causes (transport.ts's `endpointNotFound`); undefined otherwise.
 */
function notFoundAtSseEndpoint(transport: Transport, err: unknown): string | undefined {
  if (!(err instanceof Error) || !/^Error POSTing to endpoint \(HTTP 404\)/.test(err.message))
    return undefined;
  return (transport as { endpointNotFound?: () => string | undefined }).endpointNotFound?.();
}

/** Adds the per-request `_meta` the stateless revision requires to every outgoing request. */
function stampRequests(client: Client, capabilities: ClientCapabilities): void {
  const original = client.request.bind(client);
  client.request = ((
    request: { method: string; params?: Record<string, unknown> },
    schema: never,
    opts: never,
  ) => {
    const params = request.params ?? {};
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    return original(
      {
        ...request,
        params: {
          ...params,
          _meta: {
            ...meta,
            [META_PROTOCOL_VERSION]: STATELESS_VERSION,
            [META_CLIENT_INFO]: CLIENT_INFO,
            [META_CLIENT_CAPABILITIES]: capabilities,
          },
        },
      } as never,
      schema,
      opts,
    );
  }) as typeof client.request;
}

/**
 * The stateless era: no `initialize`; the first message is `server/discover`, answered within
 * `probeTimeoutMs`. When the server does not list 2026-07-28 among `supportedVersions`, the probe counts as
 * failed.
 */
async function openStateless(
  options: OpenSessionOptions,
  probeTimeoutMs = options.timeoutMs,
): Promise<McpSession> {
  if (options.signal?.aborted === true) throw new Error(CANCELLED);
  const handlers = options.handlers ?? {};
  const client = newClient(handlers);
  watchStrayAnswers(client, options);
  stampRequests(client, clientCapabilities(handlers));
  const transport = options.makeTransport();
  options.onHandshake?.();
  const abort = () => void transport.close().catch(() => undefined);
  options.signal?.addEventListener("abort", abort, { once: true });
  let result: DiscoverResult;
  try {
    await Protocol.prototype.connect.call(client, transport);
    // Every HTTP request of this era names it in MCP-Protocol-Version, the probe too: a server takes a
    // request without the header for a 2025-03-26 one, which a stateless-only server refuses (HTTP 400).
    transport.setProtocolVersion?.(STATELESS_VERSION);
    result = await client.request({ method: "server/discover" }, DiscoverResultSchema, {
      timeout: probeTimeoutMs,
    });
    if (!speaksStateless(result)) throw new UnspokenVersionsError(result.supportedVersions);
  } catch (err) {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    throw err;
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
  const session = new McpSession(
    "stateless",
    client,
    transport,
    result.capabilities as ServerCapabilities,
    result.instructions,
  );
  watchLoss(session, options);
  return session;
}

/**
 * Opens a session in the era `protocol` selects:
 * - legacy: the `initialize` handshake only (a modern-only rejection says to set `protocol: auto`);
 * - stateless: `server/discover` first, then one legacy `initialize` retry when the probe fails;
 * - auto: `initialize` first; when the server rejects it as modern-only (see `isModernOnlyRejection`),
 *   one `server/discover` probe.
 */
export async function openSession(options: OpenSessionOptions): Promise<McpSession> {
  if (options.protocol === "legacy") {
    try {
      return await openHandshake(options);
    } catch (err) {
      // `auto` would go on to the server/discover probe here; `legacy` never does, so say which key to change.
      if (!refusedAsModernOnly(options, err)) throw err;
      throw composed(
        options,
        (quote) =>
          `${quote.error(err)} — the server refused the initialize handshake as a ${STATELESS_VERSION} (stateless) server does, and protocol: legacy never tries server/discover: set protocol: auto (or stateless)`,
        err,
      );
    }
  }
  if (options.protocol === "stateless") {
    try {
      // Half the connect's time: a legacy server that leaves a request before `initialize` unanswered (as
      // newer Python SDK servers do) still gets its retry before the connect times out.
      return await openStateless(options, options.timeoutMs / 2);
    } catch (probeError) {
      // svc's own error before the server answered (its OAuth provider had no token to send: not logged
      // in, a refused or unreachable refresh) says nothing of the era: the retry would only repeat it.
      if (options.signal?.aborted || svcOwnError(options.name, probeError)) throw probeError;
      // A probe left unanswered is said so, with its wait (not the SDK's "Request timed out").
      const probe = eraOutcome(probeError, secretsOf(options), options.shown);
      options.onEraFallback?.(probe);
      try {
        return await openHandshake(options);
      } catch (legacyError) {
        throw composed(
          options,
          (quote) => statelessRetryFailed(quotedOutcome(probe, probeError, quote), quote.error(legacyError)),
          legacyError,
        );
      }
    }
  }
  try {
    return await openHandshake(options);
  } catch (legacyError) {
    if (!refusedAsModernOnly(options, legacyError)) throw legacyError;
    const refused = describeTransportError(legacyError, secretsOf(options), options.shown);
    options.onEraFallback?.({ answer: refused });
    try {
      return await openStateless(options);
    } catch (probeError) {
      if (options.signal?.aborted) throw probeError;
      // The probe's error alone ("Method not found") hides that initialize was refused first: say both,
      // as `stateless` does for its legacy retry.
      // A probe answered with versions svc does not speak came from an MCP server (of another revision):
      // the connect error adds the versions svc speaks (unsupportedVersionHint), not "is this MCP?". One
      // that lists a version svc speaks through initialize came from an MCP server too, one that should
      // have taken the initialize it refused.
      const outcome = (quote: Quoting) =>
        probeError instanceof UnspokenVersionsError
          ? probeError.spoken.length === 0
            ? `found no version svc speaks (${probeError.message})`
            : `was answered: ${initializeSpokenYetRefused(probeError)}`
          : `failed too (${quotedOutcome(eraOutcome(probeError, secretsOf(options), options.shown), probeError, quote)}) — check that this is an MCP server`;
      throw composed(
        options,
        (quote) => autoProbeFailed(quote.error(legacyError), outcome(quote)),
        probeError,
      );
    }
  }
}

/**
 * What a server that refused `initialize` yet lists a version svc speaks through it in `server/discover`
 * should look at: its initialize handling, not whether it speaks MCP or which versions it offers.
 */
function initializeSpokenYetRefused(probe: UnspokenVersionsError): string {
  const spoken = probe.spoken.join(", ");
  const which =
    probe.spoken.length === probe.versions.length
      ? `${spoken}, which svc speaks through initialize`
      : `${probe.versions.join(", ")}, of which svc speaks ${spoken} through initialize`;
  return `its server/discover lists ${which}, yet it refused initialize — check the server's initialize handling`;
}

/** An error svc raised itself (on SSE, flattened into the event stream's `SSE error: …`). */
function svcOwnError(name: string, err: unknown): boolean {
  return err instanceof SvcError || ownErrorInSseStream(name, err) !== undefined;
}

/**
 * Whether the server refused `initialize` as a stateless-only server does. svc's own error is no answer of
 * the server's, though its text may match (a server named `stateless`: `stateless: not logged in — …`).
 */
function refusedAsModernOnly(options: OpenSessionOptions, err: unknown): boolean {
  return (
    !options.signal?.aborted &&
    !svcOwnError(options.name, err) &&
    (isModernOnlyRejection(err) || offersOnlyStateless(err))
  );
}
