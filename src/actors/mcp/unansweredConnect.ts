import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import type { ConnectStall } from "../../io/mcp/connectAttempts.js";
import {
  autoProbeFailed,
  type EraOutcome,
  outcomeText,
  shownSeconds,
  statelessRetryFailed,
} from "../../io/mcp/eraSequence.js";
import { SVC_SPEAKS } from "../../io/mcp/eras.js";

/**
 * What a connect given up (`connect_timeout`, or `svc mcp list`'s `--timeout`, named in `given`) adds when
 * the server answered nothing svc could read before that: which request went unanswered, what to check for
 * its transport, and the wait to raise — in the form of the tools/list stage's message (`noToolList`).
 */

/** The wait that ran out is the one to raise. */
function bound(given: string): "--timeout" | "connect_timeout" {
  return given.includes("(--timeout)") ? "--timeout" : "connect_timeout";
}

/** The server answered the handshake but not the `tools/list` after it. */
export function noToolList(given: string): string {
  return `the server answered the handshake but not tools/list, the listing of its tools (a fault of the server, or a list slow to build: raise ${bound(given)})`;
}

const CHECK = {
  stdio:
    "check that command and args start an MCP server that speaks stdio, JSON-RPC on its stdin and stdout",
  http: "check that url is the endpoint of an MCP server that speaks Streamable HTTP, not legacy SSE (for that, set transport: sse)",
  sse: "check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http)",
} as const;

/** How far the connect got before it was given up. */
export interface ConnectReached {
  /** The handshake's transport was started: past a url's preflight. */
  readonly handshakeSent: boolean;
  /** An SSE server's event stream opened (its GET answered): only then is the handshake's request sent. */
  readonly streamOpened: boolean;
  /** A url server's connections stopped at its TCP connect or TLS handshake: none was made. */
  readonly stall?: ConnectStall | undefined;
  /**
   * What became of the era requests before the one sent last (`auto`'s initialize refused as modern-only,
   * `stateless`'s failed server/discover probe): none when that one was the first.
   */
  readonly fellBack?: readonly EraOutcome[];
  /** How long the request sent last had waited when the connect was given up (ms). */
  readonly waitedMs?: number | undefined;
}

/**
 * No connection was made: the server never answered the TCP connect, or took it and never answered TLS (a
 * hung TLS server, a proxy or middlebox that holds the connection). No request reached the server, so its
 * transport is not in question, and raising the wait would not help: each attempt is given up after at
 * most 10 s.
 */
function stalled({ stage, address }: ConnectStall): string {
  return stage === "tls"
    ? `the TLS handshake with ${address} did not complete (a server or proxy that takes the TCP connection and never answers TLS): check that the url's host and port serve HTTPS, and any proxy or firewall between svc and the server`
    : `the TCP connect to ${address} did not complete (nothing answered it: a host that is down, or a firewall that drops the connection): check the url's host and port, and any firewall between svc and the server`;
}

/**
 * The server did not answer the handshake, or, for a url, not even the preflight's HEAD or GET before it
 * (with a short `connect_timeout` that is where the time ran out), or for an SSE server, the GET that opens
 * its event stream: the handshake's request is sent only on a stream that opened and named its endpoint.
 * A url server that took no connection, or no TLS handshake, is named so instead (`stalled`); a connect that
 * went on to the era sequence's second request names both (`afterFallback`).
 */
export function noAnswer(
  entry: Pick<McpServerEntry, "command" | "transport" | "protocol">,
  given: string,
  reached: ConnectReached,
): string {
  if (reached.stall !== undefined) return stalled(reached.stall);
  const kind = transportKind(entry as McpServerEntry);
  const before = reached.fellBack?.[0];
  if (reached.handshakeSent && before !== undefined)
    return afterFallback(entry, kind, given, before, reached);
  const request = entry.protocol === "stateless" ? "server/discover" : "initialize";
  // The preflight probes an SSE stream with GET only (docs/mcp.md, Preflight).
  const probe = kind === "sse" ? "GET" : "HEAD or GET";
  const what = !reached.handshakeSent
    ? `the server did not answer the ${probe} of its url that svc sends before the handshake`
    : kind === "sse" && !reached.streamOpened
      ? `the event stream did not open: the server did not answer the GET of its url that opens it (so the handshake, ${request}, was never sent)`
      : `the server did not answer the handshake (${request}, MCP's first request)`;
  return `${what}: ${CHECK[kind]} — or, for a server slow to start, raise ${bound(given)}`;
}

/**
 * The era sequence went on to its next request (`auto`'s server/discover probe, `stateless`'s legacy
 * initialize retry), which was left unanswered: both requests are named, as the error of a sequence whose
 * second request failed names them, with the wait the last one got no answer within. A server that answered
 * the first (refused it) takes requests on this transport, so what to check is whether it is an MCP server;
 * one whose `server/discover` listed only versions svc does not speak is an MCP server of another revision,
 * so the message ends, as the sequence's error does, with the versions svc speaks; one whose
 * `server/discover` listed a version of `initialize` svc speaks is a server slow to answer it.
 */
function afterFallback(
  entry: Pick<McpServerEntry, "protocol">,
  kind: keyof typeof CHECK,
  given: string,
  before: EraOutcome,
  reached: ConnectReached,
): string {
  // An SSE request is sent only once the stream of its own transport opened.
  const last =
    kind === "sse" && !reached.streamOpened
      ? "its event stream did not open: the server did not answer the GET of its url that opens it, so it was never sent"
      : `got no answer within ${shownSeconds(reached.waitedMs ?? 0)} s`;
  const answered = "answer" in before;
  if (answered && before.unspokenVersions === true)
    return `${statelessRetryFailed(outcomeText(before), last)} — ${SVC_SPEAKS}`;
  // A server/discover listing 2025-06-18 says the server speaks the initialize it left unanswered.
  const legacy = answered ? before.legacyVersions : undefined;
  const check =
    legacy !== undefined
      ? `its server/discover lists ${legacy.join(", ")}, which svc speaks through initialize, so the server should have answered the retry`
      : answered
        ? "check that this is an MCP server"
        : CHECK[kind];
  const slow = `or, for a server slow to ${answered ? "answer" : "start"}, raise ${bound(given)}`;
  return entry.protocol === "stateless"
    ? `${statelessRetryFailed(outcomeText(before), last)}: ${check} — ${slow}`
    : `${autoProbeFailed(outcomeText(before), `failed too (${last})`)} — ${check} — ${slow}`;
}
