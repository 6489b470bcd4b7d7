import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CancelledNotification, RequestId } from "@modelcontextprotocol/sdk/types.js";

interface ProtocolInternals {
  _oncancel(notification: CancelledNotification): Promise<void>;
  _requestHandlerAbortControllers?: Map<RequestId, AbortController>;
}

/**
 * Has `client` stop its handler of a server's request when the server cancels it, request id 0 included.
 * The SDK's own handler skips a cancel whose id is falsy (`if (!requestId) return`), and an SDK server
 * numbers its requests from 0: its first sampling request or form ran on until svc's own timeout.
 */
export function cancelEveryRequestId(client: Client): void {
  const protocol = client as unknown as ProtocolInternals;
  if (!(protocol._requestHandlerAbortControllers instanceof Map)) return;
  protocol._oncancel = async (notification) => {
    const id = notification.params.requestId;
    if (id === undefined) return;
    protocol._requestHandlerAbortControllers?.get(id)?.abort(notification.params.reason);
  };
}
