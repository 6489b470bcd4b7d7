import { randomUUID } from "node:crypto";
import { settingKey } from "../../config/sections/webhook.js";
import { SvcError } from "../../errors.js";
import { jsonErrorLocation } from "../../io/jsonErrorLocation.js";
import { terminalText } from "../../io/terminalText.js";
import { resolveDeliveryId } from "../../streams/deliveryId.js";
import { resolveEventType } from "../../streams/eventType.js";
import { refuseCurlFile } from "../curlFileArgument.js";
import { runningGateway } from "../gatewayLookup.js";
import { parsePortOption } from "../options.js";
import { runningAddress, subscriptionUrl } from "./address.js";
import {
  coalescedNote,
  failedDeliveryNote,
  rateLimitedNote,
  tooLargeNote,
  unfilledMessageNote,
  ungroupedNote,
} from "./answerNote.js";
import { configWithEnabledNote } from "./config.js";
import { noListener, PORT_ZERO, sharedAdapterOff, unreachableHint } from "./listener.js";
import { answerWaitMs, postToGateway } from "./postToGateway.js";
import { signTestEvent } from "./signTest.js";
import { testTarget } from "./testTarget.js";
import { settleMs, untilServed } from "./untilServed.js";

/** An event type sent as a header: printable ASCII (node:http refuses control characters and non-Latin-1). */
const HEADER_EVENT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const PAYLOAD_EXAMPLE = `e.g. --payload '{"event_type":"push","ref":"refs/heads/main"}'`;

/**
 * `--payload`, checked before anything is sent: the gateway answers 400 to a body that is not a JSON
 * object, so the mistake is named here, where it was made (with its line and column).
 */
function parsePayload(body: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    refuseCurlFile("--payload", body);
    const { line, column } = jsonErrorLocation(body, err);
    const where = body.includes("\n") ? `line ${line}, column ${column}` : `character ${column}`;
    throw new SvcError(
      "usage",
      `--payload: not valid JSON at ${where} (${(err as Error).message.replace(/, .*is not valid JSON$/s, "")}) — give a JSON object in single quotes, ${PAYLOAD_EXAMPLE}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new SvcError(
      "usage",
      `--payload: the gateway accepts a JSON object, got ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`} — ${PAYLOAD_EXAMPLE}`,
    );
  return parsed;
}

/** `svc webhook test <name>`: a signed test event to the dynamic subscription on the running gateway. */
export async function sendTest(
  name: string,
  options: { payload?: string; event?: string; port?: string },
): Promise<void> {
  const parsed = options.payload === undefined ? undefined : parsePayload(options.payload);
  const loaded = await configWithEnabledNote();
  const target = await testTarget(loaded, name, "subscriptions");
  for (const note of target.notes) process.stderr.write(`${note}\n`);
  // The header wins over the payload's own event type at the gateway, so it must not contradict --payload:
  // the type is read from the body as the gateway reads it (event_type, then Stripe's and Standard
  // Webhooks' type, ...), or a Stripe payload's test would be sent as the subscription's first event.
  const payloadEvent = parsed === undefined ? undefined : resolveEventType({}, parsed);
  const secret = target.secret ?? loaded.config.platforms.webhook.secret;
  if (secret === undefined)
    throw new SvcError(
      "usage",
      `${name} has no secret of its own and there is no global secret (platforms.webhook.secret in ${loaded.paths.config}, or WEBHOOK_SECRET in this command's environment or ${loaded.paths.env}) — unless the running gateway has WEBHOOK_SECRET in its own environment (a systemd unit, a container), which this command cannot see (run it with WEBHOOK_SECRET=<secret> set then), the gateway does not serve it; set one with svc webhook subscribe ${name} --secret <secret>`,
    );
  if (options.event !== undefined && !HEADER_EVENT.test(options.event))
    throw new SvcError(
      "usage",
      `--event ${JSON.stringify(options.event)}: cannot be sent as the X-Forge-Event header (it must be printable ASCII, non-empty and without spaces at either end, which HTTP drops) — leave --event out and put the type in the payload's event_type (--payload '{"event_type": ...}')`,
    );
  const event = options.event ?? payloadEvent ?? target.events?.[0] ?? "test";
  // The default payload names the same event: one a header cannot carry (`--events Überweisung`) reaches
  // the gateway in the body alone, and must not read "test" there.
  const body =
    options.payload?.trim() ??
    JSON.stringify({
      event_type: event,
      message: `Test event from svc webhook test ${name}`,
      sent_at: new Date().toISOString(),
    });
  // The subscription's first event, which no header can carry, for a --payload without an event_type: the
  // gateway would see no event type at all, and a route with events answers "ignored" (event "unknown").
  if (
    options.event === undefined &&
    parsed !== undefined &&
    payloadEvent === undefined &&
    !HEADER_EVENT.test(event)
  )
    process.stderr.write(
      `Note: ${name}'s first event ${JSON.stringify(event)} cannot be sent as the X-Forge-Event header (only printable ASCII fits one), and --payload has no event_type, so the gateway gets no event type — add "event_type": ${JSON.stringify(event)} to --payload\n`,
    );
  const running = await runningAddress(loaded);
  // INSECURE_NO_AUTH on a gateway bound off loopback: its 404 would otherwise come with no reason.
  const unserved = target.unservedNote(running);
  if (unserved !== undefined) process.stderr.write(`${unserved}\n`);
  const port = options.port !== undefined ? parsePortOption(options.port, "--port", 1) : running.port;
  if (port === undefined && running.withoutListener !== undefined)
    throw noListener(loaded, running.withoutListener);
  if ((port ?? loaded.config.platforms.webhook.port) === 0)
    throw new SvcError(
      "usage",
      options.port !== undefined
        ? PORT_ZERO
        : `${settingKey(loaded.config.platforms.webhook, "port")} is 0 in ${loaded.paths.config} and no gateway is running, so there is no port to send to — start it with svc gateway start, or give --port <port>`,
    );
  const url = subscriptionUrl(loaded, name, target.profile, {
    ...running,
    ...(port === undefined ? {} : { port }),
  });
  const headers = {
    "content-type": "application/json",
    // An event type a header cannot carry (non-ASCII, a newline) is left to the payload's event_type.
    ...(HEADER_EVENT.test(event) ? { "x-forge-event": event } : {}),
    "x-request-id": `svc-test-${randomUUID()}`,
    ...signTestEvent(secret, body, Math.floor(Date.now() / 1000)),
  };
  const post = () =>
    postToGateway(
      url,
      { headers, body },
      { name, waitMs: answerWaitMs(loaded.config, target.route), settings: target.route },
      unreachableHint(
        loaded,
        running,
        port,
        sharedAdapterOff(loaded) ?? "start it with svc gateway start (or svc gateway run)",
      ),
    );
  // A subscription just written in Redis is served as written once the gateway's poll has seen it.
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const shared = loaded.config.state.backend === "redis";
  if (shared) await sleep(settleMs(target.changedAt, Date.now()));
  const response = shared && target.enabled ? await untilServed(post, sleep) : await post();
  // The answer is the text of whatever listens at that address (another process, when no gateway of this
  // SVC_HOME runs): shown as `svc webhook redeliver` shows it, its escape sequences and bidi controls escaped.
  process.stdout.write(
    terminalText(`POST ${url}\n${response.status} ${response.statusText}\n${response.text}\n`),
  );
  if (response.status >= 400) process.exitCode = 1;
  const failed = failedDeliveryNote(
    response,
    resolveDeliveryId(headers),
    name,
    target.route,
    loaded.paths.gatewayLog,
  );
  if (failed !== undefined) process.stderr.write(failed);
  const grouped = coalescedNote(response, name, target.route, loaded.config.state.backend);
  if (grouped !== undefined) process.stderr.write(grouped);
  const ungrouped = await ungroupedNote(response, name, target.route, body, event);
  if (ungrouped !== undefined) process.stderr.write(ungrouped);
  const unfilled = unfilledMessageNote(response, name, target.route, body, event);
  if (unfilled !== undefined) process.stderr.write(unfilled);
  const tooLarge = tooLargeNote(response, Buffer.byteLength(body), loaded, "the test event's body");
  if (tooLarge !== undefined) process.stderr.write(tooLarge);
  const limited = rateLimitedNote(response, name, loaded);
  if (limited !== undefined) process.stderr.write(limited);
  // No gateway of this SVC_HOME runs, yet something answered "unknown route" or "invalid signature": a
  // gateway of another SVC_HOME (started from another shell), which knows neither this subscription nor
  // its secret. (With state.backend: redis, gateways of other homes serve the shared subscriptions.)
  const foreign =
    (response.status === 401 || response.status === 404) &&
    options.port === undefined &&
    !shared &&
    (await runningGateway(loaded.paths)) === undefined;
  if (foreign)
    process.stderr.write(
      `Note: no gateway of ${loaded.paths.home} is running (svc gateway status), so this answer came from another process listening at ${new URL(url).host} — likely a gateway started with another SVC_HOME, which does not serve this subscription: start this one's with svc gateway start, or run svc webhook subscribe and test with that gateway's SVC_HOME\n`,
    );
}
