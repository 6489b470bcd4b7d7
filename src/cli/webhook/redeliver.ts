import { randomBytes } from "node:crypto";
import { SvcError } from "../../errors.js";
import {
  decodePayload,
  historyDir,
  type RequestRecord,
  readHistory,
} from "../../io/stores/deliveryHistory.js";
import { parsePortOption } from "../options.js";
import { runningAddress, subscriptionUrl } from "./address.js";
import { configWithEnabledNote } from "./config.js";
import { signTestEvent } from "./signTest.js";
import { testTarget } from "./testTarget.js";

const HEADER_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * `svc webhook redeliver <delivery-id>`: the stored payload of that request sent again to its route on
 * the running gateway, signed with the route's secret, under a new delivery ID (so the idempotency check
 * does not drop it) and marked with `X-Svc-Redelivery-Of: <delivery-id>`.
 */
export async function redeliver(id: string, options: { route?: string; port?: string }): Promise<void> {
  const loaded = configWithEnabledNote();
  const matches = readHistory(historyDir(loaded.paths.home)).filter(
    (r): r is RequestRecord =>
      r.kind === "request" && r.id === id && (options.route === undefined || r.route === options.route),
  );
  if (matches.length === 0)
    throw new SvcError(
      "usage",
      `no delivery ${JSON.stringify(id)}${options.route === undefined ? "" : ` for route ${options.route}`} in the recent history (svc webhook deliveries lists them; records are kept 7 days)`,
    );
  const routes = [...new Set(matches.map((r) => r.route))];
  if (routes.length > 1)
    throw new SvcError(
      "usage",
      `delivery ${id} reached several routes (${routes.join(", ")}) — pick one with --route`,
    );
  const record = [...matches].reverse().find((r) => r.payload !== undefined);
  const payload = record === undefined ? undefined : decodePayload(record);
  if (record === undefined || payload === undefined) {
    const why = matches.at(-1)?.payload_omitted;
    throw new SvcError(
      "usage",
      `delivery ${id}: its payload was not kept (${why === "too_large" ? "larger than 256 KiB" : why === "not_accepted" ? "the route did not accept the request" : "not recorded"}), so it cannot be redelivered`,
    );
  }
  const route = record.route;
  const target = await testTarget(loaded, route);
  const secret = target.secret ?? loaded.config.platforms.webhook.secret;
  if (secret === undefined)
    throw new SvcError(
      "usage",
      `route ${route} has no secret and there is no global secret — the gateway does not serve it`,
    );
  const running = runningAddress(loaded);
  const port = options.port !== undefined ? parsePortOption(options.port) : running.port;
  if (port === undefined)
    throw new SvcError(
      "delivery_failed",
      "no gateway is running — start it with svc gateway start (a redelivery is run by the gateway), or give --port",
    );
  const url = subscriptionUrl(loaded, route, target.profile, { ...running, port });
  const newId = `redelivery-${randomBytes(4).toString("hex")}-${id}`.slice(0, 200);
  const headers: Record<string, string> = {
    "content-type": record.content_type ?? "application/json",
    "x-request-id": newId,
    "x-svc-redelivery-of": id,
    ...(record.event !== undefined && HEADER_TEXT.test(record.event)
      ? { "x-forge-event": record.event }
      : {}),
    ...signTestEvent(secret, payload, Math.floor(Date.now() / 1000)),
  };
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body: payload,
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new SvcError(
      "delivery_failed",
      `cannot reach the gateway at ${url} (${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}) — start it with svc gateway start`,
    );
  }
  process.stdout.write(
    `POST ${url} (redelivery of ${id} as ${newId})\n${response.status} ${response.statusText}\n${await response.text()}\n`,
  );
  if (response.status >= 400) process.exitCode = 1;
}
