import type { Clock } from "../clock.js";

/**
 * Refused requests of a route recorded one by one at once (the allowance is full), before the rest are only
 * counted: a sender's misconfigured burst (a wrong secret on a push that fires several events, a dozen
 * deliveries redelivered at once) is recorded whole.
 */
export const REFUSED_RECORDS_BURST = 20;
/** The allowance gains one record per this many ms, up to the burst. */
export const REFUSED_RECORD_REFILL_MS = 60_000;
/** Requests counted instead of recorded are summed up over at most this long, then written as one record. */
export const NOT_RECORDED_PERIOD_MS = 60_000;
/**
 * Refused requests recorded one by one at once across all routes, and the allowance all share gains one per
 * SHARED_REFILL_MS: a sender flooding the URLs of thousands of routes at once wrote each route's 20, tens of
 * megabytes in seconds, and rotated the accepted records out of the history.
 */
export const SHARED_RECORDS_BURST = 200;
export const SHARED_REFILL_MS = 60_000;
/**
 * Routes whose counts are summed up each NOT_RECORDED_PERIOD_MS; with more counting at once, each one's period
 * is as many times longer: thousands of flooded routes write a few summaries a minute, not thousands.
 */
export const SUMMARIES_PER_PERIOD = 5;
/** Distinct answers a summary names; the others are summed up in its `others`. */
export const NOT_RECORDED_ANSWERS_MAX = 4;

/** One kind of answer among the requests a summary counts. */
export interface CountedAnswer {
  readonly status: number;
  readonly outcome: string;
  /** The refusal's reason (a 401's), uncut: as given for the request. */
  readonly reason: string | undefined;
  count: number;
}

/** What one period counted of a route's refused requests. */
export interface NotRecordedCount {
  /** Wall-clock ms of the first request counted. */
  readonly since: number;
  readonly count: number;
  readonly answers: readonly CountedAnswer[];
  /** Requests of answers past NOT_RECORDED_ANSWERS_MAX distinct ones. */
  readonly others: number;
}

/** One route's allowance and what its current period counted. */
interface RouteState {
  tokens: number;
  /** `elapsed` when `tokens` was last brought up to date. */
  filledAt: number;
  count: number;
  since: number;
  answers: CountedAnswer[];
  others: number;
  timer: unknown;
}

export interface RefusedRecordAllowance {
  /**
   * Whether a refused request of `route` is recorded one by one; when not, it is counted (a summary is
   * written within NOT_RECORDED_PERIOD_MS, or before the route's next record that is not capped).
   */
  admit(route: string, status: number, outcome: string, reason: string | undefined): boolean;
  /** Writes the route's summary now, if it counted any (before one of its records that is not capped). */
  settle(route: string): void;
  /** Writes every summary still open and clears their timers (the gateway's stop). */
  close(): void;
  /** Routes whose allowance is kept (one spent or counting). */
  routesKept(): number;
}

/**
 * Past this many routes kept, a new one first drops those whose allowance is full again with nothing counted
 * (the same as none kept): subscriptions made and removed over a long life would otherwise each leave one.
 */
const SWEEP_ABOVE = 1024;

/**
 * Bounds how many refused requests each route writes to the delivery history: a token bucket of
 * REFUSED_RECORDS_BURST refilled one per REFUSED_RECORD_REFILL_MS on `elapsed` (a step of the wall clock does
 * not refill it), and one all routes share (SHARED_RECORDS_BURST, one per SHARED_REFILL_MS); a request is
 * recorded one by one only while both have room. `write` receives each period's count.
 */
export function refusedRecordAllowance(
  clock: Pick<Clock, "now" | "elapsed" | "setTimeout" | "clearTimeout">,
  write: (route: string, counted: NotRecordedCount) => void,
): RefusedRecordAllowance {
  const routes = new Map<string, RouteState>();
  /** Routes with a count not yet written: the uncapped path looks nothing up while there is none. */
  let open = 0;
  /** The allowance all routes share (SHARED_RECORDS_BURST), brought up to date as a route's is. */
  const shared = { tokens: SHARED_RECORDS_BURST, filledAt: clock.elapsed() };
  /** After the stop's close every request is recorded as it was before: no timer outlives the gateway. */
  let closed = false;

  const settleState = (route: string, state: RouteState) => {
    if (state.count === 0) return;
    if (state.timer !== undefined) clock.clearTimeout(state.timer);
    const counted: NotRecordedCount = {
      since: state.since,
      count: state.count,
      answers: state.answers,
      others: state.others,
    };
    state.count = 0;
    state.answers = [];
    state.others = 0;
    state.timer = undefined;
    open -= 1;
    write(route, counted);
  };

  /** Brings `state`'s tokens up to date at `at` (elapsed). */
  const refill = (state: RouteState, at: number) => {
    if (state.tokens >= REFUSED_RECORDS_BURST) return;
    const gained = Math.floor((at - state.filledAt) / REFUSED_RECORD_REFILL_MS);
    if (gained > 0) {
      state.tokens = Math.min(REFUSED_RECORDS_BURST, state.tokens + gained);
      state.filledAt += gained * REFUSED_RECORD_REFILL_MS;
    }
  };

  const sweepIdle = (at: number) => {
    for (const [route, state] of routes) {
      refill(state, at);
      if (state.count === 0 && state.tokens >= REFUSED_RECORDS_BURST) routes.delete(route);
    }
  };

  const refillShared = (at: number) => {
    if (shared.tokens >= SHARED_RECORDS_BURST) {
      shared.filledAt = at;
      return;
    }
    const gained = Math.floor((at - shared.filledAt) / SHARED_REFILL_MS);
    if (gained > 0) {
      shared.tokens = Math.min(SHARED_RECORDS_BURST, shared.tokens + gained);
      shared.filledAt += gained * SHARED_REFILL_MS;
    }
  };

  const count = (route: string, state: RouteState, status: number, outcome: string, reason?: string) => {
    if (state.count === 0) {
      open += 1;
      state.since = clock.now();
      const longer = Math.max(1, Math.ceil(open / SUMMARIES_PER_PERIOD));
      state.timer = clock.setTimeout(() => {
        state.timer = undefined;
        settleState(route, state);
      }, NOT_RECORDED_PERIOD_MS * longer);
    }
    state.count += 1;
    for (const answer of state.answers) {
      if (answer.status === status && answer.outcome === outcome && answer.reason === reason) {
        answer.count += 1;
        return;
      }
    }
    if (state.answers.length < NOT_RECORDED_ANSWERS_MAX)
      state.answers.push({ status, outcome, reason, count: 1 });
    else state.others += 1;
  };

  return {
    admit(route, status, outcome, reason) {
      if (closed) return true;
      const at = clock.elapsed();
      let state = routes.get(route);
      if (state === undefined) {
        if (routes.size >= SWEEP_ABOVE) sweepIdle(at);
        state = {
          tokens: REFUSED_RECORDS_BURST,
          filledAt: at,
          count: 0,
          since: 0,
          answers: [],
          others: 0,
          timer: undefined,
        };
        routes.set(route, state);
      } else refill(state, at);
      refillShared(at);
      if (state.tokens >= 1 && shared.tokens >= 1) {
        // A full bucket refills from its first spent token, not from when it last filled.
        if (state.tokens === REFUSED_RECORDS_BURST) state.filledAt = at;
        state.tokens -= 1;
        shared.tokens -= 1;
        return true;
      }
      count(route, state, status, outcome, reason);
      return false;
    },
    settle(route) {
      if (open === 0) return;
      const state = routes.get(route);
      if (state !== undefined) settleState(route, state);
    },
    close() {
      closed = true;
      for (const [route, state] of routes) settleState(route, state);
    },
    routesKept: () => routes.size,
  };
}
