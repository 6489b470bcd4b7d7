import { StringDecoder } from "node:string_decoder";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { cutText } from "../cutText.js";
import { outboundFetch } from "../outbound/dispatcher.js";
import type { GroupNote } from "../processGroups.js";
import { acceptedNotifications } from "./acceptedNotifications.js";
import { boundedAnswers } from "./answerSizeLimit.js";
import { childEnvironment } from "./childEnv.js";
import { knowClientErrors } from "./clientErrors.js";
import { answerDroppedStreams } from "./droppedStreams.js";
import { pacedServerStreams, type StreamRefusal } from "./pacedStreams.js";
import { CREDENTIAL_REACH, redactedStart } from "./redactedStart.js";
import { RefusedSseStream } from "./refusedSseStream.js";
import { StdioTransport } from "./stdioTransport.js";

// The errors these transports throw are read by modules loaded before them (./clientErrors.ts).
knowClientErrors({ SseError, StreamableHTTPError });

/** A stderr line longer than this is cut (a long line, or a process that never writes a newline). */
const MAX_STDERR_LINE = 64 * 1024;

export interface TransportOptions {
  /** OAuth (issue 6) plugs in here; both HTTP transports take it. */
  readonly authProvider?: OAuthClientProvider;
  /** The TLS-aware fetch of the entry (ssl_verify, client certificates). */
  readonly fetch?: FetchLike;
  /** Receives each stderr line of a stdio server. */
  readonly onStderr?: (line: string) => void;
  /** The stdio server's stderr text after its last newline ("" when none): a prompt waiting for input. */
  readonly onStderrUnfinished?: (text: string) => void;
  /**
   * Redacts credentials from what a server sends (a stdio server's stderr line, stdout line that is no message,
   * the start of one not ended yet; any server's answer svc cannot read) before it is cut, so a cut never
   * keeps the start of one.
   */
  readonly redact?: (text: string) => string;
  /** A stdio server process exited: `code 3` or `signal SIGKILL`. */
  readonly onExit?: (how: string) => void;
  /** svc closed a stdio connection because the server broke the protocol (`tooLong`: a message over the limit). */
  readonly onProtocolError?: (reason: string, tooLong?: boolean) => void;
  /** A stdio server's stdout line that is no JSON-RPC message (skipped). */
  readonly onOtherOutput?: (line: string) => void;
  /** The beginning of a stdio server's stdout line not ended yet ("" once it ends). */
  readonly onStdoutUnfinished?: (start: string) => void;
  /**
   * An SSE server's event stream opened (`true`) and its `endpoint` event is awaited, or the wait ended
   * (`false`: the event came, or the start failed).
   */
  readonly onAwaitingEndpoint?: (awaiting: boolean) => void;
  readonly parentEnv?: NodeJS.ProcessEnv;
  /** Notes a stdio server's process group while it runs. */
  readonly group?: GroupNote;
  /** Streamable HTTP: where the server's refusal of its event stream (405) is kept (default: this connection). */
  readonly streamRefusal?: StreamRefusal;
}

/**
 * Splits a stderr stream into lines, each cut at `MAX_STDERR_LINE` characters (with `…`): a line longer
 * than that, whether it arrives in one chunk or many, is reported once, cut, when its newline comes or once
 * `CREDENTIAL_REACH` characters more have come, and the rest of it up to its newline is dropped, so a process
 * that never ends a line cannot grow the buffer either. A line ended with CRLF loses its CR. `end` reports a
 * last line the stream ended without a newline (a server that writes `fatal: API_KEY missing` and exits),
 * which is often the one saying why it stopped. `redact` removes credentials from a line before it is cut:
 * from the whole line, or, where the rest is dropped, from what came within reach past the cut, so a
 * credential across the cut (or across the chunk the line was cut in) is redacted whole (`redactedStart`).
 */
export function stderrLines(
  onLine: ((line: string) => void) | undefined,
  onUnfinished?: (text: string) => void,
  redact: (text: string) => string = (text) => text,
): {
  (chunk: Buffer): void;
  end(): void;
} {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  let dropping = false;
  const emit = (raw: string) => {
    const line = redact(raw.endsWith("\r") ? raw.slice(0, -1) : raw);
    if (line.trim() === "") return;
    onLine?.(line.length > MAX_STDERR_LINE ? `${cutText(line, MAX_STDERR_LINE)}…` : line);
  };
  /** A line whose rest is dropped: `raw` ends where it was cut, perhaps inside a credential. */
  const emitCut = (raw: string) => {
    const shown = redactedStart(raw, MAX_STDERR_LINE, redact);
    if (shown.trim() !== "") onLine?.(`${shown}…`);
  };
  const split = (chunk: Buffer) => {
    const parts = decoder.write(chunk).split("\n");
    const tail = parts.pop() ?? "";
    for (const part of parts) {
      if (!dropping) emit(pending + part);
      pending = "";
      dropping = false;
    }
    if (dropping) return;
    pending += tail;
    // Past the cut, the line is held within reach of it (a newline may still end it there), so a
    // credential the cut goes through is read whole: cut at a chunk's end, its start would be shown.
    if (pending.length >= MAX_STDERR_LINE + CREDENTIAL_REACH) {
      emitCut(pending.slice(0, MAX_STDERR_LINE + CREDENTIAL_REACH));
      pending = "";
      dropping = true;
    }
    // A prompt waits without a newline ("Enter the code: "): a message about a server that does not
    // answer quotes it too.
    onUnfinished?.(pending);
  };
  return Object.assign(split, {
    end: () => {
      const last = dropping ? "" : pending + decoder.end();
      pending = "";
      dropping = false;
      onUnfinished?.("");
      emit(last);
    },
  });
}

/**
 * The SDK's SSE transport, but a `close()` made while `start()` still waits for the server's `endpoint`
 * event (a server that accepts the event stream and never answers it) ends that wait with an error: the
 * SDK's leaves it pending for ever (its closed EventSource reports nothing), so a connect given up by
 * `connect_timeout` never settled, and whatever waited for it (a stop: the gateway's, a CLI command's)
 * waited until the process had nothing else to do and exited in the middle (status 13).
 */
class ClosableSseTransport extends SSEClientTransport {
  #giveUp: ((err: Error) => void) | undefined;

  constructor(
    url: URL,
    options: ConstructorParameters<typeof SSEClientTransport>[1],
    private readonly onAwaitingEndpoint?: (awaiting: boolean) => void,
    private readonly refused?: RefusedSseStream,
  ) {
    super(url, options);
  }

  override start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#giveUp = reject;
      super
        .start()
        .then(resolve, (err: unknown) => reject(this.refused?.reword(err) ?? err))
        .finally(() => {
          this.#giveUp = undefined;
          this.onAwaitingEndpoint?.(false);
        });
    });
  }

  /**
   * Why a POST to the message endpoint the server's stream named was refused with 404 at the connect: that
   * endpoint (the SDK keeps it, and the url, private) does not know the session the stream opened.
   * Undefined before the stream named one.
   */
  endpointNotFound(): string | undefined {
    const { _url: url, _endpoint: endpoint } = this as unknown as { _url?: URL; _endpoint?: URL };
    if (url === undefined || endpoint === undefined) return undefined;
    const prefix = url.pathname.replace(/\/[^/]*$/, "");
    const here = prefix !== "" && !endpoint.pathname.startsWith(`${prefix}/`) ? ` (here ${prefix})` : "";
    return `the server's SSE stream named ${endpoint.origin}${endpoint.pathname} as its message endpoint, which does not know the session: a server behind a proxy under a path prefix${here} must announce its endpoint with that prefix (or relative to the stream), and one run as several instances needs each session routed to one instance`;
  }

  override async close(): Promise<void> {
    // The SDK closes the transport itself right after failing its start (an endpoint on another origin):
    // that failure, already on its way, is the one to report; only a start still waiting gives up here.
    setImmediate(() =>
      this.#giveUp?.(new Error("the connection was closed before the server's SSE stream answered")),
    );
    await super.close();
  }
}

/**
 * The SSE stream's EventSource flattens a fetch that failed into its messages, dropping the cause's code
 * that Streamable HTTP's error keeps (SSE said `fetch failed: unable to verify the first certificate`,
 * Streamable HTTP `… (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`): the code is written into the cause's message,
 * as describeWithCauses would add it, so a failure reads the same on both transports.
 */
function keepCauseCodes(base: FetchLike): FetchLike {
  return (url, init) =>
    base(url, init).catch((err: unknown) => {
      const cause = err instanceof Error ? err.cause : undefined;
      const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code : undefined;
      if (cause instanceof Error && typeof code === "string" && code !== "" && !cause.message.includes(code))
        cause.message = `${cause.message} (${code})`;
      throw err;
    });
}

/**
 * Reports the SSE stream answered (a GET that succeeded): from then on the start waits only for the
 * server's `endpoint` event, which a url that is no legacy-SSE MCP endpoint never sends.
 */
function streamOpened(base: FetchLike, onAwaitingEndpoint?: (awaiting: boolean) => void): FetchLike {
  if (onAwaitingEndpoint === undefined) return base;
  return (url, init) =>
    base(url, init).then((response) => {
      if (response.ok && (init?.method ?? "GET") === "GET") onAwaitingEndpoint(true);
      return response;
    });
}

/** Builds the transport for a rendered entry: stdio, Streamable HTTP, or SSE (`transport: sse`). */
export function createTransport(entry: McpServerEntry, options: TransportOptions = {}): Transport {
  const kind = transportKind(entry);
  if (kind === "stdio") {
    const transport = new StdioTransport({
      command: entry.command as string,
      args: entry.args,
      // The SDK's transport put its defaults (HOME, PATH, USER, ... of this process) under the entry's.
      env: { ...getDefaultEnvironment(), ...childEnvironment(entry.env, options.parentEnv) },
      ...(options.onExit === undefined ? {} : { onExit: options.onExit }),
      ...(options.group === undefined ? {} : { group: options.group }),
      ...(options.onProtocolError === undefined ? {} : { onProtocolError: options.onProtocolError }),
      ...(options.onOtherOutput === undefined ? {} : { onOtherOutput: options.onOtherOutput }),
      ...(options.onStdoutUnfinished === undefined ? {} : { onUnfinishedLine: options.onStdoutUnfinished }),
      ...(options.redact === undefined ? {} : { redact: options.redact }),
    });
    const lines = stderrLines(options.onStderr, options.onStderrUnfinished, options.redact);
    transport.stderr.on("data", lines);
    transport.stderr.on("end", lines.end);
    return transport;
  }
  const url = new URL(entry.url as string);
  const requestInit: RequestInit = { headers: entry.headers };
  const common = {
    requestInit,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.authProvider === undefined ? {} : { authProvider: options.authProvider }),
  };
  if (kind === "sse") {
    // Its stream is watched as Streamable HTTP's (`answerDroppedStreams`): batches split, and messages
    // that write their unused members as null read as they are meant.
    const fetch = streamOpened(
      answerDroppedStreams(keepCauseCodes(boundedAnswers(options.fetch ?? outboundFetch)), options.redact),
      options.onAwaitingEndpoint,
    );
    // The stream's GET alone (the EventSource's fetch): the message POSTs quote their refusals' bodies.
    const refused = new RefusedSseStream();
    return new ClosableSseTransport(
      url,
      { ...common, fetch, eventSourceInit: { fetch: refused.fetch(fetch) } },
      options.onAwaitingEndpoint,
      refused,
    );
  }
  return new StreamableHTTPClientTransport(url, {
    ...common,
    fetch: pacedServerStreams(
      answerDroppedStreams(
        acceptedNotifications(boundedAnswers(options.fetch ?? outboundFetch)),
        options.redact,
      ),
      options.streamRefusal,
    ),
  });
}
