import { describe, expect, it } from "vitest";
import { createGatewayMetrics, MAX_ROUTE_LABELS } from "../../../src/io/metrics/gatewayMetrics.js";

const sources = { runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] };

/** The `svc_webhook_requests_total` lines of a scrape. */
async function requestLines(metrics: ReturnType<typeof createGatewayMetrics>): Promise<string[]> {
  const { text } = await metrics.render();
  return text.split("\n").filter((line) => line.startsWith("svc_webhook_requests_total{"));
}

describe("svc_webhook_requests_total route labels", () => {
  it("past the cap of route names, new names count as (other) while (unknown) and (health) keep their own label", async () => {
    const metrics = createGatewayMetrics(sources);
    for (let i = 0; i < MAX_ROUTE_LABELS; i++) metrics.answered(`route-${i}`, 202, "accepted", 0);
    metrics.answered("one-too-many", 202, "accepted", 0);
    metrics.answered("(unknown)", 404, undefined, 0);
    metrics.answered("(health)", 200, undefined, 0);
    metrics.answered("(health)", 200, undefined, 0);
    const lines = await requestLines(metrics);
    expect(lines).toHaveLength(MAX_ROUTE_LABELS + 3);
    expect(lines).toContain('svc_webhook_requests_total{route="route-999",status="202"} 1');
    expect(lines).toContain('svc_webhook_requests_total{route="(other)",status="202"} 1');
    expect(lines).toContain('svc_webhook_requests_total{route="(unknown)",status="404"} 1');
    expect(lines).toContain('svc_webhook_requests_total{route="(health)",status="200"} 2');
  });

  it("a route removed before it counted anything gives its name back: routes added and removed over time never run into (other)", async () => {
    let served: string[] = [];
    const metrics = createGatewayMetrics({ ...sources, routes: () => served });
    // Subscriptions made and removed one after another (one per pull request, say), each scraped while
    // served: shown from 0, never sent anything.
    for (let i = 0; i <= MAX_ROUTE_LABELS; i++) {
      served = ["kept", `pr-${i}`];
      await metrics.render();
    }
    metrics.answered("kept", 401, undefined, 0);
    served = ["kept", "latest"];
    metrics.answered("latest", 202, "accepted", 0);
    const lines = await requestLines(metrics);
    expect(lines).toContain('svc_webhook_requests_total{route="latest",status="202"} 1');
    expect(lines).toContain('svc_webhook_requests_total{route="kept",status="401"} 1');
    expect(lines.filter((line) => line.includes('route="(other)"'))).toEqual([]);
    expect(lines.filter((line) => line.includes('route="pr-'))).toEqual([]);
  });

  it("a removed route that counted keeps its label and its series", async () => {
    let served = ["a", "b"];
    const metrics = createGatewayMetrics({ ...sources, routes: () => served });
    metrics.answered("a", 202, "accepted", 0);
    await metrics.render();
    served = ["b"];
    const lines = await requestLines(metrics);
    expect(lines).toContain('svc_webhook_requests_total{route="a",status="202"} 1');
    expect(lines.filter((line) => line.includes('route="a",status="401"'))).toEqual([]);
  });

  it("with more served routes than labels, the labels go to the routes that count, not to the first listed", async () => {
    const served = Array.from({ length: MAX_ROUTE_LABELS + 500 }, (_, i) => `route-${i}`);
    const metrics = createGatewayMetrics({ ...sources, routes: () => served });
    await metrics.render();
    metrics.answered(`route-${MAX_ROUTE_LABELS + 400}`, 401, undefined, 0);
    const lines = await requestLines(metrics);
    expect(lines).toContain(
      `svc_webhook_requests_total{route="route-${MAX_ROUTE_LABELS + 400}",status="401"} 1`,
    );
    expect(lines.filter((line) => line.includes('route="(other)"'))).toEqual([]);
  });
});
