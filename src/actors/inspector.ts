import { createWebSocketInspector } from "@statelyai/inspect";
import type { InspectionEvent } from "xstate";
import { startInspectRelay } from "../io/inspectRelay.js";

export const DEFAULT_INSPECT_PORT = 8090;

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
 */
export function startInspector(port: number, note: (line: string) => void = () => {}): GatewayInspector {
  const server = startInspectRelay(port);
  // Starts itself (autoStart); a second start() would open a second socket and break the first.
  const inspector = createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
  const url = server.url;
  note(`[inspect] Stately inspector on ${url} (raw events: ws://127.0.0.1:${port}); loopback only`);
  return {
    inspect: (event) => inspector.inspect.next?.(event),
    url,
    stop() {
      inspector.stop();
      server.stop();
    },
  };
}
