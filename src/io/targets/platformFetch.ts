import type { Dispatcher } from "undici";
import { importExternal } from "../importExternal.js";
import { secureContextFor, systemCaCertificates } from "../mcp/systemCas.js";
import { outboundDispatcher, outboundFetch } from "../outbound/dispatcher.js";

/**
 * The connection pool platform API requests go through: `https://` platforms are verified against the
 * system's CAs, as model endpoints, MCP servers and Redis are (systemCas.ts). Node's own list alone leaves
 * out a company CA installed in the system trust store, which a self-hosted Mattermost, Matrix or Home
 * Assistant is often served under. Through the outbound proxy when one is set, as `outboundFetch` goes.
 * Undefined when the system has no CA bundle: `outboundFetch` (Node's own CAs) then. Made at the first
 * request (undici takes about a sixth of a second to load).
 */
let pool: Promise<Dispatcher | undefined> | undefined;

function systemCaPool(): Promise<Dispatcher | undefined> {
  const ca = systemCaCertificates();
  if (ca === undefined) return Promise.resolve(undefined);
  return importExternal<typeof import("undici")>("undici").then((undici) =>
    outboundDispatcher(undici, { connect: { secureContext: secureContextFor({ ca }) } }),
  );
}

/** The fetch of every platform API request (`httpCall`). */
export const platformFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
  pool ??= systemCaPool().catch((err: unknown) => {
    pool = undefined;
    throw err;
  });
  const dispatcher = await pool;
  if (dispatcher === undefined) return outboundFetch(input, init);
  // Node's fetch takes a pool of the undici package (its types are those of the undici it bundles).
  return globalThis.fetch(input, { ...init, dispatcher } as unknown as RequestInit);
}) as typeof fetch;
