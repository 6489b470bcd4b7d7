import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * MCP: "The initialize request MUST NOT be cancelled by clients." The SDK's client cancels every request
 * whose own timer runs out, `initialize` too, and the handshake's timer (`connect_timeout`) can run out
 * before svc gives the connect up (an interactive OAuth connect has the login's time added to its budget):
 * `notifications/cancelled` for the handshake is not sent. The handshake still fails, and svc closes the
 * transport, which ends the request (its POST, or the stdio process).
 */
export function neverCancelInitialize(transport: Transport): void {
  const send = transport.send.bind(transport);
  let initializeId: string | number | undefined;
  transport.send = (message, options) => {
    if ("method" in message) {
      if (message.method === "initialize" && "id" in message) initializeId = message.id;
      else if (
        message.method === "notifications/cancelled" &&
        initializeId !== undefined &&
        (message.params as { requestId?: unknown } | undefined)?.requestId === initializeId
      )
        return Promise.resolve();
    }
    return send(message, options);
  };
}
