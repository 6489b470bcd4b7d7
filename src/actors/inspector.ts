import { createWebSocketInspector } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";
import type { InspectionEvent } from "xstate";

export const DEFAULT_INSPECT_PORT = 8090;

export interface GatewayInspector {
  /** Pass to `startGateway({ inspect })`: receives every actor, event and snapshot of the root system. */
  readonly inspect: (event: InspectionEvent) => void;
  readonly url: string;
  stop(): void;
}

/**
 * `svc gateway run --inspect [port]`: a local bridge (`@statelyai/inspect/server`) that relays the root
 * system's inspection events over a WebSocket on `port`. Open http://localhost:<port> in a browser with
 * internet access (it embeds stately.ai/inspect), or read the raw JSON events with any WebSocket client
 * (`ws://localhost:<port>`), which works offline. The bridge listens on every interface (a limitation of
 * the package) and the events carry prompts and payloads: use it on a trusted machine only.
 */
export function startInspector(port: number, note: (line: string) => void = () => {}): GatewayInspector {
  const server = createInspectorServer({ port, autoOpen: false });
  // Starts itself (autoStart); a second start() would open a second socket and break the first.
  const inspector = createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
  const url = `http://localhost:${port}`;
  note(
    `[inspect] Stately inspector bridge on ${url} (events: ws://localhost:${port}); it shows prompts and payloads — trusted machines only`,
  );
  return {
    inspect: (event) => inspector.inspect.next?.(event),
    url,
    stop() {
      inspector.stop();
      server.stop();
    },
  };
}
