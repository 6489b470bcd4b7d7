import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { rpcErrorInBody, STATELESS_VERSION, SVC_SPEAKS } from "./eras.js";

/**
 * The protocol version to ask for again when a server refused `initialize` naming the versions it supports,
 * as MCP's lifecycle shows the refusal (`{"code": -32602, "message": "Unsupported protocol version",
 * "data": {"supported": ["2025-06-18"], "requested": "2025-11-25"}}`): the newest of them svc speaks. Undefined
 * when the refusal names none (a stateless-only server's `["2026-07-28"]`, which `protocol: auto` reaches
 * through `server/discover`), or names the version asked for (then the refusal is about something else). Pure.
 */
export function offeredVersion(err: unknown, asked: string): string | undefined {
  const supported = supportedVersions(err);
  // A refusal that lists the version asked for is not about the version: asking again would not help.
  if (supported === undefined || supported.includes(asked)) return undefined;
  return SUPPORTED_PROTOCOL_VERSIONS.find((version) => supported.includes(version));
}

/**
 * Whether a refusal of `initialize` names 2026-07-28 as the only version svc speaks that the server supports
 * (`data.supported`, whatever the error's code): a stateless server's, which `server/discover` reaches.
 */
export function offersOnlyStateless(err: unknown): boolean {
  const supported = supportedVersions(err);
  return (
    supported !== undefined &&
    supported.includes(STATELESS_VERSION) &&
    !SUPPORTED_PROTOCOL_VERSIONS.some((version) => supported.includes(version))
  );
}

/**
 * For a refusal of `initialize` whose `data.supported` names no version svc speaks (nor the stateless
 * revision, which `server/discover` reaches): both sides' versions and what to do. Empty otherwise.
 */
export function refusedVersionsHint(err: unknown): string {
  const supported = supportedVersions(err)?.filter((v): v is string => typeof v === "string");
  if (supported === undefined || supported.length === 0 || supported.includes(STATELESS_VERSION)) return "";
  if (SUPPORTED_PROTOCOL_VERSIONS.some((version) => supported.includes(version))) return "";
  return ` — the server supports ${supported.join(", ")}, and ${SVC_SPEAKS}`;
}

/** The `data.supported` of a refusal, as a JSON-RPC error or as the JSON-RPC body of an HTTP error. */
function supportedVersions(err: unknown): readonly unknown[] | undefined {
  const data = err instanceof McpError ? err.data : rpcErrorInBody(err)?.data;
  const supported = (data as { supported?: unknown } | null | undefined)?.supported;
  return Array.isArray(supported) ? supported : undefined;
}

/** Has the `initialize` request sent through `transport` ask for `version` in place of the SDK's latest. */
export function askingFor(transport: Transport, version: string): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) =>
    send(
      "method" in message && message.method === "initialize"
        ? { ...message, params: { ...message.params, protocolVersion: version } }
        : message,
      options,
    );
}
