import type { InspectionEvent } from "xstate";
import { importExternal } from "../io/importExternal.js";
import { startInspectRelay } from "../io/inspectRelay.js";
import { isSecretKey, type Logger } from "../io/log.js";

/** As deep as the inspector library serializes (its `serializationDepthLimit`). */
const DEPTH_LIMIT = 10;

/**
 * Whether a field of an inspected object holds a secret: named as the log's secret fields are (`secret`,
 * `token`, `Authorization`, ...) or ending in one of those names, as svc's own objects name theirs in
 * camel case (the route table's `globalSecret`, which a reload's `replace` event carries) and headers in
 * words (`X-Gitlab-Token`, `X-Api-Key`).
 */
function secretNamed(key: string): boolean {
  if (isSecretKey(key)) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  const last = words.at(-1);
  if (last === undefined) return false;
  return isSecretKey(last) || (words.length > 1 && isSecretKey(`${words.at(-2)}_${last}`));
}

/**
 * A JSON-ready copy of an inspection event with every secret-named field (`secret`, `token`,
 * `Authorization`, `globalSecret`, ...) replaced by `[redacted]`: a coalescing group's context holds its
 * route, secret included, and the events are for watching the gateway work, not for reading its credentials.
 */
export function redactInspection(value: unknown, depth = 0, ancestors = new Set<object>()): unknown {
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  if (typeof value === "bigint") return String(value);
  if (value === null || typeof value !== "object") return value;
  let object: object = value;
  const json = (value as { toJSON?: () => unknown }).toJSON;
  // As JSON.stringify does: toJSON once, and what it returns is taken as it is.
  if (typeof json === "function") {
    const replaced = json.call(value);
    if (replaced === null || typeof replaced !== "object")
      return redactInspection(replaced, depth, ancestors);
    object = replaced;
  }
  return redactObject(object, depth, ancestors);
}

function redactObject(value: object, depth: number, ancestors: Set<object>): unknown {
  if (ancestors.has(value)) return "[Circular]";
  if (depth >= DEPTH_LIMIT) return Array.isArray(value) ? "[Array]" : "[Object]";
  ancestors.add(value);
  try {
    if (Array.isArray(value))
      return value.map((item) => redactInspection(item, depth + 1, ancestors) ?? null);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const kept =
        secretNamed(key) && item !== undefined ? "[redacted]" : redactInspection(item, depth + 1, ancestors);
      if (kept !== undefined) out[key] = kept;
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

export interface GatewayInspector {
  /** Pass to `startGateway({ inspect })`: receives every actor, event and snapshot of the root system. */
  readonly inspect: (event: InspectionEvent) => void;
  readonly url: string;
  stop(): void;
}

/**
 * `svc gateway run --inspect [port]`: a relay on 127.0.0.1:`port` that passes the root system's inspection
 * events over a WebSocket. Open http://127.0.0.1:<port> in a browser with internet access (it embeds
 * stately.ai/inspect), or read the raw JSON events with any WebSocket client (`ws://127.0.0.1:<port>`),
 * which works offline. The events carry prompts and payloads, so the relay listens on loopback only.
 * Rejects, naming `--inspect`, when the port cannot be taken. Logs where it listens at INFO to `logger`.
 */
export async function startInspector(port: number, logger?: Logger): Promise<GatewayInspector> {
  const { createWebSocketInspector } =
    await importExternal<typeof import("@statelyai/inspect")>("@statelyai/inspect");
  const server = await startInspectRelay(port);
  // Starts itself (autoStart); a second start() would open a second socket and break the first.
  const inspector = createWebSocketInspector({
    url: server.sourceUrl,
    serialize: (event) => redactInspection(event) as typeof event,
  });
  const url = server.url;
  // A gateway line like the others (time and level, stdout and gateway.log alike).
  logger?.info(`[inspect] Stately inspector on ${url} (raw events: ws://127.0.0.1:${port}); loopback only`);
  return {
    inspect: (event) => inspector.inspect.next?.(event),
    url,
    stop() {
      inspector.stop();
      server.stop();
    },
  };
}
