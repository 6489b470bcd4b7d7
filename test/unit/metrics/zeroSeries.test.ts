import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import { createGatewayMetrics } from "../../../src/io/metrics/gatewayMetrics.js";

/** The lines of a scrape that name `prefix`, without HELP and TYPE. */
async function lines(metrics: ReturnType<typeof createGatewayMetrics>, prefix: string): Promise<string[]> {
  const { text } = await metrics.render();
  return text.split("\n").filter((line) => line.startsWith(prefix));
}

describe("series shown from 0 before their first event", () => {
  it("delivery counters for each enabled platform and both run outcomes exist at 0, so a first failure is an increase", async () => {
    let platforms = ["log", "telegram"];
    const metrics = createGatewayMetrics({
      runs: () => ({ waiting: 0, active: 0 }),
      mcpStates: () => [],
      deliveryPlatforms: () => platforms,
    });
    expect(await lines(metrics, "svc_delivery_")).toEqual([
      'svc_delivery_attempts_total{platform="log"} 0',
      'svc_delivery_attempts_total{platform="telegram"} 0',
      'svc_delivery_failures_total{platform="log"} 0',
      'svc_delivery_failures_total{platform="telegram"} 0',
    ]);
    expect(await lines(metrics, "svc_run_duration_seconds_count")).toEqual([
      'svc_run_duration_seconds_count{outcome="ok"} 0',
      'svc_run_duration_seconds_count{outcome="failed"} 0',
    ]);
    metrics.deliveryAttempt("telegram");
    metrics.deliveryFailed("telegram");
    metrics.runFinished("failed", 0.2);
    // A platform enabled by a reload shows from its first scrape.
    platforms = ["log", "telegram", "slack"];
    expect(await lines(metrics, "svc_delivery_failures_total")).toEqual([
      'svc_delivery_failures_total{platform="log"} 0',
      'svc_delivery_failures_total{platform="telegram"} 1',
      'svc_delivery_failures_total{platform="slack"} 0',
    ]);
    expect(await lines(metrics, "svc_run_duration_seconds_count")).toEqual([
      'svc_run_duration_seconds_count{outcome="ok"} 0',
      'svc_run_duration_seconds_count{outcome="failed"} 1',
    ]);
  });

  it("each served route's 401, 429 and 503 requests exist at 0, so the first burst after a start is an increase the alerts see", async () => {
    let routes = ["github-pr", "stripe-events"];
    const metrics = createGatewayMetrics({
      runs: () => ({ waiting: 0, active: 0 }),
      mcpStates: () => [],
      routes: () => routes,
    });
    expect(await lines(metrics, "svc_webhook_requests_total{")).toEqual([
      'svc_webhook_requests_total{route="github-pr",status="401"} 0',
      'svc_webhook_requests_total{route="github-pr",status="429"} 0',
      'svc_webhook_requests_total{route="github-pr",status="503"} 0',
      'svc_webhook_requests_total{route="stripe-events",status="401"} 0',
      'svc_webhook_requests_total{route="stripe-events",status="429"} 0',
      'svc_webhook_requests_total{route="stripe-events",status="503"} 0',
    ]);
    metrics.answered("github-pr", 429, undefined, 0.001);
    metrics.answered("github-pr", 429, undefined, 0.001);
    metrics.answered("github-pr", 202, "accepted", 0.001);
    // A route a reload removed keeps what it counted; one it added shows from the next scrape.
    routes = ["stripe-events", "gitlab-mr"];
    expect(await lines(metrics, "svc_webhook_requests_total{")).toEqual([
      'svc_webhook_requests_total{route="stripe-events",status="401"} 0',
      'svc_webhook_requests_total{route="stripe-events",status="429"} 0',
      'svc_webhook_requests_total{route="stripe-events",status="503"} 0',
      'svc_webhook_requests_total{route="gitlab-mr",status="401"} 0',
      'svc_webhook_requests_total{route="gitlab-mr",status="429"} 0',
      'svc_webhook_requests_total{route="gitlab-mr",status="503"} 0',
      'svc_webhook_requests_total{route="github-pr",status="429"} 2',
      'svc_webhook_requests_total{route="github-pr",status="202"} 1',
    ]);
  });

  it("svc_mcp_servers shows every connection state, 0 when no server is in it, so an alert on too few connected servers sees 0 rather than nothing", async () => {
    let states: string[] = ["failed", "skipped"];
    const metrics = createGatewayMetrics({
      runs: () => ({ waiting: 0, active: 0 }),
      mcpStates: () => states,
    });
    expect(await lines(metrics, "svc_mcp_servers{")).toEqual([
      'svc_mcp_servers{state="connected"} 0',
      'svc_mcp_servers{state="lazy"} 0',
      'svc_mcp_servers{state="connecting"} 0',
      'svc_mcp_servers{state="recycled"} 0',
      'svc_mcp_servers{state="reconnecting"} 0',
      'svc_mcp_servers{state="failed"} 1',
      'svc_mcp_servers{state="skipped"} 1',
      'svc_mcp_servers{state="stopped"} 0',
    ]);
    // The failed server connects: its count moves, no series goes away.
    states = ["connected", "skipped"];
    const after = await lines(metrics, "svc_mcp_servers{");
    expect(after).toHaveLength(8);
    expect(after).toContain('svc_mcp_servers{state="connected"} 1');
    expect(after).toContain('svc_mcp_servers{state="failed"} 0');
  });
});

describe("what each run counts", () => {
  const sources = {
    runs: () => ({ waiting: 0, active: 0 }),
    mcpStates: () => [],
    deliveryPlatforms: () => ["log"],
  };

  it("a run's duration and its delivery's attempt and failure are plain counts, not prom-client's label lookup per call", async () => {
    const metrics = createGatewayMetrics(sources);
    // prom-client's label children hash and validate their labels on every call (~0.5 µs a counter's, ~0.9 µs
    // a histogram's observation, bench/README.md); the runs' numbers are filled in when scraped.
    const calls = [vi.spyOn(Counter.prototype, "labels"), vi.spyOn(Histogram.prototype, "labels")];
    try {
      for (let i = 0; i < 50; i += 1) {
        metrics.deliveryAttempt("log");
        metrics.runFinished("ok", 0.002);
      }
      metrics.deliveryAttempt("(unknown)");
      metrics.deliveryFailed("(unknown)");
      metrics.runFinished("failed", 7);
      expect(calls.map((spy) => spy.mock.calls.length)).toEqual([0, 0]);
    } finally {
      for (const spy of calls) spy.mockRestore();
    }
    expect(await lines(metrics, "svc_delivery_")).toEqual([
      'svc_delivery_attempts_total{platform="log"} 50',
      'svc_delivery_attempts_total{platform="(unknown)"} 1',
      'svc_delivery_failures_total{platform="log"} 0',
      'svc_delivery_failures_total{platform="(unknown)"} 1',
    ]);
    expect(await lines(metrics, "svc_run_duration_seconds_count")).toEqual([
      'svc_run_duration_seconds_count{outcome="ok"} 50',
      'svc_run_duration_seconds_count{outcome="failed"} 1',
    ]);
    // Counted again after a scrape: the counters go on from what they showed.
    metrics.deliveryAttempt("log");
    expect(await lines(metrics, "svc_delivery_attempts_total")).toEqual([
      'svc_delivery_attempts_total{platform="log"} 51',
      'svc_delivery_attempts_total{platform="(unknown)"} 1',
    ]);
  });

  it("svc_run_duration_seconds reads as prom-client's own histogram given the same runs, scrape after scrape", async () => {
    const metrics = createGatewayMetrics(sources);
    const stock = new Histogram({
      name: "svc_run_duration_seconds",
      help: "Durations of agent runs, fired cron jobs and scheduled cron runs (agent and delivery), by outcome",
      labelNames: ["outcome"] as const,
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600],
      registers: [new Registry()],
    });
    stock.zero({ outcome: "ok" });
    stock.zero({ outcome: "failed" });
    const own = async () =>
      (await metrics.render()).text.split("\n").filter((l) => l.includes("svc_run_duration_seconds"));
    const theirs = async () => {
      const registry = new Registry();
      registry.registerMetric(stock);
      return (await registry.metrics()).split("\n").filter((l) => l.includes("svc_run_duration_seconds"));
    };
    expect(await own()).toEqual(await theirs());
    // Bucket bounds, between them, past the last, 0, and sums that carry a float's rounding.
    const runs: ["ok" | "failed", number][] = [
      ["ok", 0],
      ["ok", 0.1],
      ["ok", 0.1000001],
      ["failed", 0.5],
      ["ok", 1],
      ["ok", 4.99],
      ["failed", 600],
      ["ok", 600.5],
      ["ok", 1e6],
      ["ok", 0.3],
      ["ok", 0.7],
      ["failed", 29.9],
      ["ok", 120],
      ["ok", 300],
    ];
    for (const [i, [outcome, seconds]] of runs.entries()) {
      metrics.runFinished(outcome, seconds);
      stock.observe({ outcome }, seconds);
      if (i % 5 === 4) expect(await own()).toEqual(await theirs());
    }
    expect(await own()).toEqual(await theirs());
    expect(await own()).toContain('svc_run_duration_seconds_bucket{le="+Inf",outcome="ok"} 11');
  });
});
