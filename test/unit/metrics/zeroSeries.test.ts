import { describe, expect, it } from "vitest";
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
