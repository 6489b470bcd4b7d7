import { SvcError } from "../../errors.js";
import { NO_DELIVERY_ID } from "../../io/stores/deliveryHistory.js";
import type { DeliveryFilter, StatusFilter } from "../../io/stores/filteredDeliveries.js";
import { terminalText } from "../../io/terminalText.js";
import { storedDeliveryId } from "../../streams/deliveryId.js";

/** The options of `svc webhook deliveries` that pick rows. */
export interface FilterOptions {
  readonly status?: string | undefined;
  readonly id?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly route?: string | undefined;
  readonly before?: string | undefined;
}

/** The outcomes `--status` takes by name: the gateway's 2xx answers (a refusal is named by its status). */
export const STATUS_OUTCOMES = ["accepted", "coalesced", "delivered", "duplicate", "ignored"] as const;

const STATUS_FORMS = `an HTTP status such as 401, a class such as 4xx, or an answer's outcome (${STATUS_OUTCOMES.join(", ")})`;
const TIME_FORMS =
  "a time such as 2026-12-01T12:00:00Z or 2026-12-01T14:00:00+02:00, a date such as 2026-12-01 (its midnight UTC), or a time ago such as 90s, 30m, 2h or 7d";

const refused = (flag: string, forms: string, value: string) =>
  new SvcError("usage", `${flag}: expected ${forms}; got ${JSON.stringify(value)}`);

export function parseStatus(value: string): StatusFilter {
  const text = value.trim().toLowerCase();
  if (/^[1-5]\d\d$/.test(text)) return { code: Number(text) };
  if (/^[1-5]xx$/.test(text)) return { class: Number(text[0]) };
  if ((STATUS_OUTCOMES as readonly string[]).includes(text)) return { outcome: text };
  throw refused("--status", STATUS_FORMS, value);
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2})))?$/i;

/**
 * How much of time the written form names past its start: a date its day, `12:00` its minute, `12:00:41`
 * its second (as `svc webhook deliveries` shows a row's time), `12:00:41.5` its tenth, 0 from milliseconds.
 */
function spanOf(parts: RegExpExecArray): number {
  const [, , , , hour, , second, fraction] = parts;
  if (hour === undefined) return UNIT_MS.d;
  if (second === undefined) return UNIT_MS.m;
  if (fraction === undefined) return UNIT_MS.s;
  return fraction.length >= 3 ? 0 : 10 ** (3 - fraction.length);
}

/**
 * A time `--since` or `--until` takes, as ms since the epoch; `now` for a time ago. With `end` (`--until`,
 * both ends included) a written time stands for the whole of what it names: `--until` the time a row
 * shows (to the second) keeps every row of that second, a date every row of that day.
 */
export function parseTime(flag: string, value: string, now: number, end = false): number {
  const text = value.trim();
  const ago = /^(\d{1,9})([smhd])$/.exec(text);
  if (ago !== null) return now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
  const parts = DATE_TIME.exec(text);
  if (parts !== null) {
    const [, year, month, day, hour = "0", minute = "0", second = "0", , , offH = "0", offM = "0"] = parts;
    const n = (s: string | undefined) => Number(s);
    // Date.parse takes 2026-02-30 for March 2: a date that does not exist is refused, not moved.
    const daysInMonth = new Date(Date.UTC(n(year), n(month), 0)).getUTCDate();
    const valid =
      n(month) >= 1 &&
      n(month) <= 12 &&
      n(day) >= 1 &&
      n(day) <= daysInMonth &&
      n(hour) <= 23 &&
      n(minute) <= 59 &&
      n(second) <= 59 &&
      n(offH) <= 23 &&
      n(offM) <= 59;
    const at = Date.parse(parts[4] === undefined ? `${text}T00:00:00Z` : text.toUpperCase());
    if (valid && Number.isFinite(at)) return end ? at + Math.max(0, spanOf(parts) - 1) : at;
  }
  throw refused(flag, TIME_FORMS, value);
}

/** The rows' delivery ID: as recorded, as `deliveries` shows it (escaped), or as sent when it was too long. */
function idMatcher(value: string, flag = "--id"): (id: string) => boolean {
  if (value === "")
    throw new SvcError("usage", `${flag}: expected a delivery ID as svc webhook deliveries shows it; got ""`);
  const digest = storedDeliveryId(value.trim());
  return (id) => id === value || id === digest || terminalText(id) === value;
}

/**
 * The filter the options give (undefined when none is given), each value checked: a bad one is refused
 * (exit 2), naming its option and the forms it takes. `route`: the command's argument, which `--route`
 * may give instead.
 */
export function deliveriesFilter(
  route: string | undefined,
  options: FilterOptions,
  now: number = Date.now(),
): { filter: DeliveryFilter | undefined; route: string | undefined } {
  if (options.route !== undefined && options.route.trim() === "")
    throw new SvcError("usage", `--route: expected a route name; got ""`);
  if (route !== undefined && options.route !== undefined && route !== options.route)
    throw new SvcError(
      "usage",
      `two routes given: ${JSON.stringify(route)} as the argument and ${JSON.stringify(options.route)} with --route — give one of them`,
    );
  const named = options.route ?? route;
  const { status, id, since, until, before } = options;
  if (
    status === undefined &&
    id === undefined &&
    since === undefined &&
    until === undefined &&
    before === undefined
  )
    return { filter: undefined, route: named };
  // Many rows share it (refused before the gateway gave an ID): it names no one row to page from.
  if (before === NO_DELIVERY_ID)
    throw new SvcError(
      "usage",
      `--before: "${NO_DELIVERY_ID}" is not a delivery ID (the rows of requests that had none share it) — give the ID of a row with one`,
    );
  const from = since === undefined ? undefined : parseTime("--since", since, now);
  const to = until === undefined ? undefined : parseTime("--until", until, now, true);
  if (from !== undefined && to !== undefined && from > to)
    throw new SvcError(
      "usage",
      `--since ${since} is after --until ${until} (${new Date(from).toISOString()} > ${new Date(to).toISOString()}): no delivery can match — swap them`,
    );
  return {
    filter: {
      route: named,
      id: id === undefined ? undefined : idMatcher(id),
      status: status === undefined ? undefined : parseStatus(status),
      since: from,
      until: to,
      before: before === undefined ? undefined : idMatcher(before, "--before"),
    },
    route: named,
  };
}

/** The options given, as typed, for a message: `--status 401 --since 2h`. */
export function filterWords(route: string | undefined, options: FilterOptions): string {
  const words = (["status", "id", "since", "until", "before"] as const).flatMap((name) =>
    options[name] === undefined ? [] : [`--${name} ${terminalText(options[name])}`],
  );
  return [...(route === undefined ? [] : [`route ${route}`]), ...words].join(", ");
}
