import type { QueuedRun } from "../actors/runs.js";
import type { Clock } from "../clock.js";
import type { Filter } from "../config/sections/filters.js";
import { redactCredentials } from "../io/credentials.js";
import { cutText } from "../io/cutText.js";
import type { RequestHead } from "../io/http/core.js";
import { isoTime } from "../io/isoTime.js";
import {
  EVENT_IN_BODY,
  encodePayload,
  HISTORY_HEADER_VALUE_CHARS,
  HISTORY_HEADERS_MAX,
  HISTORY_PAYLOAD_BYTES,
  type HistoryRecord,
  type HistoryWriter,
  NO_DELIVERY_ID,
  type RequestRecord,
} from "../io/stores/deliveryHistory.js";
import { DELIVERY_ID_HEADERS } from "../streams/deliveryId.js";
import { EVENT_TYPE_HEADERS, UNNAMED_EVENT } from "../streams/eventType.js";
import { headersReadBy } from "../streams/filters.js";
import { isForm } from "../streams/stages/parse.js";
import { answeredDeliveryId, type Outcome } from "../streams/types.js";
import { notRecordedRecord } from "./notRecordedRecord.js";
import { withoutSecret } from "./payloadSecret.js";
import { refusedRecordAllowance } from "./refusedRecordAllowance.js";

/** The header a redelivery carries (`svc webhook redeliver`): the delivery ID it repeats. */
export const REDELIVERY_HEADER = "x-svc-redelivery-of";

/** Never half of an emoji: see cutText. */
const cut = (text: string) => cutText(text, 200);
/** An error as the log line gives it: a credential it quotes after `Bearer` or `Basic` hidden, then cut. */
const errorText = (text: string) => cut(redactCredentials(text));
const NOT_ACCEPTED: ReturnType<typeof encodePayload> = { payload_omitted: "not_accepted" };

/** What a run's (or dropped event's) record is made of. */
type HistoryRun = Pick<QueuedRun, "deliveryId" | "routeName" | "event" | "receivedAt">;

/** A request answered to a served route, as the history hook was given it. */
interface AnsweredRequest {
  readonly route: string;
  readonly head: RequestHead;
  readonly body: Buffer | undefined;
  readonly answer: Outcome;
  readonly refusal: string | undefined;
  /** The answer's `status` or `error` field (or its status code): the record's `outcome`. */
  readonly outcome: string;
  /** `now()` when it was answered: its record's `at`. */
  readonly answeredAt: number;
}

/**
 * Whether the route read the body itself as a JSON object, so it can stand in the history line as it is:
 * any body not labelled as a form, and one that is (`curl -d '{...}'` labels JSON so) when it parses as
 * JSON, which the gateway tries before a form's `payload` field. A form (`payload=...`, or one whose first
 * field only looks like JSON) is kept as text.
 */
function readAsJson(headers: RequestHead["headers"], body: Buffer): boolean {
  if (!isForm(headers)) return true;
  if (body[0] !== 0x7b || body.length > HISTORY_PAYLOAD_BYTES) return false;
  try {
    JSON.parse(body.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

/**
 * An accepted body as kept: the route's secret redacted (withoutSecret), unescaped in the line when the
 * route read it as a JSON object. A secret that occurred outside a JSON string (in a number: `"id":142420`
 * with the secret `4242`) leaves a redacted body that is no JSON, which would make the line unreadable
 * and lose its record: it is kept as text instead. Parsed only then: most bodies hold no secret.
 */
function keptPayload(headers: RequestHead["headers"], body: Buffer, secret: string | undefined) {
  // Over the cap the payload is not kept: its secret is not looked for (a form body's readings cost tens of ms a MB).
  if (body.length > HISTORY_PAYLOAD_BYTES) return encodePayload(body);
  const kept = withoutSecret(body, secret);
  if (!readAsJson(headers, body)) return encodePayload(kept);
  if (kept === body) return encodePayload(kept, true);
  try {
    JSON.parse(kept.toString("utf8"));
    return encodePayload(kept, true);
  } catch {
    return encodePayload(kept);
  }
}

/** The name of the first non-empty event-type header (no array per request). */
function eventHeader(headers: RequestHead["headers"]): string | undefined {
  for (const name of EVENT_TYPE_HEADERS) {
    const value = headers[name];
    if (value !== undefined && value !== "") return name;
  }
  return undefined;
}

/**
 * Where the event type came from, as the history keeps it: the header's name, except the first
 * (x-forge-event), where a redelivery names it unless told another; `body` when the body named it (a
 * redelivery sends the body again).
 */
function eventHeaderField(header: string | undefined, resolved: string | undefined): string | undefined {
  if (header === undefined) return resolved === undefined ? undefined : EVENT_IN_BODY;
  return header === EVENT_TYPE_HEADERS[0] ? undefined : header;
}

/**
 * Headers a history record never keeps, whatever a filter reads: credentials and signatures (and their
 * timestamps), and the framing, delivery-ID and content-type headers a redelivery sets itself.
 */
const NEVER_KEPT = new Set<string>([
  ...DELIVERY_ID_HEADERS,
  REDELIVERY_HEADER,
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "host",
  "expect",
  "te",
  "trailer",
  "upgrade",
]);
// `sig` only as a word part (`paypal-transmission-sig`, `x-sig256`): as bare letters it is in `x-design`.
const SECRET_HEADER =
  /key|token|secret|pass|auth|cred|session|cookie|signature|hmac|timestamp|(?:^|[-_])sig(?:[-_\d]|$)/;

/** Whether a history record may keep the request header `name` (lower-cased). */
export const mayKeepHeader = (name: string): boolean => !NEVER_KEPT.has(name) && !SECRET_HEADER.test(name);

const NO_HEADERS: readonly string[] = [];
const keptNames = new WeakMap<readonly Filter[], readonly string[]>();

/**
 * The request headers a history record keeps for a route's redelivery: those its filters read, but
 * never a secret or one the redelivery sets itself (docs/operations.md). Computed once per filter list.
 */
export function historyHeaderNames(filters: readonly Filter[] | undefined): readonly string[] {
  if (filters === undefined || filters.length === 0) return NO_HEADERS;
  let names = keptNames.get(filters);
  if (names === undefined) {
    const kept = headersReadBy(filters).filter(mayKeepHeader);
    names = kept.length === 0 ? NO_HEADERS : kept;
    keptNames.set(filters, names);
  }
  return names;
}

/** The values of `names` the request carried, as the record keeps them (bounded; see HISTORY_HEADERS_MAX). */
function keptHeaders(
  names: readonly string[],
  headers: RequestHead["headers"],
): RequestRecord["headers"] | undefined {
  const kept: [string, string][] = [];
  for (const name of names) {
    if (kept.length === HISTORY_HEADERS_MAX) break;
    const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (value !== undefined && value.length <= HISTORY_HEADER_VALUE_CHARS) kept.push([name, value]);
  }
  return kept.length === 0 ? undefined : kept;
}

/**
 * What the gateway records in the delivery history (docs/operations.md): requests, runs, deliveries.
 * `headerNames`: the request headers kept with an accepted request of a route (historyHeaderNames of its
 * filters); none when not given.
 */
export function historyHooks(
  writer: HistoryWriter,
  now: () => number,
  headerNames: (route: string) => readonly string[] = () => NO_HEADERS,
  /**
   * The clock that bounds how many refused requests each route records one by one (the rest are counted
   * in `not_recorded` records); every request is recorded without it.
   */
  refusalClock?: Pick<Clock, "elapsed" | "setTimeout" | "clearTimeout">,
  /** The secret a route checks, kept out of its payloads (see withoutSecret); none when not given. */
  secretOf: (route: string) => string | undefined = () => undefined,
) {
  // Three records per accepted event (request, run, delivery): see isoTime.
  const at = () => isoTime(now());
  /**
   * The requests answered this turn, recorded at its end (or before a record written sooner): their records
   * built in one run, not each between a request's other work (measured ~3 µs less per filter-ignored
   * request in the running gateway, `bench/cpuAb.ts`). A writer without `deferTo` records each at once.
   */
  let answered: AnsweredRequest[] = [];
  const recordAnswered = () => {
    if (answered.length === 0) return;
    const turn = answered;
    answered = [];
    for (const request of turn) recordRequest(request);
  };
  const turnHasAnswers = writer.deferTo?.(recordAnswered);
  /** Writes `entry` after the requests answered before it (a run's record after its request's). */
  const record = (entry: HistoryRecord) => {
    recordAnswered();
    writer.record(entry);
  };
  const refused =
    refusalClock === undefined
      ? undefined
      : refusedRecordAllowance({ ...refusalClock, now }, (route, counted) =>
          record(notRecordedRecord(route, counted, at(), cut)),
        );

  function recordRequest({ route, head, body, answer, refusal, outcome, answeredAt }: AnsweredRequest): void {
    const answeredBody = answer.body as { event?: unknown };
    const id = answeredDeliveryId(answer, head.headers);
    const header = eventHeader(head.headers);
    // The answer names the event type the gateway resolved (a header's, or the body's for senders
    // such as Stripe), in its body or kept aside (a coalesced 202); without one (a 401), the header's.
    // The answer's word for "none" is no event.
    const resolved =
      typeof answeredBody.event === "string"
        ? answeredBody.event === UNNAMED_EVENT
          ? undefined
          : answeredBody.event
        : answer.event;
    const event = resolved ?? (header === undefined ? undefined : head.headers[header]);
    const redeliveryOf = head.headers[REDELIVERY_HEADER];
    const contentType = head.headers["content-type"];
    // Only what the route accepted is kept: an unsigned sender cannot fill the history with payloads.
    // A 2xx, or a failed direct delivery's 502 (its id kept aside: what one would redeliver), comes only
    // after the body was authenticated and parsed as a JSON object, itself or (a form) its `payload` field.
    const accepted = (answer.status >= 200 && answer.status < 300) || answer.deliveryId !== undefined;
    const kept =
      body === undefined
        ? undefined
        : accepted
          ? keptPayload(head.headers, body, secretOf(route))
          : NOT_ACCEPTED;
    // The headers the route's filters read, with a payload a redelivery can send (none for other routes).
    const names = kept !== undefined && kept.payload_omitted === undefined ? headerNames(route) : NO_HEADERS;
    // Every key present (undefined when absent): one object shape, no spreads on the hot path.
    writer.record(
      {
        kind: "request",
        id: id ?? NO_DELIVERY_ID,
        at: isoTime(answeredAt),
        route,
        status: answer.status,
        outcome,
        // Fixed texts and config text (a filter's field): bounded as the other fields are all the same.
        reason:
          refusal !== undefined ? cut(refusal) : answer.reason === undefined ? undefined : cut(answer.reason),
        event: event === undefined ? undefined : cut(event),
        event_header: eventHeaderField(header, resolved),
        redelivery_of: redeliveryOf === undefined ? undefined : cut(redeliveryOf),
        content_type: contentType === undefined ? undefined : cut(contentType),
        headers: names.length === 0 ? undefined : keptHeaders(names, head.headers),
        payload: kept?.payload,
        payload_encoding: kept?.payload_encoding,
        payload_omitted: kept?.payload_omitted,
      },
      kept?.json,
    );
  }

  return {
    close: () => {
      try {
        refused?.close();
      } finally {
        writer.close();
      }
    },
    /**
     * Writes the records of this turn now: called once the 202s one journal sync (or one read of Redis's
     * replies) released have left, so a gateway killed before the end of that turn (its agents starting,
     * other callbacks) still has their rows.
     */
    flush: () => writer.flush(),
    /**
     * `refusal`: why the pipeline refused or ignored the request (`PipelineCtx.refusal`), kept as the record's
     * `reason`. Recorded at the turn's end, with the time it was answered; `body` and `head` are not changed
     * after the answer.
     */
    request(
      route: string,
      head: RequestHead,
      body: Buffer | undefined,
      answer: Outcome,
      refusal?: string,
    ): void {
      const answeredBody = answer.body as { status?: unknown; error?: unknown };
      const outcome = String(answeredBody.status ?? answeredBody.error ?? answer.status);
      // Whether it is recorded is decided now, as it comes (a refused one past its route's allowance is
      // only counted, at no further cost); a summary written meanwhile follows the requests before it.
      if (refused !== undefined) {
        // Never capped: a 2xx and a direct delivery's 502, answered only once the request was authenticated.
        if ((answer.status >= 200 && answer.status < 300) || answer.status === 502) refused.settle(route);
        else if (!refused.admit(route, answer.status, outcome, refusal ?? answer.reason)) return;
      }
      const request: AnsweredRequest = { route, head, body, answer, refusal, outcome, answeredAt: now() };
      if (turnHasAnswers === undefined) recordRequest(request);
      else if (answered.length > 0 || turnHasAnswers()) answered.push(request);
    },
    /**
     * A run's record carries its event type: the run may be another instance's request's (`state.backend:
     * redis`), whose record is in that instance's history only. It carries its request's receive time too,
     * so a run whose request has left the history tells a request rotated out from one never answered.
     */
    run(run: HistoryRun, err: unknown): void {
      record({
        kind: "run",
        id: run.deliveryId,
        at: at(),
        route: run.routeName,
        outcome: err === undefined ? "ok" : "failed",
        event: run.event === undefined ? undefined : cut(run.event),
        received_at: run.receivedAt,
        error: err === undefined ? undefined : errorText(err instanceof Error ? err.message : String(err)),
      });
    },
    /** An event dropped at its turn in the run queue, with why: no run, a NOTE (`RunRecord`'s `dropped`). */
    dropped(run: HistoryRun, why: string): void {
      record({
        kind: "run",
        id: run.deliveryId,
        at: at(),
        route: run.routeName,
        outcome: "dropped",
        event: run.event === undefined ? undefined : cut(run.event),
        received_at: run.receivedAt,
        error: errorText(why),
      });
    },
    delivery(
      message: { deliveryId: string; route: string },
      platform: string,
      ok: boolean,
      error?: string,
    ): void {
      record({
        kind: "delivery",
        id: message.deliveryId,
        at: at(),
        route: message.route,
        platform,
        outcome: ok ? "ok" : "failed",
        error: ok || error === undefined ? undefined : errorText(error),
      });
    },
  };
}

export type HistoryHooks = ReturnType<typeof historyHooks>;
