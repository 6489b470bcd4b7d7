import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { writeJsonAtomic } from "../stores/atomicFile.js";

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

/** The cached schemas, or undefined when missing, unreadable, or written for another entry. */
export function readSchemaCache(
  cacheDir: string,
  server: string,
  entry: McpServerEntry,
): CachedSchemas | undefined {
  const print = cacheKey(server, entry);
  try {
    const cached = JSON.parse(readFileSync(cachePath(cacheDir, print), "utf8")) as CachedSchemas;
    if (cached.version !== 1 || cached.fingerprint !== print || !Array.isArray(cached.tools))
      return undefined;
    return cached;
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
