import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { RequestMetrics } from "../http/observe.js";
import { processMetrics, processMetricsText } from "./processMetrics.js";

/** What the gauges read when Prometheus scrapes (nothing is sampled in between). */
export interface MetricSources {
  /** Agent runs waiting for a slot, and running (read from Redis with `state.backend: redis`). */
  readonly runs: () => RunDepth | Promise<RunDepth>;
  /** The state of each configured MCP server (`connected`, `failed`, `lazy`, ...). */
  readonly mcpStates: () => readonly string[];
  /** Whether the state backend records what a 202 promises (false: requests that need it get 503). */
  readonly stateAvailable?: () => boolean;
  /** Bytes in the local state journal's current segment; undefined for the other backends. */
  readonly journalBytes?: () => number | undefined;
  /** Delivery ids the idempotency cache evicted at its cap before their hour was up. */
  readonly deliveryIdsForgotten?: () => number;
  /**
   * The enabled delivery platforms (`log` included): their delivery counters are shown from 0, so the
   * first failure after a start is an increase Prometheus sees (a series born at 1 shows none).
   */
  readonly deliveryPlatforms?: () => readonly string[];
  /**
   * The names of the routes that answer: their requests with the statuses the documented alerts watch are
   * shown from 0, so the first burst of 401s, 429s or 503s after a start is an increase Prometheus sees.
   */
  readonly routes?: () => readonly string[];
}

export type RunOutcome = "ok" | "failed";

export interface RunDepth {
  readonly waiting: number;
  /** Runs holding a run slot. */
  readonly active: number;
  /** Runs that handed their slot back while their delivery waits to retry (none with the Redis backend). */
  readonly retrying?: number;
}

/** The gateway's metrics (docs/operations.md lists them); one registry per gateway, not prom-client's global one. */
export interface GatewayMetrics extends RequestMetrics {
  readonly registry: Registry;
  runFinished(outcome: RunOutcome, seconds: number): void;
  deliveryAttempt(platform: string): void;
  deliveryFailed(platform: string): void;
  toolCall(server: string, outcome: "ok" | "error", seconds: number): void;
}

/** The event outcomes counted per route: the `status` field of the answer's body. */
const EVENT_OUTCOMES = new Set(["accepted", "duplicate", "ignored", "coalesced", "delivered"]);

/** The statuses the alerts of docs/operations.md watch per route (signatures rejected, rate limited, refused). */
const ALERTED_STATUSES = [401, 429, 503];

/**
 * Every state `svc_mcp_servers` counts servers under (the connection states of src/machines/mcpConnection.ts),
 * each shown at 0 when no server is in it: a series that vanished would read as no data, not as none.
 */
const MCP_STATES = [
  "connected",
  "lazy",
  "connecting",
  "recycled",
  "reconnecting",
  "failed",
  "skipped",
  "stopped",
];

/** At most this many route label values: past it, new names are counted as `(other)`. */
export const MAX_ROUTE_LABELS = 1000;

/** The labels that name no route (src/io/http/observe.ts): always themselves, not counted against the cap. */
const FIXED_ROUTE_LABELS = ["(unknown)", "(health)"];

/** A count per (a, b), looked up by a two-level map of plain keys: nothing is allocated once a slot exists. */
function slotTable() {
  const table = new Map<string, Map<string | number, { n: number }>>();
  return {
    slot(a: string, b: string | number): { n: number } {
      let inner = table.get(a);
      if (inner === undefined) {
        inner = new Map();
        table.set(a, inner);
      }
      let slot = inner.get(b);
      if (slot === undefined) {
        slot = { n: 0 };
        inner.set(b, slot);
      }
      return slot;
    },
    /** Whether anything was counted under `a`. */
    has: (a: string): boolean => table.has(a),
    *entries(): Generator<[string, string, number]> {
      for (const [a, inner] of table) for (const [b, slot] of inner) yield [a, String(b), slot.n];
    },
  };
}

/** `svc_run_duration_seconds`'s buckets (upper bounds in seconds). */
const RUN_BUCKETS = [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600];
const RUN_DURATIONS = "svc_run_duration_seconds";
const RUN_DURATIONS_HELP =
  "Durations of agent runs, fired cron jobs and scheduled cron runs (agent and delivery), by outcome";
const RUN_OUTCOMES: readonly RunOutcome[] = ["ok", "failed"];

/**
 * `svc_run_duration_seconds`: each run counted in plain numbers per outcome (a bucket found in a short array),
 * turned into prom-client's histogram samples only when scraped. The scrape reads as prom-client's own
 * histogram given the same observations (tested); its label child's `observe` validates and hashes the labels
 * and looks the bucket up by a number turned into a key on every call (~0.8–1 µs a run).
 */
class RunDurations extends Histogram<"outcome"> {
  private readonly counted = new Map<RunOutcome, { buckets: number[]; sum: number; count: number }>(
    RUN_OUTCOMES.map((outcome) => [outcome, { buckets: RUN_BUCKETS.map(() => 0), sum: 0, count: 0 }]),
  );

  constructor(registers: Registry[]) {
    super({
      name: RUN_DURATIONS,
      help: RUN_DURATIONS_HELP,
      labelNames: ["outcome"] as const,
      buckets: RUN_BUCKETS,
      registers,
    });
  }

  add(outcome: RunOutcome, seconds: number): void {
    // As prom-client's observe: a value that is no finite number is refused, counted nowhere.
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    const counts = this.counted.get(outcome);
    if (counts === undefined) return;
    counts.sum += seconds;
    counts.count += 1;
    for (let i = 0; i < RUN_BUCKETS.length; i++) {
      if (seconds <= (RUN_BUCKETS[i] as number)) {
        counts.buckets[i] = (counts.buckets[i] as number) + 1;
        return;
      }
    }
  }

  override reset(): void {
    // prom-client's constructor resets too, before this class's fields exist.
    if (this.counted === undefined) return;
    for (const counts of this.counted.values()) {
      counts.buckets.fill(0);
      counts.sum = 0;
      counts.count = 0;
    }
  }

  /** The samples in the shape prom-client's registry renders a histogram's (cumulative buckets, +Inf, sum, count). */
  getForPromString() {
    const bucket = `${RUN_DURATIONS}_bucket`;
    const values: object[] = [];
    for (const [outcome, counts] of this.counted) {
      const sharedLabels = { outcome };
      let below = 0;
      for (let i = 0; i < RUN_BUCKETS.length; i++) {
        below += counts.buckets[i] as number;
        values.push({
          labels: { le: RUN_BUCKETS[i] },
          sharedLabels,
          value: below,
          metricName: bucket,
          exemplar: null,
        });
      }
      values.push(
        { labels: { le: "+Inf" }, sharedLabels, value: counts.count, metricName: bucket, exemplar: null },
        {
          labels: {},
          sharedLabels,
          value: counts.sum,
          metricName: `${RUN_DURATIONS}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels,
          value: counts.count,
          metricName: `${RUN_DURATIONS}_count`,
          exemplar: undefined,
        },
      );
    }
    return Promise.resolve({
      name: RUN_DURATIONS,
      help: RUN_DURATIONS_HELP,
      type: "histogram",
      values,
      aggregator: "sum",
    });
  }
}

/** Children looked up by a two-level map of plain keys: no label object or key string built per call. */
function childCache<T>(make: (a: string, b: string) => T) {
  const cache = new Map<string, Map<string | number, T>>();
  return (a: string, b: string | number): T => {
    let inner = cache.get(a);
    if (inner === undefined) {
      inner = new Map();
      cache.set(a, inner);
    }
    let child = inner.get(b);
    if (child === undefined) {
      child = make(a, String(b));
      inner.set(b, child);
    }
    return child;
  };
}

export function createGatewayMetrics(sources: MetricSources): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  // Its event-loop monitor samples from now on, not from the first scrape (which would show no delay).
  processMetrics();
  // Per-request numbers are plain counters in pre-resolved slots (a Map lookup and `n += 1`); prom-client's
  // own label children hash and validate their labels on every increment (~250 ns each), so the
  // Prometheus counters are filled from the slots only when scraped.
  const requestSlots = slotTable();
  const eventSlots = slotTable();
  let requestSeconds = 0;
  const routeLabels = new Set<string>(FIXED_ROUTE_LABELS);
  const routeLabel = (route: string) => {
    if (routeLabels.has(route)) return route;
    if (routeLabels.size >= MAX_ROUTE_LABELS + FIXED_ROUTE_LABELS.length) return "(other)";
    routeLabels.add(route);
    return route;
  };
  /**
   * Gives back the names of routes no longer served that counted nothing (shown from 0 only while served):
   * subscriptions made and removed over time would otherwise use up the cap, and every later route count
   * as `(other)`. A name something was counted under keeps its label, as its series stay.
   */
  const releaseIdle = (served: readonly string[]) => {
    const serving = new Set(served);
    for (const label of routeLabels)
      if (!serving.has(label) && !FIXED_ROUTE_LABELS.includes(label) && !requestSlots.has(label))
        routeLabels.delete(label);
  };
  new Counter({
    name: "svc_webhook_requests_total",
    help: "HTTP requests answered, by route and status; (unknown) for paths that name no route, (health) for /health",
    labelNames: ["route", "status"] as const,
    registers,
    collect() {
      this.reset();
      const served = sources.routes?.() ?? [];
      releaseIdle(served);
      // More served routes than labels: the zero series of a route that has a label only, so that the labels
      // go to the routes that count something, not to the first in the list.
      const all = served.length <= MAX_ROUTE_LABELS;
      for (const name of served) {
        if (!all && !routeLabels.has(name)) continue;
        const route = routeLabel(name);
        for (const status of ALERTED_STATUSES) this.inc({ route, status }, 0);
      }
      for (const [route, status, n] of requestSlots.entries()) this.inc({ route, status }, n);
    },
  });
  new Counter({
    name: "svc_webhook_events_total",
    help: "Webhook events by route and outcome (accepted, duplicate, ignored, coalesced, delivered)",
    labelNames: ["route", "outcome"] as const,
    registers,
    collect() {
      this.reset();
      for (const [route, outcome, n] of eventSlots.entries()) this.inc({ route, outcome }, n);
    },
  });
  new Counter({
    name: "svc_webhook_delivery_ids_forgotten_total",
    help: "Delivery ids forgotten before their hour was up, the idempotency cache being at its cap (100,000 ids, all routes together): a sender's retry of one runs again",
    registers,
    collect() {
      this.reset();
      this.inc(sources.deliveryIdsForgotten?.() ?? 0);
    },
  });
  new Counter({
    name: "svc_webhook_request_seconds_total",
    help: "Sum of the time from each request's head to its answer; its rate divided by sum without (route, status) (rate(svc_webhook_requests_total[5m])) is the mean",
    registers,
    collect() {
      this.reset();
      this.inc(requestSeconds);
    },
  });
  new Gauge({
    name: "svc_runs_waiting",
    help: "Agent runs accepted and waiting for a slot (the backlog)",
    registers,
    async collect() {
      this.set((await sources.runs()).waiting);
    },
  });
  new Gauge({
    name: "svc_runs_active",
    help: "Agent runs in progress in a run slot (a run whose delivery waits to retry outside its slot is not counted)",
    registers,
    async collect() {
      this.set((await sources.runs()).active);
    },
  });
  new Gauge({
    name: "svc_deliveries_retrying",
    help: "Agent runs whose delivery waits to retry after a transient failure, outside a run slot",
    registers,
    async collect() {
      this.set((await sources.runs()).retrying ?? 0);
    },
  });
  // The run outcomes are known from the start: both series exist before the first run ends.
  const runs = new RunDurations(registers);
  // Per run, as the requests: a plain count per platform, added to the counter when scraped.
  const attempts = new Map<string, { n: number; shown: number }>();
  const failures = new Map<string, { n: number; shown: number }>();
  const platformCounter = (name: string, help: string, counts: typeof attempts) =>
    new Counter({
      name,
      help,
      labelNames: ["platform"] as const,
      registers,
      collect() {
        for (const platform of sources.deliveryPlatforms?.() ?? []) this.inc({ platform }, 0);
        for (const [platform, count] of counts) {
          this.inc({ platform }, count.n - count.shown);
          count.shown = count.n;
        }
      },
    });
  platformCounter(
    "svc_delivery_attempts_total",
    "Delivery attempts (retries included), by platform",
    attempts,
  );
  platformCounter(
    "svc_delivery_failures_total",
    "Deliveries that failed after their last attempt, by platform",
    failures,
  );
  const count = (counts: typeof attempts, platform: string) => {
    const found = counts.get(platform);
    if (found === undefined) counts.set(platform, { n: 1, shown: 0 });
    else found.n += 1;
  };
  new Gauge({
    name: "svc_mcp_servers",
    help: "Configured MCP servers by connection state",
    labelNames: ["state"] as const,
    registers,
    collect() {
      this.reset();
      for (const state of MCP_STATES) this.labels(state).set(0);
      for (const state of sources.mcpStates()) this.labels(state).inc();
    },
  });
  const toolCalls = new Histogram({
    name: "svc_mcp_tool_call_duration_seconds",
    help: "MCP tool call durations, by server and outcome",
    labelNames: ["server", "outcome"] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers,
  });
  new Gauge({
    name: "svc_state_available",
    help: "1 while the state backend records accepted events; 0 during a Redis outage, while Redis refuses writes (full, read-only) or while journal writes fail (requests that need it are answered 503)",
    registers,
    collect() {
      this.set(sources.stateAvailable?.() === false ? 0 : 1);
    },
  });
  new Gauge({
    name: "svc_state_journal_bytes",
    help: "Bytes of records in the local state journal's current segment (0 with the redis backend)",
    registers,
    collect() {
      this.set(sources.journalBytes?.() ?? 0);
    },
  });
  const toolChild = childCache((server, outcome) => toolCalls.labels(server, outcome));
  return {
    registry,
    answered(route, status, outcome, seconds) {
      const label = routeLabel(route);
      requestSlots.slot(label, status).n += 1;
      if (outcome !== undefined && EVENT_OUTCOMES.has(outcome)) eventSlots.slot(label, outcome).n += 1;
      // Callers time on a clock that is never set (`Clock.elapsed`); a negative time all the same (a clock
      // injected that goes back) would make the counter go down, which prom-client refuses, failing every
      // scrape after it: it counts as none.
      if (seconds > 0) requestSeconds += seconds;
    },
    async render() {
      const [own, process] = await Promise.all([registry.metrics(), processMetricsText()]);
      return { contentType: registry.contentType, text: `${own}\n${process}` };
    },
    runFinished(outcome, seconds) {
      // As above: a histogram's _sum is a counter too.
      runs.add(outcome, Math.max(0, seconds));
    },
    deliveryAttempt(platform) {
      count(attempts, platform);
    },
    deliveryFailed(platform) {
      count(failures, platform);
    },
    toolCall(server, outcome, seconds) {
      toolChild(server, outcome).observe(Math.max(0, seconds));
    },
  };
}
