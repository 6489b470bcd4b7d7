import { join } from "node:path";
import type { LoadedConfig } from "../../config/load.js";
import { svcHome } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { shellWord } from "../../io/shellWord.js";
import {
  type DeliverySummary,
  HISTORY_FILE,
  HISTORY_PREVIOUS_FILE,
  historyDir,
  NO_DELIVERY_ID,
  type RequestRecord,
  type RunRecord,
  recentDeliveries,
} from "../../io/stores/deliveryHistory.js";
import {
  type DeliveryFilter,
  type PlacedDelivery,
  placedDeliveries,
  recordedRoutes,
} from "../../io/stores/filteredDeliveries.js";
import { openGeneration, type ScanOptions } from "../../io/stores/historyScan.js";
import {
  HISTORY_KEEPS,
  holdsExpiredRecords,
  keptFrom,
  requestMayBeGone,
} from "../../io/stores/historyStart.js";
import { ownRecord } from "../../io/stores/subscriptions.js";
import { terminalText } from "../../io/terminalText.js";
import { SUPERSEDED_REASON } from "../../streams/stages/dispatch.js";
import { NOT_AMONG_EVENTS, PING_NOT_LISTED } from "../../streams/stages/events.js";
import { formatTable } from "../format.js";
import { assertHomeInSight } from "../homeInSight.js";
import { deliveriesFilter, type FilterOptions, filterWords } from "./deliveriesFilter.js";
import { historyConfig, runningHistory } from "./historyConfig.js";
import { meantSubscription } from "./meantSubscription.js";
import { notRecordedNote } from "./notRecordedNote.js";
import { withSubscriptionStore } from "./subscriptionStoreFor.js";

/**
 * A summary as `--json` prints it: everything but the payload (whether one is kept, instead). A run with no
 * request in this history has `status` and `outcome` null, and the event type its run record kept.
 */
function asJson(summary: DeliverySummary, shared: boolean) {
  const { id, at, route, request, run, delivery, notRecorded } = summary;
  if (notRecorded !== undefined) {
    const { since, count, answers, others } = notRecorded;
    return {
      id,
      at,
      route,
      status: null,
      outcome: null,
      payload_kept: false,
      run: null,
      delivery: null,
      not_recorded: { since, count, answers, ...(others === undefined ? {} : { others }) },
    };
  }
  const {
    payload,
    payload_encoding: _e,
    kind: _k,
    ...rest
  } = request ?? {
    id,
    at,
    route,
    status: null,
    outcome: null,
    // Left out of the JSON when undefined: none named, or a record an older svc wrote.
    event: run?.event,
  };
  return {
    ...rest,
    // Said as the NOTE says it (an ignore by the route's events names the recorded event type).
    ...(request?.reason === undefined ? {} : { reason: shownReason(request, request.reason) }),
    payload_kept: payload !== undefined,
    run:
      run === undefined
        ? null
        : { outcome: run.outcome, at: run.at, ...(run.error ? { error: run.error } : {}) },
    // Beside `run: null` where NOTE says the run has not ended: null alone reads the same as a run lost.
    ...(runNotEnded(summary, shared) ? { run_ended: false } : {}),
    delivery:
      delivery === undefined
        ? null
        : {
            platform: delivery.platform,
            outcome: delivery.outcome,
            at: delivery.at,
            ...(delivery.error ? { error: delivery.error } : {}),
          },
  };
}

/** Whether `name` is a config.yaml route or a subscription (a store that cannot be read does not say no). */
async function namesRoute(loaded: LoadedConfig, name: string): Promise<boolean> {
  if (Object.hasOwn(loaded.config.platforms.webhook.routes, name)) return true;
  return withSubscriptionStore(
    loaded,
    async (store) => ownRecord((await store.read()).records, name) !== undefined,
  ).catch(() => true);
}

type DeliveriesOptions = { limit?: string; skip?: string; json?: boolean } & FilterOptions;

/**
 * `svc webhook deliveries [route] [--limit N] [--skip N] [--status S] [--id ID] [--since T] [--until T]
 * [--before ID] [--route R] [--json]`: recent requests, newest first, those the filters given match, past
 * the first `--skip` of them.
 */
export async function deliveries(argument: string | undefined, options: DeliveriesOptions): Promise<void> {
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  // Digits only, as --port takes them: Number() would also read "0x10", "1e3" or " 3" as a count.
  if ((options.limit !== undefined && !/^\d+$/.test(options.limit)) || !Number.isInteger(limit) || limit < 1)
    throw new SvcError("usage", `--limit: expected a whole number of at least 1, got "${options.limit}"`);
  const skip = options.skip === undefined ? 0 : Number(options.skip);
  if ((options.skip !== undefined && !/^\d+$/.test(options.skip)) || !Number.isSafeInteger(skip))
    throw new SvcError("usage", `--skip: expected a whole number (0 or more), got "${options.skip}"`);
  const { filter, route } = deliveriesFilter(argument, options);
  // An SVC_HOME this user may not look into: neither its config.yaml nor its history is known to be missing.
  const start = svcHome();
  assertHomeInSight(join(historyDir(start), HISTORY_FILE), start);
  const { home, loaded } = await historyConfig();
  // Read newest first, no further back than the summaries shown need (the whole history when fewer); with
  // filters, keeping only the records of the rows that match.
  // A route alone is a filter too: read as one, the records of the other routes are not kept (a route with
  // few records would otherwise hold the whole history in memory).
  const dir = historyDir(home);
  const { readWhole, all, next } = readPage(dir, limit, skip, filter, route, options);
  const read = readWhole.slice(skip);
  const shown = read.slice(0, limit);
  // Rows there are, all within the --skip: the page past the last.
  if (skip > 0 && shown.length === 0 && readWhole.length > 0) {
    const none = `No more rows: --skip ${skip} passes all ${readWhole.length} that match${filter === undefined ? "" : ` ${filterWords(route, options)}`}.`;
    if (options.json === true) process.stdout.write("[]\n");
    process[options.json === true ? "stderr" : "stdout"].write(
      `${options.json === true ? "Note: " : ""}${none}\n`,
    );
    return;
  }
  // A name with no record that is no route either is a typo: "No deliveries recorded" would say it got none.
  // (Without a config that loads, the routes are not known: the name is not judged.)
  if (
    shown.length === 0 &&
    route !== undefined &&
    loaded !== undefined &&
    !(await namesRoute(loaded, route))
  ) {
    const routes = Object.keys(loaded.config.platforms.webhook.routes);
    const subscriptions = await withSubscriptionStore(loaded, async (store) =>
      Object.keys((await store.read()).records),
    ).catch(() => []);
    // A misspelt name (`deplys`) is named: the route, subscription or recorded route meant.
    const recorded = all === undefined ? [...recordedRoutes(dir)] : all.map((s) => s.route);
    const meant = meantSubscription(route, [...routes, ...subscriptions, ...recorded]);
    const where = `${routes.length === 0 ? "config.yaml has no routes" : `routes of config.yaml: ${routes.join(", ")}`}; svc webhook list shows the subscriptions`;
    throw new SvcError(
      "usage",
      `no route or subscription is named ${JSON.stringify(route)} and none by that name is in the recent history${meant === "" ? ` — ${where}` : `${meant} (${where})`}`,
    );
  }
  // The running gateway records as it started (a change takes a restart), whatever config.yaml says since.
  const configured = loaded?.config.platforms.webhook.delivery_history;
  const running = loaded === undefined ? undefined : runningHistory(loaded.paths);
  const recordsNone =
    running?.on === false && configured === true
      ? `: the running gateway (pid ${running.pid}) started with platforms.webhook.delivery_history false, so it records none — ${loaded?.paths.config} sets it to true now, which takes effect after a restart (svc gateway stop, then svc gateway start).`
      : configured === false && running?.on !== true
        ? `: platforms.webhook.delivery_history is false in ${loaded?.paths.config}, so the gateway records none — set it to true and restart the gateway.`
        : undefined;
  // Nothing recorded yet by a gateway that records, though config.yaml turned the history off since its start.
  const recordsUntilRestart =
    running?.on === true && configured === false
      ? ` yet: the running gateway (pid ${running.pid}) records them until it restarts — platforms.webhook.delivery_history is false in ${loaded?.paths.config}, which takes effect at its next start.`
      : undefined;
  // With nothing recorded at all because the history is off, that is said instead (below).
  if (filter !== undefined && shown.length === 0 && recordsNone === undefined) {
    if (options.json === true) process.stdout.write("[]\n");
    const none = `No recorded deliveries match ${filterWords(route, options)} (${route === undefined ? "svc webhook deliveries without them" : `svc webhook deliveries ${route} without the other filters`} lists the recent ones; records are kept 7 days).`;
    if (options.json === true) process.stderr.write(`Note: n${none.slice(1)}\n`);
    else process.stdout.write(`${none}\n`);
    return;
  }
  // Records there are, but none within the retention: not the setting's doing.
  const onlyOlder =
    shown.length === 0 &&
    recordsNone === undefined &&
    recordsUntilRestart === undefined &&
    holdsExpiredRecords(dir, route)
      ? ": none in the last 7 days (records are kept 7 days; the history holds only older ones)."
      : undefined;
  const shared = loaded?.config.state.backend === "redis";
  if (options.json === true) {
    process.stdout.write(
      `${JSON.stringify(
        shown.map((summary) => asJson(summary, shared)),
        null,
        2,
      )}\n`,
    );
    // The one reason an empty list is no answer at all; on stderr, so stdout stays the JSON.
    const why = recordsNone ?? recordsUntilRestart ?? onlyOlder;
    if (shown.length === 0 && why !== undefined)
      process.stderr.write(
        `Note: no deliveries recorded${route === undefined ? "" : ` for ${route}`}${why}\n`,
      );
    if (next !== undefined) process.stderr.write(next);
    return;
  }
  if (shown.length === 0) {
    const none = `No deliveries recorded${route === undefined ? "" : ` for ${route}`}`;
    process.stdout.write(
      recordsNone === undefined
        ? recordsUntilRestart === undefined
          ? onlyOlder === undefined
            ? `${none} (the gateway records them with platforms.webhook.delivery_history, on by default).\n`
            : `${none}${onlyOlder}\n`
          : `${none}${recordsUntilRestart}\n`
        : `${none}${recordsNone}\n`,
    );
    return;
  }
  const unanswered = shared ? SHARED_NO_REQUEST_NOTE : NO_REQUEST_NOTE;
  // Where a run is shown without its request: whether that request may have left the history (a
  // duplicate's NOTE says so; with `state.backend: redis`, the run's own too).
  const from = shown.some((s) => s.request === undefined) ? keptFrom(dir) : undefined;
  process.stdout.write(`${deliveriesTable(shown, unanswered, shared, from)}\n`);
  if (next !== undefined) process.stderr.write(next);
}

/**
 * The rows that match, newest first, up to one more than the page shows past the `--skip` (whether the limit
 * cuts through rows sharing the last row's time), the whole history's summaries when all of it was read,
 * and the next page's note. All are read from one generation of the history, held open and cut at its size
 * when opened: a row's line is counted from the newest line, so rows of reads apart (the gateway appending
 * meanwhile) could not be compared. `scan.opened` is called after each file is opened (tests append there).
 */
export function readPage(
  dir: string,
  limit: number,
  skip: number,
  filter: DeliveryFilter | undefined,
  route: string | undefined,
  options: DeliveriesOptions,
  scan: ScanOptions = {},
): { readWhole: DeliverySummary[]; all: DeliverySummary[] | undefined; next: string | undefined } {
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, scan.opened);
  try {
    const now = Date.now();
    const held: ScanOptions = { ...scan, held: generation };
    const placed =
      filter === undefined && route === undefined
        ? undefined
        : placedDeliveries(dir, skip + limit + 1, filter ?? { route }, now, held);
    const whole =
      placed === undefined ? recentDeliveries(dir, skip + limit + 1, route, now, held) : undefined;
    // The whole history's rows are placed only when a page follows; the rows shown are then those placed.
    const placedAll =
      whole !== undefined && whole.shown.length > skip + limit
        ? placedDeliveries(dir, skip + limit + 1, {}, now, held)
        : undefined;
    const rows = placed ?? placedAll;
    const readWhole = rows?.map(({ summary }) => summary) ?? whole?.shown ?? [];
    // The row --before names: its ID's newest row (in the history, across the filters), told from a row alike
    // in all else by its line.
    const newestOfId = (row: PlacedDelivery) =>
      placedDeliveries(dir, 1, { id: (id) => id === row.summary.id }, now, held)[0];
    const next = nextPage(rows?.slice(skip) ?? [], limit, skip, route, options, newestOfId);
    return { readWhole, all: whole?.all, next };
  } finally {
    generation.close();
  }
}

/** A row's time as the table shows it (to the second), which `--until` takes back. */
const shownTime = (at: string) => at.replace(/\.\d+Z$/, "Z");

/** The same row: made by the same line (rows of one ID and route can share their time to the millisecond). */
const sameRow = (a: PlacedDelivery, b: PlacedDelivery) => a.line === b.line;

/**
 * Where the next page starts, so that no row shown is listed again: `--before` a delivery ID whose newest
 * row (the one it names) is shown, and `--skip` the rows shown after that one (rows without a delivery ID,
 * `-`, which --before cannot name, or older rows of the ID). Of the last three shown with an ID, the latest
 * whose newest row is shown; else, on a page that --before gave, the same --before past this page's rows.
 * Undefined when neither is there (the IDs shown have newer rows this listing leaves out).
 */
function nextCursor(
  shown: readonly PlacedDelivery[],
  skip: number,
  before: string | undefined,
  newestOfId: (row: PlacedDelivery) => PlacedDelivery | undefined,
): { id: string; skip: number } | undefined {
  const withId = shown
    .map((row, at) => ({ row, at }))
    .reverse()
    .filter(({ row }) => row.summary.id !== NO_DELIVERY_ID)
    .slice(0, 3);
  for (const { row } of withId) {
    const newest = newestOfId(row);
    const at = newest === undefined ? -1 : shown.findIndex((r) => sameRow(r, newest));
    if (at >= 0) return { id: row.summary.id, skip: shown.length - 1 - at };
  }
  return before === undefined ? undefined : { id: before, skip: skip + shown.length };
}

/**
 * The note that gives the next page when more rows follow the page (`read`: one row more than the limit)
 * and the last row shown is not one `--before` its delivery ID pages on from exactly: the limit cuts
 * through rows sharing its time (`--until` that time would list the same rows again), or it has no
 * delivery ID (`-`), or it is not its ID's newest row, the one --before names (a duplicate or another
 * route's row of the ID is newer, shown above it or left out by the filters: --before it would list rows
 * again, or leave rows out). The note gives `--before` a delivery ID and `--skip` the rows shown after its
 * row (nextCursor). Undefined otherwise (`--before` the last row's ID pages on).
 */
function nextPage(
  read: readonly PlacedDelivery[],
  limit: number,
  skip: number,
  route: string | undefined,
  options: DeliveriesOptions,
  newestOfId: (row: PlacedDelivery) => PlacedDelivery | undefined,
): string | undefined {
  const lastRow = read[limit - 1];
  const after = read[limit]?.summary;
  if (lastRow === undefined || after === undefined) return undefined;
  const last = lastRow.summary;
  const tie = shownTime(last.at) === shownTime(after.at);
  const newestLast = last.id === NO_DELIVERY_ID ? undefined : newestOfId(lastRow);
  const exact = newestLast !== undefined && sameRow(newestLast, lastRow);
  if (!tie && exact) return undefined;
  const shown = read.slice(0, limit);
  const cursor = nextCursor(shown, skip, options.before, newestOfId);
  const time = shownTime(last.at);
  const words = (next: readonly string[]) =>
    [
      "svc webhook deliveries",
      ...(route === undefined ? [] : [shellWord(route)]),
      `--limit ${limit}`,
      ...(["status", "id", "since", "until"] as const).flatMap((name) =>
        options[name] === undefined ? [] : [`--${name} ${shellWord(options[name])}`],
      ),
      ...(options.json === true ? ["--json"] : []),
      ...next,
    ].join(" ");
  const next =
    cursor === undefined
      ? undefined
      : words([`--before ${shellWord(cursor.id)}`, ...(cursor.skip === 0 ? [] : [`--skip ${cursor.skip}`])]);
  if (tie) {
    if (next === undefined)
      return shown.some((row) => row.summary.id !== NO_DELIVERY_ID)
        ? `Note: more rows share the last row's time (${time}) than --limit ${limit} shows, and the delivery IDs shown each have a newer row this listing leaves out, which --before would page from — give a larger --limit\n`
        : `Note: more rows share the last row's time (${time}) than --limit ${limit} shows, and none shown has a delivery ID to page from with --before — give a larger --limit\n`;
    return terminalText(
      `Note: more rows share the last row's time (${time}) than --limit ${limit} shows (--until ${time} would list these again) — the next page: ${next}\n`,
    );
  }
  // The last row's ID names another row to --before, or none: said so, with the next page.
  const why =
    newestLast === undefined
      ? "the last row shown has no delivery ID for --before to page from"
      : `--before ${last.id} would page from that ID's newest row (${shownTime(newestLast.summary.at)}, route ${newestLast.summary.route}${shown.some((row) => sameRow(row, newestLast)) ? ", shown above" : ", which this listing leaves out"}), not from the last row shown`;
  // No ID shown to page from, and no --before given: the rows past this page, counted from the first.
  const page = next ?? words([`--skip ${skip + shown.length}`]);
  return terminalText(
    `Note: ${why} — the next page: ${page}${next === undefined ? " (rows recorded meanwhile shift it)" : ""}\n`,
  );
}

/**
 * A recorded reason as `deliveries` says it: the events stage's fixed texts with the record's event type
 * (`event issues is not among the route's events`: the record does not repeat it in its reason); any other
 * reason as recorded.
 */
export function shownReason(request: Pick<RequestRecord, "event">, reason: string): string {
  if (reason === NOT_AMONG_EVENTS)
    return request.event === undefined
      ? "the request names no event type, and the route takes only its events"
      : `event ${request.event} is not among the route's events`;
  if (reason === PING_NOT_LISTED)
    return `event ${request.event ?? "ping"} is a ping: ignored unless the route's events name it`;
  return reason;
}

/** The NOTE of a run (or delivery) whose request this history does not hold. */
export const NO_REQUEST_NOTE = "request not in this history";

/**
 * NO_REQUEST_NOTE with `state.backend: redis`: another instance may have received the request and this one
 * taken its run from the shared queue, but so may an instance (this one, on a setup of one) killed after
 * Redis stored the run and before its history recorded the request: the note does not say which.
 */
export const SHARED_NO_REQUEST_NOTE = `${NO_REQUEST_NOTE} (received by another instance, or by one killed before it recorded the request)`;

/**
 * NO_REQUEST_NOTE with `state.backend: redis` for a run whose request may have left this history
 * (`requestMayBeGone`: received before the retention, or no later than the first record of a history whose
 * older generation was rotated out): rotated out with its payload, unless another instance received it.
 */
export const SHARED_ROTATED_NOTE = `${NO_REQUEST_NOTE} (rotated out of it since, or received by another instance)`;

/** The NOTE of a coalesced event with no run of its own (superseded in its group, or its group pending). */
export const COALESCED_NOTE = "joined a coalescing group: the group runs once, shown on its latest event";

/**
 * With `state.backend: redis` the run of a request this instance answered may be made by another instance,
 * which records it in its own history: the request's row here has no run, said so rather than a bare `-`.
 */
export const SHARED_RUN_NOTE =
  "run by the instance that takes it from the shared queue (state.backend: redis): shown in that instance's history";

/**
 * A `202 accepted` event's NOTE while this history has no run record of it (local backend): its run has not
 * ended, rather than a bare `-` that reads the same as a run lost.
 */
export const RUN_NOT_ENDED_NOTE =
  "run not ended yet (waiting in the run queue, running, or saved for the gateway's next start)";

/**
 * Whether a row is a `202 accepted` event for a run (not one a `cron_job` route dropped on arrival, which
 * has a reason) of which this history has no run record. Not with `state.backend: redis`, where another
 * instance may run it and record the run in its own history.
 */
function runNotEnded({ request, run }: DeliverySummary, shared: boolean): boolean {
  return (
    !shared &&
    run === undefined &&
    request !== undefined &&
    request.status === 202 &&
    request.outcome === "accepted" &&
    request.reason === undefined
  );
}

/** The coalesced NOTE with `state.backend: redis`, where the group's run is in the history of the instance that ran it. */
export const SHARED_COALESCED_NOTE = `${COALESCED_NOTE}, in the history of the instance that runs the group (state.backend: redis)`;

/**
 * The NOTE of a coalesced event that joined no group: a run of its key already dispatched superseded it.
 * `reason` is the record's (`superseded by a run already dispatched (<delivery id of that run>)`), as shown.
 * `elsewhere`: that run may be in another instance's history (`state.backend: redis`, and this history does
 * not hold it). `run`: whether that run was a group's, the event's own (one a reload kept from grouping),
 * or not known (its request is not shown).
 */
/** What the run that superseded an event was: its key's group's, an event's own, or not known. */
export type SupersedingRun = "group" | "own" | "unknown";

export function supersededNote(reason: string, elsewhere: boolean, run: SupersedingRun = "group"): string {
  const ran =
    run === "group"
      ? "its key's group had run an event received after this one"
      : `a run of its key had been made of an event received after this one${run === "own" ? " (that event's own run: a reload kept it from grouping)" : ""}`;
  return `${reason}: ${ran}, so it joined no group and never runs${elsewhere ? " (that run is in the history of the instance that ran it, state.backend: redis)" : ""}`;
}

/**
 * The NOTE of a superseded event whose record's reason is `reason`: with `state.backend: redis` the run was a
 * group's (an event a reload kept from grouping is run at once only with groups in memory); otherwise as the
 * request of that run, when shown, was answered.
 */
function supersededBy(
  reason: string,
  text: (value: string) => string,
  shared: boolean,
  ranHere: (id: string) => boolean,
  runOf: (id: string) => SupersedingRun,
): string {
  const by = supersedingId(reason) ?? "";
  return supersededNote(text(reason), shared && !ranHere(by), shared ? "group" : runOf(by));
}

/** The delivery id of the run a superseded event's recorded reason names (`… (<delivery id>)`). */
function supersedingId(reason: string): string | undefined {
  const prefix = `${SUPERSEDED_REASON} (`;
  return reason.startsWith(prefix) && reason.endsWith(")") ? reason.slice(prefix.length, -1) : undefined;
}

/**
 * A duplicate's NOTE when its ID's run is in this history without a request (one gateway's history) that
 * cannot have left it (`requestMayBeGone`): the gateway recorded the event and was killed before it
 * answered, and the event ran after its restart. The duplicate keeps a payload of its
 * own, which may be another body than the one that ran.
 */
export const KILLED_BEFORE_ANSWER_NOTE =
  "its delivery ID was received before, by a gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after): its run ran (the row of this ID with no request), and the payload it ran with was never kept (this duplicate's may be another body), so it cannot be redelivered";

/**
 * A duplicate's NOTE when its ID's run is in this history without a request that may have left it
 * (`requestMayBeGone`: received before the retention, or no later than the first record of a history whose
 * older generation was rotated out): the request was answered and ran, and has left the history since.
 */
export const ROTATED_OUT_NOTE = `its delivery ID was received before: that request ran (the row of this ID with no request) and has been rotated out of the history since (${HISTORY_KEEPS}), with the payload it ran with (this duplicate's may be another body), so it cannot be redelivered`;

/**
 * A request's NOTE: why the gateway refused or ignored it (a 401's reason, or what ignored a 200: the
 * route's events, a filter, the script; none on records older than the reason, shown as before), where a
 * coalesced event's run shows, and the delivery it repeats.
 */
function requestNote(
  request: RequestRecord,
  ran: boolean,
  text: (value: string) => string,
  shared: boolean,
  /** The run of this ID shown without its request, when there is one. */
  ranUnanswered: RunRecord | undefined = undefined,
  notEnded = false,
  /** keptFrom: the first record of a history whose older generation was rotated out. */
  from: string | undefined = undefined,
  /** Whether this history shows the run of a delivery id of the request's route. */
  ranHere: (id: string) => boolean = () => false,
  /**
   * Whether the run of a delivery id of the request's route was a group's (its request answered coalesced)
   * or the event's own (accepted); unknown when its request is not shown.
   */
  runOf: (id: string) => SupersedingRun = () => "unknown",
): string {
  const redelivery =
    request.redelivery_of === undefined ? undefined : `redelivery of ${text(request.redelivery_of)}`;
  const withRedelivery = (note: string) => (redelivery === undefined ? note : `${note}; ${redelivery}`);
  // A coalesced event shows a run only when it was its group's latest: the group runs once, under that ID.
  // One a run already dispatched superseded joined no group: said so (records of earlier versions have no reason).
  if (request.outcome === "coalesced" && !ran)
    return withRedelivery(
      request.reason?.startsWith(SUPERSEDED_REASON) === true
        ? supersededBy(request.reason, text, shared, ranHere, runOf)
        : shared
          ? SHARED_COALESCED_NOTE
          : COALESCED_NOTE,
    );
  if (request.reason === undefined) {
    // A sender's own redelivery keeps its ID (GitHub's Redeliver after a fix): the answer alone says nothing ran.
    // Its run is in this history with no request (the gateway killed between recording the event and
    // answering it, or its request rotated out since): the payload that ran is not kept, so redeliver is
    // not offered.
    if (request.outcome === "duplicate" && ranUnanswered !== undefined && !shared)
      return withRedelivery(
        requestMayBeGone(ranUnanswered, from) ? ROTATED_OUT_NOTE : KILLED_BEFORE_ANSWER_NOTE,
      );
    if (request.outcome === "duplicate")
      return withRedelivery(
        `its delivery ID was received before, so it did not run again (a sender's own redelivery, as GitHub's Redeliver, keeps the ID) — svc webhook redeliver ${text(shellWord(request.id))} runs it again${shared ? " (on the instance that took it: it keeps the payload)" : ""}`,
      );
    // An accepted event's run, when another instance made it, is in that instance's history.
    if (shared && !ran && request.outcome === "accepted") return withRedelivery(SHARED_RUN_NOTE);
    if (notEnded) return withRedelivery(RUN_NOT_ENDED_NOTE);
    return redelivery ?? "";
  }
  const reason = text(shownReason(request, request.reason));
  return redelivery === undefined ? reason : `${reason}; ${redelivery}`;
}

/**
 * A NOTE with why the run and the delivery failed after it (the run's error, the platform's answer, as the
 * log lines give them; records an older svc wrote keep no delivery error).
 */
function withFailures(
  note: string,
  { run, delivery }: { run: DeliverySummary["run"]; delivery: DeliverySummary["delivery"] },
  text: (value: string) => string,
): string {
  const failures = [
    ...(run?.outcome === "failed" && run.error ? [`run failed: ${text(run.error)}`] : []),
    // Dropped at its turn in the queue (its cron job paused meanwhile): why, as a drop on arrival says it.
    ...(run?.outcome === "dropped" && run.error ? [text(run.error)] : []),
    ...(delivery?.outcome === "failed" && delivery.error ? [`delivery failed: ${text(delivery.error)}`] : []),
  ];
  return [...(note === "" ? [] : [note]), ...failures].join("; ");
}

/**
 * The table `svc webhook deliveries` prints, newest first. `unanswered`: the NOTE of a run (or delivery)
 * whose request this history does not hold (with `shared`, SHARED_ROTATED_NOTE instead for a run whose
 * request may have left it). Sender text (IDs, event types, also in a reason), and the
 * reasons as recorded, are shown with their control, bidi and zero-width characters escaped.
 */
export function deliveriesTable(
  shown: readonly DeliverySummary[],
  unanswered: string,
  shared = false,
  /** keptFrom: the first record of a history whose older generation was rotated out (undefined: none was). */
  from: string | undefined = undefined,
): string {
  const text = (value: string) => terminalText(value);
  const key = (summary: DeliverySummary) => `${summary.route}\u0000${summary.id}`;
  // IDs whose run is shown without a request and which no request shown led to a run of.
  const ledToRun = new Set(shown.filter((s) => s.request !== undefined && s.run !== undefined).map(key));
  const ranUnanswered = new Map(
    shown.flatMap((s) =>
      s.request === undefined && s.run !== undefined && !ledToRun.has(key(s))
        ? [[key(s), s.run] as const]
        : [],
    ),
  );
  // The runs this history shows: the run that superseded an event, when this instance made it, is among them.
  const ran = new Set(shown.filter((s) => s.run !== undefined).map(key));
  // How each request shown was answered: a run's request answered coalesced was its group's latest event,
  // one answered accepted ran on its own. Of an ID's requests, the one that led to a run (a 503 before its
  // retry made none, and says nothing of the run).
  const answered = new Map<string, string>();
  for (const s of shown) {
    if (s.request === undefined || s.request.status !== 202) continue;
    if (s.run !== undefined || !ledToRun.has(key(s))) answered.set(key(s), s.request.outcome);
  }
  const rows = shown.map((summary) => {
    const { id, at, route: name, request, run, delivery, notRecorded } = summary;
    // A fire dropped at its turn in the queue made no run: its why goes to the NOTE (withFailures).
    const made = run?.outcome === "dropped" ? undefined : run;
    return [
      at.replace(/\.\d+Z$/, "Z"),
      text(id),
      name,
      // A run without its request (received by another instance, or by one killed before recording it)
      // keeps the event type itself.
      text((request ?? run)?.event ?? "-"),
      request === undefined ? "-" : `${request.status} ${text(request.outcome)}`,
      made === undefined ? "-" : made.outcome,
      delivery === undefined ? "-" : `${delivery.platform} ${delivery.outcome}`,
      notRecorded !== undefined
        ? notRecordedNote(notRecorded, text)
        : withFailures(
            request === undefined
              ? shared && run !== undefined && requestMayBeGone(run, from)
                ? SHARED_ROTATED_NOTE
                : unanswered
              : requestNote(
                  request,
                  made !== undefined,
                  text,
                  shared,
                  ranUnanswered.get(key(summary)),
                  runNotEnded(summary, shared),
                  from,
                  (by) => ran.has(`${name}\u0000${by}`),
                  (by) => {
                    const outcome = answered.get(`${name}\u0000${by}`);
                    return outcome === "coalesced" ? "group" : outcome === "accepted" ? "own" : "unknown";
                  },
                ),
            { run, delivery },
            text,
          ),
    ];
  });
  return formatTable([
    ["TIME", "DELIVERY ID", "ROUTE", "EVENT", "ANSWER", "RUN", "DELIVERY", "NOTE"],
    ...rows,
  ]);
}
