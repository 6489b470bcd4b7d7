import type { TempHome } from "./home.js";

/**
 * Writes `deliveries/history.jsonl` holding one request line for `svc webhook redeliver` to read: a JSON
 * body taken by `route` (UTF-8, `application/json`) and answered `status` with `outcome`, received now.
 */
export function writeRecordedRequest(
  home: TempHome,
  request: { id: string; route: string; status: number; outcome: string; payload: string },
): void {
  const line = {
    kind: "request",
    id: request.id,
    at: new Date().toISOString(),
    route: request.route,
    status: request.status,
    outcome: request.outcome,
    content_type: "application/json",
    payload_encoding: "utf8",
    payload: request.payload,
  };
  home.write("deliveries/history.jsonl", `${JSON.stringify(line)}\n`, 0o600);
}
