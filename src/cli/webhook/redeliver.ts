import { randomBytes } from "node:crypto";
import type { LoadedConfig } from "../../config/load.js";
import { globalSecretKey, routeKey } from "../../config/sections/webhook.js";
import { SvcError } from "../../errors.js";
import { mayKeepHeader } from "../../gateway/deliveryHistoryHooks.js";
import { shellWord } from "../../io/shellWord.js";
import {
  decodePayload,
  EVENT_IN_BODY,
  historyDir,
  historyOfIds,
  NO_DELIVERY_ID,
  type RequestRecord,
  type RunRecord,
} from "../../io/stores/deliveryHistory.js";
import { HISTORY_KEEPS, keptFrom, requestMayBeGone } from "../../io/stores/historyStart.js";
import { terminalText } from "../../io/terminalText.js";
import { storedDeliveryId } from "../../streams/deliveryId.js";
import { EVENT_TYPE_HEADERS } from "../../streams/eventType.js";
import { runningGateway } from "../gatewayLookup.js";
import { parsePortOption } from "../options.js";
import { runningAddress, subscriptionUrl } from "./address.js";
import { coalescedNote, failedDeliveryNote, rateLimitedNote, tooLargeNote } from "./answerNote.js";
import { configWithEnabledNote } from "./config.js";
import { runningHistory } from "./historyConfig.js";
import { noListener, PORT_ZERO, sharedAdapterOff, unreachableHint } from "./listener.js";
import { meantSubscription } from "./meantSubscription.js";
import { payloadNotKept } from "./notKept.js";
import { answerWaitMs, postToGateway } from "./postToGateway.js";
import { runNotEndedNote, sharedRunNotEndedNote } from "./runNotEnded.js";
import { signTestEvent } from "./signTest.js";
import { stateUnavailableNote } from "./stateUnavailableNote.js";
import { testTarget } from "./testTarget.js";
import { settleMs, untilServed } from "./untilServed.js";

/** A header value the gateway reads back as it was recorded: no control characters, no edge blanks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const HEADER_TEXT = /^[^\x00-\x20\x7f](?:[^\x00-\x1f\x7f]*[^\x00-\x20\x7f])?$/;

/**
 * The gateway reads header values as UTF-8; node:http writes each character of a value as one byte, so
 * non-ASCII text (an event type or delivery ID as the sender wrote it) goes as its UTF-8 bytes.
 */
const utf8Header = (text: string) => Buffer.from(text, "utf8").toString("latin1");

/** The header the original named its event in (one the gateway reads), else `x-forge-event`. */
const eventHeaderOf = (record: RequestRecord): string =>
  EVENT_TYPE_HEADERS.find((name) => name === record.event_header) ?? EVENT_TYPE_HEADERS[0];

/** The event type the redelivery names in a header: none when the body named it (it is sent again). */
const headerEvent = (record: RequestRecord): string | undefined =>
  record.event_header === EVENT_IN_BODY ? undefined : record.event;

/** A header name as HTTP writes it (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The request headers the record kept (those the route's filters read), to be sent again so the
 * redelivery is filtered as the original was; none on a record written before headers were kept. A
 * pair a hand-edited line made unsendable, or that names a header the record never keeps, is left out.
 */
function keptHeaders(record: RequestRecord): Record<string, string> {
  const sent: Record<string, string> = {};
  if (!Array.isArray(record.headers)) return sent;
  for (const pair of record.headers as readonly unknown[]) {
    if (!Array.isArray(pair)) continue;
    const [name, value] = pair as unknown[];
    if (typeof name !== "string" || typeof value !== "string") continue;
    if (HEADER_NAME.test(name) && mayKeepHeader(name) && HEADER_TEXT.test(value))
      sent[name] = utf8Header(value);
  }
  return sent;
}

/** The first `length` UTF-16 units of `text`, without half of a surrogate pair at the end. */
function cutAt(text: string, length: number): string {
  const cut = text.slice(0, length);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * `svc webhook redeliver <delivery-id>`: the stored payload of that request sent again to its route on
 * the running gateway, signed with the route's secret, under a new delivery ID (so the idempotency check
 * does not drop it) and marked with `X-Svc-Redelivery-Of: <delivery-id>`.
 */
export async function redeliver(asked: string, options: { route?: string; port?: string }): Promise<void> {
  // Many requests share it: redelivering "the latest of them" would send an event nobody picked.
  if (asked === NO_DELIVERY_ID)
    throw new SvcError(
      "usage",
      `"${NO_DELIVERY_ID}" is not a delivery ID: svc webhook deliveries shows ${NO_DELIVERY_ID} for a request that had none (refused, or ignored by the route's events, filters or script, before the gateway gave it one), and such a request cannot be redelivered — have its sender send it again`,
    );
  const loaded = await configWithEnabledNote();
  // The ID as `svc webhook deliveries` shows it works too: a sender's bidi override or control character
  // in it is shown escaped there (`\u202e`), which is what the user copies.
  // And as the sender shows it when it is longer than the gateway keeps: its `sha256:` digest is recorded.
  const digest = storedDeliveryId(asked.trim());
  // Only the records of the IDs it may mean: the others are not parsed (a full history is ~176k records).
  const history = historyOfIds(
    historyDir(loaded.paths.home),
    (id) => id === asked || id === digest || terminalText(id) === asked,
  );
  const everyRoute = history.filter((r): r is RequestRecord => r.kind === "request");
  const requests = everyRoute.filter((r) => options.route === undefined || r.route === options.route);
  const idIn = (records: readonly RequestRecord[]) =>
    records.some((r) => r.id === asked)
      ? asked
      : (records.find((r) => terminalText(r.id) === asked || r.id === digest)?.id ?? asked);
  const id = idIn(requests);
  const matches = requests.filter((r) => r.id === id);
  // `--route` naming a route the delivery did not reach (a typo, `alpah`): the routes it reached are named.
  const reached = [...new Set(everyRoute.filter((r) => r.id === idIn(everyRoute)).map((r) => r.route))];
  if (matches.length === 0 && options.route !== undefined && reached.length > 0) {
    const meant = meantSubscription(options.route, reached);
    const instead =
      reached.length === 1 ? `leave out --route, or give --route ${reached[0]}` : "give --route one of them";
    throw new SvcError(
      "usage",
      `delivery ${terminalText(idIn(everyRoute))} did not reach route ${options.route} (it reached ${reached.join(", ")})${meant === "" ? ` — ${instead}` : meant}`,
    );
  }
  // Its run is here without its request (svc webhook deliveries lists it): its request rotated out since,
  // or killed before answering; with state.backend: redis, a run this instance took from the shared queue,
  // whose request another instance received (and keeps the payload of), or one killed before it recorded the
  // request (this one too, on a setup of one).
  const ranHere = history.find(
    (r): r is RunRecord =>
      r.kind === "run" && r.id === id && (options.route === undefined || r.route === options.route),
  );
  const ranAlone =
    ranHere === undefined
      ? undefined
      : `delivery ${JSON.stringify(id)} ran here (route ${ranHere.route}: svc webhook deliveries --id ${shellWord(id)} shows its run), but`;
  const gone = () =>
    ranHere !== undefined && requestMayBeGone(ranHere, keptFrom(historyDir(loaded.paths.home)));
  const shared = loaded.config.state.backend === "redis";
  // Rotation first, for both backends: what another instance may keep is said with it.
  if (matches.length === 0 && ranAlone !== undefined && gone())
    throw new SvcError(
      "usage",
      `${ranAlone} its request has been rotated out of the history since (${HISTORY_KEEPS}), with its payload — it cannot be redelivered${shared ? " — if another gateway instance received it, run svc webhook redeliver there (with that instance's SVC_HOME: it keeps the payload)" : ""}`,
    );
  if (matches.length === 0 && ranHere !== undefined && shared)
    throw new SvcError(
      "usage",
      `delivery ${JSON.stringify(id)} ran here (route ${ranHere.route}), but its request is not in this history: another gateway instance received it (run svc webhook redeliver there, with that instance's SVC_HOME: it keeps the payload), or the instance that received it was killed before it recorded the request (its payload was never kept, so it cannot be redelivered)`,
    );
  if (matches.length === 0 && ranAlone !== undefined)
    throw new SvcError(
      "usage",
      `${ranAlone} its request is not in this history: the gateway was killed after recording the event and before its history recorded the request (before its 202 left, or just after), so the payload it ran with was never kept — it cannot be redelivered`,
    );
  if (matches.length === 0)
    throw new SvcError(
      "usage",
      `no delivery ${JSON.stringify(id)}${options.route === undefined ? "" : ` for route ${options.route}`} in the recent history (svc webhook deliveries lists them; ${HISTORY_KEEPS})${historyOffNote(
        loaded,
      )}`,
    );
  const routes = [...new Set(matches.map((r) => r.route))];
  if (routes.length > 1)
    throw new SvcError(
      "usage",
      `delivery ${id} reached several routes (${routes.join(", ")}) — pick one with --route`,
    );
  // The latest request kept with its payload, unless it was a duplicate (which never ran, and may have come
  // with another body): then the request it repeated, which was taken.
  const kept = [...matches].reverse().filter((r) => r.payload !== undefined);
  const record = kept.find((r) => r.outcome !== "duplicate");
  if (matches.every((r) => r.outcome === "duplicate"))
    throw new SvcError(
      "usage",
      shared
        ? `delivery ${JSON.stringify(id)} was answered here only as a duplicate, which never ran (and may have come with another body): its request was taken by another gateway instance, which keeps its payload — run svc webhook redeliver there (with that instance's SVC_HOME)`
        : ranAlone !== undefined
          ? gone()
            ? `${ranAlone} the request that ran has been rotated out of the history since (${HISTORY_KEEPS}), with the payload it ran with; the history holds the ID only as a duplicate, which never ran and keeps a payload of its own that may be another body — it cannot be redelivered`
            : `${ranAlone} its request is not in this history: the gateway was killed after recording the event and before its history recorded the request (before its 202 left, or just after), so the payload it ran with was never kept, and the sender's retry was answered as a duplicate, which never ran and keeps a payload of its own that may be another body — it cannot be redelivered`
          : `delivery ${JSON.stringify(id)} is in the recent history only as a duplicate, which never ran (and may have come with another body); the request it repeated is no longer kept (${HISTORY_KEEPS}), so it cannot be redelivered`,
    );
  const encoding: unknown = record?.payload_encoding;
  if (encoding !== undefined && encoding !== "json" && encoding !== "utf8" && encoding !== "base64")
    // A newer version's: read as text, it would be sent as other bytes than the sender's.
    throw new SvcError(
      "usage",
      `delivery ${id}: its payload is kept in an encoding this version of svc cannot read (${JSON.stringify(encoding)}: written by a newer version), so it cannot be redelivered — redeliver it with that version`,
    );
  const payload = record === undefined ? undefined : decodePayload(record);
  if (record === undefined || payload === undefined) {
    const last = [...matches].reverse().find((r) => r.outcome !== "duplicate") as RequestRecord;
    // Refused or ignored here, it may have been taken by another instance, whose history keeps its payload.
    const elsewhere = shared
      ? " — if another gateway instance took it, run svc webhook redeliver there (with that instance's SVC_HOME)"
      : "";
    throw new SvcError(
      "usage",
      `delivery ${id}: its payload was not kept (${payloadNotKept(last)}), so it cannot be redelivered${elsewhere}`,
    );
  }
  const route = record.route;
  const target = await testTarget(loaded, route, "routes and subscriptions");
  // As `svc webhook test` says it: a disabled subscription's 404 would otherwise come with no reason.
  for (const note of target.notes) process.stderr.write(`${note}\n`);
  const secret = target.secret ?? loaded.config.platforms.webhook.secret;
  if (secret === undefined)
    throw new SvcError(
      "usage",
      // The gateway accepted the request, so it had a secret: likely WEBHOOK_SECRET in its own environment.
      `route ${route} has no secret of its own and this command sees no global secret (platforms.webhook.secret in ${loaded.paths.config}, or WEBHOOK_SECRET in its environment or ${loaded.paths.env}) — a WEBHOOK_SECRET set only in the running gateway's environment (a systemd unit, a container) cannot be seen from here: run the command with it set (WEBHOOK_SECRET=<secret> svc webhook redeliver ${id})`,
    );
  const running = await runningAddress(loaded);
  const unserved = target.unservedNote(running);
  if (unserved !== undefined) process.stderr.write(`${unserved}\n`);
  const port = options.port !== undefined ? parsePortOption(options.port, "--port", 1) : running.port;
  if (port === 0) throw new SvcError("usage", PORT_ZERO);
  if (port === undefined && running.withoutListener !== undefined)
    throw noListener(loaded, running.withoutListener);
  if (port === undefined) {
    const shared = sharedAdapterOff(loaded);
    throw new SvcError(
      "delivery_failed",
      shared !== undefined
        ? `no gateway is running here — ${shared}`
        : "no gateway is running — start it with svc gateway start (a redelivery is run by the gateway), or give --port",
    );
  }
  const url = subscriptionUrl(loaded, route, target.profile, { ...running, port });
  const newId = cutAt(`redelivery-${randomBytes(4).toString("hex")}-${id}`, 200);
  const event = headerEvent(record);
  // The kept headers first: the redelivery's own (content type, IDs, event type, signature) win.
  const headers: Record<string, string> = {
    ...keptHeaders(record),
    "content-type": utf8Header(record.content_type ?? "application/json"),
    "x-request-id": utf8Header(newId),
    "x-svc-redelivery-of": utf8Header(id),
    ...(event !== undefined && HEADER_TEXT.test(event) ? { [eventHeaderOf(record)]: utf8Header(event) } : {}),
    // A whsec_ signature covers its webhook-id, which the gateway takes as the delivery ID: the new one.
    ...Object.fromEntries(
      Object.entries(signTestEvent(secret, payload, Math.floor(Date.now() / 1000), newId)).map(
        ([name, value]) => [name, utf8Header(value)],
      ),
    ),
  };
  const post = () =>
    postToGateway(
      url,
      { headers, body: payload },
      { name: route, waitMs: answerWaitMs(loaded.config, target.route), settings: target.route },
      unreachableHint(loaded, running, port, sharedAdapterOff(loaded) ?? "start it with svc gateway start"),
    );
  // As `svc webhook test` sends: a subscription just written in Redis (created again, disabled, its secret
  // rotated) is answered as written once the gateway's poll has seen it — not run while just disabled.
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  if (shared) await sleep(settleMs(target.changedAt, Date.now()));
  const response = shared && target.enabled ? await untilServed(post, sleep) : await post();
  // The IDs and the gateway's answer quote the sender's text: shown as `svc webhook deliveries` shows it.
  process.stdout.write(
    terminalText(
      `POST ${url} (redelivery of ${id} as ${newId})\n${response.status} ${response.statusText}\n${response.text}\n`,
    ),
  );
  if (response.status >= 400) process.exitCode = 1;
  const failed = failedDeliveryNote(
    response,
    storedDeliveryId(newId),
    route,
    target.route,
    loaded.paths.gatewayLog,
  );
  if (failed !== undefined) process.stderr.write(failed);
  const unended =
    response.status !== 202
      ? undefined
      : shared
        ? await sharedRunNotEndedNote(loaded, record)
        : runNotEndedNote(record, history);
  if (unended !== undefined) process.stderr.write(unended);
  const grouped = coalescedNote(response, route, target.route, loaded.config.state.backend);
  if (grouped !== undefined) process.stderr.write(grouped);
  const tooLarge = tooLargeNote(response, payload.length, loaded, "the recorded body");
  if (tooLarge !== undefined) process.stderr.write(tooLarge);
  const limited = rateLimitedNote(response, route, loaded);
  if (limited !== undefined) process.stderr.write(limited);
  const unavailable = stateUnavailableNote(response, loaded, { id, newId, unread: target.storeUnread });
  if (unavailable !== undefined) process.stderr.write(unavailable);
  if (response.status === 401)
    process.stderr.write(
      await refusedSignatureNote(loaded, {
        route,
        id,
        newId,
        ownSecret: target.secret !== undefined,
        subscription: !Object.hasOwn(loaded.config.platforms.webhook.routes, route),
        host: new URL(url).host,
      }),
    );
}

/**
 * The note after a redelivery refused 401: the command signed it with the secret it reads now (never with
 * the original's signature), so the gateway at that address checks another one — most often a secret
 * rotated in config.yaml or .env that the running gateway has not loaded yet. A subscription's secret it
 * reads at each request: for one, the note names what makes the gateway serve the route from elsewhere.
 * Names where the secret was read (never its value) and what to run.
 */
async function refusedSignatureNote(
  loaded: LoadedConfig,
  sent: {
    readonly route: string;
    readonly id: string;
    readonly newId: string;
    readonly ownSecret: boolean;
    readonly subscription: boolean;
    readonly host: string;
  },
): Promise<string> {
  const webhook = loaded.config.platforms.webhook;
  const routeSettings = webhook.routes[sent.route];
  const source = !sent.ownSecret
    ? `the global secret (${globalSecretKey(webhook)} in ${loaded.paths.config}, or WEBHOOK_SECRET in this command's environment or ${loaded.paths.env})`
    : sent.subscription || routeSettings === undefined
      ? `subscription ${sent.route}'s secret as its store has it now (svc webhook list)`
      : `${routeKey(sent.route, routeSettings)}.secret as ${loaded.paths.config} has it now`;
  const again = `svc webhook redeliver ${shellWord(sent.id)}`;
  const why = `svc webhook deliveries --id ${shellWord(sent.newId)} shows the gateway's reason`;
  const running = await runningGateway(loaded.paths);
  if (running === undefined)
    return terminalText(
      `Note: the gateway at ${sent.host} refused the redelivery's signature (401): it was signed with ${source}, and no gateway of ${loaded.paths.home} is running (svc gateway status) — the one answering there was started with another SVC_HOME or secret: redeliver with its SVC_HOME, or start this one's (svc gateway start) and run ${again} again\n`,
    );
  const { pid } = running;
  // A gateway of another PID namespace (a container and its host sharing SVC_HOME) is signalled there.
  const hup =
    running.elsewhere === undefined
      ? `kill -HUP ${pid}`
      : `kill -HUP ${pid} where it was started, in its PID namespace ${running.elsewhere.namespace} (this command runs in ${running.elsewhere.here}): docker exec <container> kill -HUP ${pid}, or on the host`;
  // A subscription's secret is read from its store at each request (Redis: its poll, which the command
  // waited for): no reload makes the gateway take a changed one. It checks another secret only when it does
  // not serve the route from that store.
  if (sent.ownSecret && (sent.subscription || routeSettings === undefined))
    return terminalText(
      `Note: the running gateway (pid ${pid}) refused the redelivery's signature (401): it was signed with ${source}, and the gateway checks another secret. A redelivery is always signed with the route's current secret, never with the original's signature, and the gateway reads a subscription's secret from its store at each request, so a changed secret needs no reload. It checks another when it does not serve ${sent.route} from that store: a static route ${sent.route} that ${loaded.paths.config} had when the gateway last loaded it wins over the subscription (reload it: ${hup}), or the gateway was started with another state.backend or state.redis_url than ${loaded.paths.config} has now (a change of state takes effect at a restart: svc gateway stop, then svc gateway start). Then run ${again} again. ${why}.\n`,
    );
  const environment = sent.ownSecret
    ? ""
    : ` A WEBHOOK_SECRET set only in the gateway's own environment (a systemd unit, a container) is not seen here: run the command with it set (WEBHOOK_SECRET=<secret> ${again}).`;
  return terminalText(
    `Note: the running gateway (pid ${pid}) refused the redelivery's signature (401): it was signed with ${source}, and the gateway checks another secret. A redelivery is always signed with the route's current secret, never with the original's signature: most likely the secret was rotated and the gateway has not loaded it yet — reload it (${hup}), then run ${again} again.${environment} ${why}.\n`,
  );
}

/**
 * Why an ID is not in the history when the gateway records none: the running gateway's `delivery_history`
 * as it started (a change takes a restart), else config.yaml's. Empty when it records them.
 */
function historyOffNote(loaded: LoadedConfig): string {
  const configured = loaded.config.platforms.webhook.delivery_history;
  const running = runningHistory(loaded.paths);
  if (running?.on === false && configured)
    return ` — the running gateway (pid ${running.pid}) started with platforms.webhook.delivery_history false, so it records none: ${loaded.paths.config} sets it to true now, which takes effect after a restart (svc gateway stop, then svc gateway start)`;
  return configured || running?.on === true
    ? ""
    : ` — platforms.webhook.delivery_history is false in ${loaded.paths.config}, so the gateway records none: set it to true and restart the gateway`;
}
