import {
  type DeliverySummary,
  HISTORY_FILE,
  HISTORY_PREVIOUS_FILE,
  type HistoryRecord,
  ledToDelivery,
  recordOf,
  summarize,
} from "./deliveryHistory.js";
import {
  type HistoryGeneration,
  LineHeadReader,
  type LineVisit,
  lineId,
  linesNewestFirst,
  openGeneration,
  type ScanOptions,
  scannedGeneration,
} from "./historyScan.js";

/** What `--status` takes: an HTTP status (`401`), a class of them (`4xx`), or a 2xx answer's outcome word. */
export type StatusFilter =
  | { readonly code: number }
  | { readonly class: number }
  | { readonly outcome: string };

/** The rows `svc webhook deliveries` keeps: each filter given must match (none given: every row). */
export interface DeliveryFilter {
  readonly route?: string | undefined;
  /** Whether a row's delivery ID is the one asked for (as recorded, as shown, or its stored digest). */
  readonly id?: ((id: string) => boolean) | undefined;
  readonly status?: StatusFilter | undefined;
  /** Rows at or after this time (ms since the epoch). */
  readonly since?: number | undefined;
  /** Rows at or before this time (ms since the epoch). */
  readonly until?: number | undefined;
  /**
   * Rows listed after the newest row of the delivery ID this takes (older than it, in the listing's order):
   * the next page past a row whose time more rows share than the limit shows.
   */
  readonly before?: ((id: string) => boolean) | undefined;
}

function statusMatches(filter: StatusFilter, status: number, outcome: string): boolean {
  if ("code" in filter) return status === filter.code;
  if ("class" in filter) return Math.floor(status / 100) === filter.class;
  return outcome.toLowerCase() === filter.outcome;
}

/** Whether a row's route, delivery ID and time are the filter's. */
function placeMatches(route: string, id: string, time: string, filter: DeliveryFilter): boolean {
  if (filter.route !== undefined && route !== filter.route) return false;
  if (filter.id !== undefined && !filter.id(id)) return false;
  if (filter.since === undefined && filter.until === undefined) return true;
  const at = Date.parse(time);
  return (
    (filter.since === undefined || at >= filter.since) && (filter.until === undefined || at <= filter.until)
  );
}

/**
 * Whether a row (a request's, a count of refused requests, or a run without its request) matches: its
 * route, delivery ID and time (the request's, or the first record's of a row without one); `--status` the
 * request's answer, any answer a count of refused requests counts, and never a row without a request.
 */
export function summaryMatches(summary: DeliverySummary, filter: DeliveryFilter): boolean {
  if (!placeMatches(summary.route, summary.id, summary.at, filter)) return false;
  const { status } = filter;
  if (status === undefined) return true;
  if (summary.request !== undefined)
    return statusMatches(status, summary.request.status, summary.request.outcome);
  if (summary.notRecorded !== undefined)
    return summary.notRecorded.answers.some((a) => statusMatches(status, a.status, a.outcome));
  return false;
}

/** The rows a record makes match the filter only if the record itself does (see filteredDeliveries). */
function recordMayMatch(r: HistoryRecord, filter: DeliveryFilter): boolean {
  if (r.kind === "request") return summaryMatches({ route: r.route, id: r.id, at: r.at, request: r }, filter);
  if (r.kind === "not_recorded")
    return summaryMatches({ route: r.route, id: r.id, at: r.at, notRecorded: r }, filter);
  // A run or delivery makes a row only without its request: no answer, so no status to match.
  return filter.status === undefined && placeMatches(r.route, r.id, r.at, filter);
}

/** `at` as the gateway writes a time (toISOString: 2026-12-01T12:00:00.000Z), whose bytes sort as the times do. */
function isoBytes(at: number | undefined): Buffer | undefined {
  if (at === undefined || !Number.isFinite(at)) return undefined;
  const text = new Date(at).toISOString();
  return text.length === 24 ? Buffer.from(text) : undefined;
}

/** Where toISOString's fixed characters are: a time of this shape is compared by its bytes. */
const ISO_MARKS: readonly [number, number][] = [
  [4, 0x2d],
  [7, 0x2d],
  [10, 0x54],
  [13, 0x3a],
  [16, 0x3a],
  [19, 0x2e],
  [23, 0x5a],
];

/**
 * Whether a line may hold a record recordMayMatch keeps, judged from its head where the gateway wrote it
 * (lineId, LineHeadReader: compared in place, no string made of a value but the ID for an ID filter and the
 * outcome for an outcome filter),
 * so that the lines of a filter few rows match are not parsed; a line whose head cannot be read that way
 * (written by hand, another record glued in) may match, and is parsed. Escaped values are read as the
 * line's reader reads them.
 */
function headFilter(filter: DeliveryFilter): (buf: Buffer, start: number, end: number) => boolean {
  const reader = new LineHeadReader();
  const route = filter.route === undefined ? undefined : Buffer.from(filter.route);
  const since = isoBytes(filter.since);
  const until = isoBytes(filter.until);
  const timeMatches = (): boolean => {
    const { at } = reader;
    const bytes = reader.buf;
    if (
      !at.escaped &&
      at.end - at.start === 24 &&
      (filter.since === undefined || since !== undefined) &&
      (filter.until === undefined || until !== undefined) &&
      ISO_MARKS.every(([i, byte]) => bytes[at.start + i] === byte)
    )
      return (
        (since === undefined || bytes.compare(since, 0, 24, at.start, at.end) >= 0) &&
        (until === undefined || bytes.compare(until, 0, 24, at.start, at.end) <= 0)
      );
    const time = Date.parse(reader.text(at) ?? "");
    return (
      (filter.since === undefined || time >= filter.since) &&
      (filter.until === undefined || time <= filter.until)
    );
  };
  return (buf, start, end) => {
    // The ID first, read alone: a filter by ID matches few lines.
    if (filter.id !== undefined) {
      const id = lineId(buf, start, end);
      if (id !== undefined && !filter.id(id)) return false;
    }
    if (!reader.read(buf, start, end)) return true;
    const { status } = filter;
    // A run or delivery makes a row only without its request: no answer, so no status to match.
    if (status !== undefined && reader.kind !== "request") return false;
    if (route !== undefined && !reader.is(reader.route, filter.route as string, route)) return false;
    if (status !== undefined) {
      const matched =
        "code" in status
          ? reader.status === status.code
          : "class" in status
            ? Math.floor(reader.status / 100) === status.class
            : reader.text(reader.outcome)?.toLowerCase() === status.outcome;
      if (!matched) return false;
    }
    return (filter.since === undefined && filter.until === undefined) || timeMatches();
  };
}

const keyOf = (r: HistoryRecord) => `${r.route}\u0000${r.id}`;

/**
 * The newest `limit` rows that match `filter`, newest first: the same as
 * summarizeHistory(readHistory(dir)).filter(summaryMatches).slice(0, limit), read in bounded memory.
 *
 * A row is made by one record: a request (each makes its own row), a count of refused requests, or a run
 * or delivery no request took; and its route, ID, time and answer are that record's (a row without a
 * request has the time of its run or delivery). So the rows that match are made by records that match.
 * The first pass reads newest first, parsing each line whose head may match (headFilter: the others are not
 * parsed) and keeping only the records that match, until
 * `limit` requests and counts matched (or the history ends): every matching row newer than the last of
 * them is made by a record it kept. A request that leads to no delivery, and a count, is its row. The
 * rows of the other records kept depend on the other records of their route and delivery ID (a run
 * belongs to the request before it): a second pass gathers those, by the ID at the head of each line
 * without parsing the others, and summarizes them. Memory is the records of the rows found, not the
 * history's (a full one is ~176k records).
 */
export function filteredDeliveries(
  dir: string,
  limit: number,
  filter: DeliveryFilter,
  now: number = Date.now(),
  options: ScanOptions = {},
): DeliverySummary[] {
  return placedDeliveries(dir, limit, filter, now, options).map(({ summary }) => summary);
}

/** A row with the index (newest first, in the history as one read saw it) of the line that made it. */
export interface PlacedDelivery {
  readonly summary: DeliverySummary;
  /** Tells apart rows alike in all else (two requests of one ID and route in one millisecond). */
  readonly line: number;
}

/** filteredDeliveries' rows, each with the line that made it. */
export function placedDeliveries(
  dir: string,
  limit: number,
  filter: DeliveryFilter,
  now: number = Date.now(),
  options: ScanOptions = {},
): PlacedDelivery[] {
  const generation = scannedGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options);
  try {
    // The index (newest first) of the line that made the newest row of `before`'s ID: rows are taken past it.
    const cutoff = filter.before === undefined ? -1 : newestRowIndex(generation, filter.before, now, options);
    // No row of that ID: no row is listed after it.
    if (filter.before !== undefined && cutoff < 0) return [];
    // Rows complete as read, with the index (newest first) of the line that made them.
    const rows: { summary: DeliverySummary; at: number }[] = [];
    // Route and ID keys whose rows need their other records; the IDs, to pick lines by their heads.
    const keys = new Set<string>();
    const ids = new Set<string>();
    let found = 0;
    let index = 0;
    const mayMatch = headFilter(filter);
    const first: LineVisit = (buf, start, end) => {
      const at = index++;
      if (at <= cutoff) return false;
      // A line the gateway wrote is judged by its head first: only one that may match is parsed.
      if (!mayMatch(buf, start, end)) return false;
      const r = recordOf(buf.toString("utf8", start, end), now);
      if (r === undefined || !recordMayMatch(r, filter)) return false;
      if (r.kind === "not_recorded")
        rows.push({ summary: { route: r.route, id: r.id, at: r.at, notRecorded: r }, at });
      else if (r.kind === "request" && ledToDelivery(r) === undefined)
        rows.push({ summary: { route: r.route, id: r.id, at: r.at, request: r }, at });
      else {
        keys.add(keyOf(r));
        ids.add(r.id);
      }
      if (r.kind === "request" || r.kind === "not_recorded") found++;
      return found >= limit;
    };
    const lines = linesNewestFirst(generation, options.chunkBytes);
    while (lines.next(first));
    if (keys.size > 0) {
      // Every record of those keys, newest first, with its line's index.
      const gathered: { r: HistoryRecord; at: number }[] = [];
      index = 0;
      const second: LineVisit = (buf, start, end) => {
        const at = index++;
        const id = lineId(buf, start, end);
        if (id !== undefined && !ids.has(id)) return false;
        const r = recordOf(buf.toString("utf8", start, end), now);
        if (r !== undefined && r.kind !== "not_recorded" && keys.has(keyOf(r))) gathered.push({ r, at });
        return false;
      };
      const again = linesNewestFirst(generation, options.chunkBytes);
      while (again.next(second));
      gathered.reverse();
      for (const { summary, pos } of summarize(gathered.map(({ r }) => r))) {
        // Requests that lead to no delivery were rows of the first pass already.
        if (summary.request !== undefined && ledToDelivery(summary.request) === undefined) continue;
        const at = (gathered[pos] as { at: number }).at;
        if (at > cutoff && summaryMatches(summary, filter)) rows.push({ summary, at });
      }
    }
    return rows
      .sort((a, b) => a.at - b.at)
      .slice(0, limit)
      .map(({ summary, at }) => ({ summary, line: at }));
  } finally {
    generation.close();
  }
}

/**
 * The index (newest first) of the line that made the newest row of the delivery ID `before` takes; -1 when
 * the history holds none. Every line is looked at by the ID at its head; only those of that ID are parsed.
 */
function newestRowIndex(
  generation: HistoryGeneration,
  before: (id: string) => boolean,
  now: number,
  options: ScanOptions,
): number {
  const found: { r: HistoryRecord; at: number }[] = [];
  let index = 0;
  const visit: LineVisit = (buf, start, end) => {
    const at = index++;
    const id = lineId(buf, start, end);
    if (id !== undefined && !before(id)) return false;
    const r = recordOf(buf.toString("utf8", start, end), now);
    if (r !== undefined && before(r.id)) found.push({ r, at });
    return false;
  };
  const lines = linesNewestFirst(generation, options.chunkBytes);
  while (lines.next(visit));
  found.reverse();
  const [newest] = summarize(found.map(({ r }) => r));
  return newest === undefined ? -1 : (found[newest.pos] as { at: number }).at;
}

/**
 * The routes the history has records of (within the retention), read a chunk at a time: what a route name
 * that is no route nor subscription may be a typo of.
 */
export function recordedRoutes(
  dir: string,
  now: number = Date.now(),
  options: ScanOptions = {},
): Set<string> {
  const routes = new Set<string>();
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options.opened);
  try {
    const lines = linesNewestFirst(generation, options.chunkBytes);
    const visit: LineVisit = (buf, start, end) => {
      const r = recordOf(buf.toString("utf8", start, end), now);
      if (r !== undefined) routes.add(r.route);
      return false;
    };
    while (lines.next(visit));
    return routes;
  } finally {
    generation.close();
  }
}
