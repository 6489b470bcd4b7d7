import {
  type CallToolResult,
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { httpStatusOf } from "./transportErrors.js";

/** The stateless revision whose `server/discover` replaces the `initialize` handshake. */
export const STATELESS_VERSION = "2026-07-28";
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
/** JSON-RPC code a 2026-07-28 server answers for a protocol version it does not serve. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export const DiscoverResultSchema = z.looseObject({
  supportedVersions: z.array(z.string()),
  capabilities: z.record(z.string(), z.unknown()).default({}),
  instructions: z.string().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;

/** The server's words that name the stateless revision. */
const NAMES_STATELESS = /server\/discover|stateless|2026-07-28/i;

/** Whether a JSON-RPC error code says "no handshake here": unsupported protocol version, or no such method. */
function isModernOnlyCode(code: unknown): boolean {
  return code === UNSUPPORTED_PROTOCOL_VERSION || code === ErrorCode.MethodNotFound;
}

/**
 * The HTTP status of a refused request: the Streamable HTTP transport's error carries it as `code`, the
 * SSE transport's POST says it in its message (`Error POSTing to endpoint (HTTP 400): …`).
 */
function refusalStatus(err: unknown): number | undefined {
  const status = httpStatusOf(err);
  if (status !== undefined) return status;
  const message = err instanceof Error ? err.message : "";
  const said = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(message)?.[1];
  return said === undefined ? undefined : Number(said);
}

/** The `error` object of a JSON-RPC answer that came as an HTTP error's body (`… endpoint: {…}`). */
export function rpcErrorInBody(
  err: unknown,
): { code?: unknown; message?: unknown; data?: unknown } | undefined {
  const message = err instanceof Error ? err.message : "";
  const start = message.indexOf("{");
  const end = message.lastIndexOf("}");
  if (start < 0 || end < start) return undefined;
  try {
    const answer = JSON.parse(message.slice(start, end + 1)) as { error?: unknown } | null;
    const error = answer?.error;
    return typeof error === "object" && error !== null ? error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a failed `initialize` means "this server only speaks the stateless revision": a JSON-RPC error
 * -32022 (unsupported protocol version) or -32601 (method not found: no `initialize` at all), or one whose
 * message names `server/discover` or the stateless protocol, whether it arrives as a JSON-RPC response or
 * as the body of an HTTP 4xx. An HTTP answer counts only as a refusal of the request: a 401 or 403 (whose
 * body may well name a date such as 2026-07-28) and a 5xx are real failures, as are timeouts and refused
 * connections.
 */
export function isModernOnlyRejection(err: unknown): boolean {
  if (err instanceof McpError) return isModernOnlyCode(err.code) || NAMES_STATELESS.test(err.message);
  const status = refusalStatus(err);
  if (status !== undefined) {
    if (status < 400 || status > 499 || status === 401 || status === 403) return false;
    const answer = rpcErrorInBody(err);
    if (answer === undefined) return NAMES_STATELESS.test(err instanceof Error ? err.message : "");
    return (
      isModernOnlyCode(answer.code) ||
      (typeof answer.message === "string" && NAMES_STATELESS.test(answer.message))
    );
  }
  return NAMES_STATELESS.test(err instanceof Error ? err.message : String(err));
}

/** Whether the discover result lets us speak the stateless revision. */
export function speaksStateless(result: DiscoverResult): boolean {
  return result.supportedVersions.includes(STATELESS_VERSION);
}

/** The protocol versions svc speaks, and what to do about a server that speaks none of them. */
export const SVC_SPEAKS = `svc speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")} (and ${STATELESS_VERSION} through server/discover): configure the server to offer one of them, or update svc`;

/**
 * A `server/discover` answer that leaves out ${STATELESS_VERSION}. `spoken` holds the versions it lists that
 * svc speaks through `initialize` (a server listing 2025-06-18 should answer that handshake); with none, it
 * is an MCP server of another revision (a newer one), not something that is no MCP server at all.
 */
export class UnspokenVersionsError extends Error {
  readonly spoken: readonly string[];
  constructor(readonly versions: readonly string[]) {
    super(`server/discover lists ${versions.join(", ") || "no versions"}, not ${STATELESS_VERSION}`);
    this.name = "UnspokenVersionsError";
    this.spoken = legacyVersionsSpoken(versions);
  }
}

/** The versions of `versions` that svc speaks through `initialize`. */
function legacyVersionsSpoken(versions: readonly string[]): readonly string[] {
  return versions.filter((version) => (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version));
}

const UNSPOKEN_DISCOVER = new RegExp(`server/discover lists (.*?), not ${STATELESS_VERSION}`);

/**
 * What to do when a server answered `initialize` with a protocol version svc does not speak (the SDK says
 * only `Server's protocol version is not supported: <version>`), or its `server/discover` lists none svc
 * speaks (UnspokenVersionsError listing none svc speaks through initialize either): the versions svc speaks. Empty for any other error, and for the
 * stateless revision, which `protocol: auto` reaches through `server/discover`.
 */
export function unsupportedVersionHint(text: string): string {
  // Inside the auto fallback's message the version is followed by `), and the server/discover probe…`.
  const version = /Server's protocol version is not supported: ([^\s),;]+)/.exec(text)?.[1];
  // A server/discover that lists a version svc speaks through initialize (2025-06-18) needs no such advice.
  const listed = UNSPOKEN_DISCOVER.exec(text)?.[1];
  const unspokenDiscover = listed !== undefined && legacyVersionsSpoken(listed.split(", ")).length === 0;
  if (!unspokenDiscover && (version === undefined || version === STATELESS_VERSION)) return "";
  return ` — ${SVC_SPEAKS}`;
}

/**
 * The SDK's `Server's protocol version is not supported: ` for a server that answered `protocolVersion: ""`
 * (or spaces) shows nothing where the version goes: the version as sent, quoted, so the message names it.
 */
export function withBlankVersionNamed(text: string): string {
  return text.replace(
    /(Server's protocol version is not supported:) (\s*)(?=$|\))/,
    (_, said: string, blank: string) => `${said} ${JSON.stringify(blank)} (blank)`,
  );
}

/**
 * A server of protocol version 2024-10-07 (which svc speaks) answers `tools/call` with `toolResult`, not
 * `content`: the SDK accepts it and leaves `content` empty, so the call would show nothing. Its value
 * becomes one text block (a string as it is, anything else as JSON), as a later server sends it.
 */
export function withContent(result: Record<string, unknown>): CallToolResult {
  const content = Array.isArray(result.content) ? result.content : [];
  if (!("toolResult" in result) || content.length > 0) return result as CallToolResult;
  const { toolResult, ...rest } = result;
  const text = typeof toolResult === "string" ? toolResult : (JSON.stringify(toolResult) ?? "null");
  return { ...rest, content: [{ type: "text", text }] } as CallToolResult;
}
