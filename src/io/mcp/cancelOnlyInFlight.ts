import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { scopedSignal } from "../../clock.js";

/**
 * Has each request `client` makes with a signal follow that signal only until the request settles (see
 * `scopedSignal`). The SDK's `request` never removes the abort listener it adds to its signal, and a task's
 * `tools/call` and each of its polls (`tasks/get`, `tasks/result`) share one: the call's timeout or the run's
 * end sent `notifications/cancelled` for every one of them, the ones the server had answered included. Now
 * only a request still in flight is cancelled.
 */
export function cancelOnlyInFlight(client: Client): void {
  const request = client.request.bind(client);
  client.request = ((message: never, schema: never, options?: RequestOptions) => {
    const outer = options?.signal;
    if (outer === undefined) return request(message, schema, options);
    return scopedSignal([outer], (signal) => request(message, schema, { ...options, signal }));
  }) as typeof client.request;
}
