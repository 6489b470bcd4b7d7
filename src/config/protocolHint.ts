/**
 * What an `mcp_servers.<name>.protocol` value svc does not take was likely meant as: a protocol revision
 * (`2026-07-28`, `2025-06-18`), which the eras cover, or a transport (`sse`, `streamable-http`), which is a
 * key of its own. Undefined for any other value (the list of eras says enough).
 */
const TRANSPORTS = new Set(["sse", "http", "streamable-http", "streamable_http", "streamablehttp", "stdio"]);

export function protocolHint(input: unknown): string | undefined {
  if (typeof input !== "string") return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(input.trim()))
    return "protocol names an era, not a revision: stateless speaks 2026-07-28, legacy the revisions before it (2025-11-25 and earlier); auto, the default, tries legacy first, then stateless";
  // Not `transport: <the value>`: the entry decides most of it (`transport: http` on a command entry, or
  // `stdio` on a url entry, is refused as contradicting it).
  if (TRANSPORTS.has(input.trim().toLowerCase()))
    return "protocol names the MCP protocol era; the transport follows the entry: a command runs over stdio, a url speaks Streamable HTTP (or SSE, with transport: sse)";
  return undefined;
}
