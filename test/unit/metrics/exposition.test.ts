import { describe, expect, it } from "vitest";
import { createGatewayMetrics } from "../../../src/io/metrics/gatewayMetrics.js";

/** A sample line of the text format 0.0.4: name, labels, a value as Go's ParseFloat spells it (NaN, +Inf, -Inf). */
const SAMPLE =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (NaN|[+-]Inf|[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)( -?\d+)?$/;

describe("the exposition text", () => {
  it("writes every value as the text format allows, also for scrapes that come right after each other", async () => {
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    // Scrapes closer together than the event-loop monitor's 10 ms resolution: windows with no sample,
    // which prom-client wrote as `Nan` with a minimum of 292 years.
    const texts = [];
    for (let i = 0; i < 3; i += 1) texts.push((await metrics.render()).text);
    for (const text of texts) {
      const samples = text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
      expect(samples.filter((line) => !SAMPLE.test(line))).toEqual([]);
      const min = samples.find((line) => line.startsWith("nodejs_eventloop_lag_min_seconds "));
      const value = Number(min?.split(" ")[1]);
      expect(Number.isNaN(value) || value < 3600).toBe(true);
    }
  });
});

describe("HELP lines", () => {
  /** Each family's HELP text, by name. */
  async function helps(): Promise<Map<string, string>> {
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    const { text } = await metrics.render();
    const found = new Map<string, string>();
    for (const line of text.split("\n")) {
      const help = /^# HELP (\S+) (.*)$/.exec(line);
      if (help !== null) found.set(help[1] as string, help[2] as string);
    }
    return found;
  }

  it("the mean request time's HELP gives the division that has a result: both sides summed without route and status", async () => {
    // Divided as it stands, each side keeps its own labels (route, status on the requests, none on the time)
    // and Prometheus matches no series: the query an operator copies from the HELP returns nothing.
    const help = (await helps()).get("svc_webhook_request_seconds_total") ?? "";
    expect(help).toContain("sum without (route, status)");
    expect(help).not.toMatch(/divide by svc_webhook_requests_total for/);
  });

  it("the run histogram's HELP names the cron runs it also times, and the requests' HELP the (health) label", async () => {
    const found = await helps();
    expect(found.get("svc_run_duration_seconds")).toMatch(/cron/);
    expect(found.get("svc_webhook_requests_total")).toContain("(health)");
  });
});
