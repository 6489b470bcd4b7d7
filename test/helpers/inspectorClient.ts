import { WebSocket } from "ws";

/** An open inspector WebSocket and the messages it has received so far (a live array). */
export interface InspectorClient {
  readonly socket: WebSocket;
  readonly messages: string[];
}

/**
 * Opens a WebSocket to the inspector relay: `target` is its port on loopback or a whole URL (the
 * gateway's own source URL). Rejects with `refused: <status>` when the handshake is refused.
 */
export function openInspectorClient(target: number | string, origin?: string): Promise<InspectorClient> {
  const url = typeof target === "number" ? `ws://127.0.0.1:${target}` : target;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, origin === undefined ? {} : { origin });
    const messages: string[] = [];
    socket.on("message", (data) => messages.push(data.toString()));
    socket.once("open", () => resolve({ socket, messages }));
    socket.once("unexpected-response", (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
    socket.once("error", reject);
  });
}
