import { createHash } from "node:crypto";
import type { McpServerEntry } from "../../config/sections/mcp.js";

// Apart from the schema cache (./schemaCache.ts), which reads tool lists with the MCP SDK's schemas: `svc config
// check` renders each server's entry with its fingerprint and loads none of the SDK for it.

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, stable((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * Hash of the server name and its entry as configured (before `${VAR}` rendering, so no secret is needed
 * and none is hashed): any edit to the entry gives a new fingerprint, and the old cache reads as stale.
 */
export function fingerprint(server: string, entry: McpServerEntry): string {
  return createHash("sha256")
    .update(JSON.stringify(stable({ server, entry })))
    .digest("hex")
    .slice(0, 32);
}
