import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { writeJsonAtomic } from "../stores/atomicFile.js";
import { fingerprint } from "./entryFingerprint.js";
import { listedTools } from "./looseAnswers.js";

/** What a lazy server registers from at startup (`lazy`). */
export interface CachedSchemas {
  readonly version: 1;
  readonly server: string;
  readonly fingerprint: string;
  readonly savedAt: string;
  readonly tools: Tool[];
  /**
   * `tools: false`: the server declares no tools capability; `"unanswered"`: it has no tools/list (a cache
   * of an older svc leaves the key out).
   */
  readonly capabilities: { resources: boolean; prompts: boolean; tools?: false | "unanswered" };
}

/**
 * The cache key: the fingerprint without `lazy` and `enabled`, which say whether and when to connect,
 * not what the server is. So the live connects made before `lazy: true` was set count as the
 * "earlier live connect" a lazy start needs.
 */
export function cacheKey(server: string, entry: McpServerEntry): string {
  const { lazy: _lazy, enabled: _enabled, ...identity } = entry;
  return fingerprint(server, identity as McpServerEntry);
}

export function cachePath(cacheDir: string, print: string): string {
  return join(cacheDir, `${print}.json`);
}

const CachedCapabilitiesSchema = z.object({
  resources: z.boolean(),
  prompts: z.boolean(),
  tools: z.union([z.literal(false), z.literal("unanswered")]).optional(),
});

/**
 * Whether a parsed cache file has the shape svc writes: one edited by hand, or written by another
 * program under its name, would otherwise throw where its tools are registered, and stop the gateway's
 * start (and `svc mcp list`) rather than costing a live connect.
 */
function wellFormed(cached: unknown, print: string): cached is CachedSchemas {
  if (typeof cached !== "object" || cached === null) return false;
  const { version, fingerprint: written, tools, capabilities } = cached as Record<string, unknown>;
  return (
    version === 1 &&
    written === print &&
    Array.isArray(tools) &&
    listedTools(tools, 1).skipped.length === 0 &&
    CachedCapabilitiesSchema.safeParse(capabilities).success
  );
}

/**
 * The cached schemas, or undefined when missing, unreadable, not of the shape svc writes, or written for
 * another entry: the server then connects as without a cache.
 */
export function readSchemaCache(
  cacheDir: string,
  server: string,
  entry: McpServerEntry,
): CachedSchemas | undefined {
  const print = cacheKey(server, entry);
  try {
    const cached: unknown = JSON.parse(readFileSync(cachePath(cacheDir, print), "utf8"));
    return wellFormed(cached, print) ? cached : undefined;
  } catch {
    return undefined;
  }
}

export function writeSchemaCache(
  cacheDir: string,
  server: string,
  entry: McpServerEntry,
  tools: Tool[],
  capabilities: CachedSchemas["capabilities"],
): void {
  const print = cacheKey(server, entry);
  const record: CachedSchemas = {
    version: 1,
    server,
    fingerprint: print,
    savedAt: new Date().toISOString(),
    tools,
    capabilities,
  };
  writeJsonAtomic(cachePath(cacheDir, print), record);
}
