import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { describe, expect, it, vi } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, HTTP_SERVERS, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";
import { recordsEnd } from "../../helpers/journal.js";
import { sample } from "../../helpers/metrics.js";

const SECRET = "metrics-secret";
const gw = gatewayPerTest();
const FIXTURE = await bundledFixture(
  new URL("../../fixtures/mcp/stdio-server.mjs", import.meta.url).pathname,
);

async function scrape(url: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

async function signedPost(url: string, id: string, body = '{"number":7}') {
  return postJson(url, body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await signGithub(SECRET, body),
  });
}

describe("GET /metrics (Prometheus text format)", { timeout: 60_000 }, () => {
  for (const http of ["uws", "node"] as const) {
    it(`${http}: requests by route and status, event outcomes, runs, deliveries, MCP states`, async () => {
      const live = await gw.start({
        http,
        config: webhookConfig(
          { pr: { secret: SECRET }, ign: { secret: SECRET, events: ["push"] } },
          {},
          {
            mcp_servers: {
              fx: { command: process.execPath, args: [FIXTURE] },
              off: { command: process.execPath, args: [FIXTURE], enabled: false },
            },
          },
        ),
      });
      expect((await signedPost(live.url("/webhooks/pr"), "m-1")).status).toBe(202);
      expect((await signedPost(live.url("/webhooks/pr"), "m-1")).body).toMatchObject({ status: "duplicate" });
      expect((await signedPost(live.url("/webhooks/ign"), "m-2")).body).toMatchObject({ status: "ignored" });
      expect((await postJson(live.url("/webhooks/pr"), "{}")).status).toBe(401);
      // Invented route names are not label values.
      for (const name of ["a1", "a2", "a3"]) await postJson(live.url(`/webhooks/${name}`), "{}");
      // node:http refuses an unknown Expect on the head alone, before any route is looked up: still no label.
      if (http === "node") {
        const expect417 =
          "POST /webhooks/e1 HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 2\r\n\r\n{}";
        expect((await rawHttp(live.gateway.port, [expect417])).status).toBe(417);
      }
      await vi.waitFor(
        async () => {
          const text = (await scrape(live.url("/metrics"))).text;
          expect(sample(text, 'svc_run_duration_seconds_count{outcome="ok"}')).toBe(1);
          expect(sample(text, 'svc_mcp_servers{state="connected"}')).toBe(1);
          // enabled: false is the state the MCP client's states call skipped.
          expect(sample(text, 'svc_mcp_servers{state="skipped"}')).toBe(1);
        },
        { timeout: 15_000, interval: 50 },
      );
      const { status, type, text } = await scrape(live.url("/metrics"));
      expect(status).toBe(200);
      expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="202"}')).toBe(1);
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="200"}')).toBe(1);
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="401"}')).toBe(1);
      expect(sample(text, 'svc_webhook_requests_total{route="(unknown)",status="404"}')).toBe(3);
      // The statuses the alerts watch exist at 0 for every served route, before the first such answer.
      expect(sample(text, 'svc_webhook_requests_total{route="ign",status="401"}')).toBe(0);
      expect(sample(text, 'svc_webhook_requests_total{route="ign",status="429"}')).toBe(0);
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="503"}')).toBe(0);
      expect(text).not.toContain('route="a1"');
      expect(text).not.toContain('route="e1"');
      expect(sample(text, 'svc_webhook_events_total{route="pr",outcome="accepted"}')).toBe(1);
      expect(sample(text, 'svc_webhook_events_total{route="pr",outcome="duplicate"}')).toBe(1);
      expect(sample(text, 'svc_webhook_events_total{route="ign",outcome="ignored"}')).toBe(1);
      expect(sample(text, 'svc_delivery_attempts_total{platform="log"}')).toBe(1);
      expect(sample(text, "svc_runs_waiting")).toBe(0);
      expect(sample(text, "svc_runs_active")).toBe(0);
      expect(sample(text, "svc_state_available")).toBe(1);
      // The records of the local journal's current segment, as on disk (a record written after the scrape only
      // adds), not the zeros its file is grown into ahead of them.
      const stateDir = join(live.home.dir, "state");
      const segment = join(stateDir, readdirSync(stateDir).find((f) => f.endsWith(".seg")) as string);
      const reported = sample(text, "svc_state_journal_bytes") as number;
      expect(reported).toBeGreaterThan(0);
      expect(reported).toBeLessThanOrEqual(recordsEnd(segment));
      expect(statSync(segment).size).toBeGreaterThan(recordsEnd(segment));
      expect(text).toContain("# TYPE svc_mcp_tool_call_duration_seconds histogram");
      // The process's own metrics, as Node exporters show them: this process's resident memory and start.
      expect(text).toContain("# TYPE process_resident_memory_bytes gauge");
      expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(1024 * 1024);
      expect(sample(text, "process_start_time_seconds")).toBeLessThanOrEqual(Date.now() / 1000);
      expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
      // Each metric family once, though every gateway of this test process shows the process's metrics.
      const families = text.split("\n").filter((l) => l.startsWith("# TYPE "));
      expect(new Set(families).size).toBe(families.length);
      // HEAD is answered too (scrapers' health checks), a POST is not.
      expect((await fetch(live.url("/metrics"), { method: "HEAD" })).status).toBe(200);
      expect((await fetch(live.url("/metrics"), { method: "POST" })).status).toBe(405);
    });
  }

  it("a scheduled cron run is timed like an agent run, and a delivery to a target left disabled counts as a failed delivery", async () => {
    const jobs = {
      revision: 1,
      jobs: {
        j1: {
          id: "j1",
          name: "tick",
          schedule: "every 1h",
          prompt: "tick",
          deliver: "telegram",
          deliver_extra: { chat_id: "1" },
          state: "enabled",
          next_run: "2020-01-01T00:00:00.000Z",
          created_at: "2026-11-22T00:00:00.000Z",
        },
      },
    };
    const live = await gw.start({
      config: webhookConfig({}),
      files: { "cron/jobs.json": JSON.stringify(jobs) },
    });
    await vi.waitFor(
      async () => {
        const { text } = await scrape(live.url("/metrics"));
        const runs = ["ok", "failed"].reduce(
          (sum, outcome) => sum + (sample(text, `svc_run_duration_seconds_count{outcome="${outcome}"}`) ?? 0),
          0,
        );
        expect(runs).toBe(1);
        expect(sample(text, 'svc_delivery_failures_total{platform="telegram"}')).toBe(1);
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it("metrics: false turns it off (404)", async () => {
    const live = await gw.start({ config: webhookConfig({}, { metrics: false }) });
    expect((await scrape(live.url("/metrics"))).status).toBe(404);
  });

  it("unset, it is not served on a non-loopback bind; metrics: true serves it there", async () => {
    const off = await gw.start({
      config: webhookConfig({}, { host: "0.0.0.0", secret: "x" }),
    });
    expect((await scrape(off.url("/metrics"))).status).toBe(404);
    const on = await gw.start({
      config: webhookConfig({}, { host: "0.0.0.0", secret: "x", metrics: true }),
    });
    expect((await scrape(on.url("/metrics"))).status).toBe(200);
  });
});

describe("GET /metrics with gateway.multiplex_profiles", { timeout: 30_000 }, () => {
  for (const http of HTTP_SERVERS) {
    it(`${http}: a route asked for under another profile is answered as an unknown route and counted as one`, async () => {
      const live = await gw.start({
        http,
        config: webhookConfig(
          { pr: { secret: SECRET, profile: "work" }, gen: { secret: SECRET } },
          {},
          { gateway: { multiplex_profiles: true } },
        ),
        files: { "profiles/work/.keep": "", "profiles/play/.keep": "" },
      });
      // The profile binding is checked at the route lookup: another profile's path (or one a sender
      // invents) gets the unknown route's 404, and must not be told apart from one in the metrics.
      for (const path of [
        "/webhooks/pr",
        "/p/play/webhooks/pr",
        "/p/x1/webhooks/pr",
        "/p/work/webhooks/gen",
      ]) {
        const res = await postJson(live.url(path), "{}");
        expect(res.body).toEqual({ error: "Unknown route" });
      }
      expect((await postJson(live.url("/p/work/webhooks/pr"), "{}")).status).toBe(401);
      const { text } = await scrape(live.url("/metrics"));
      expect(sample(text, 'svc_webhook_requests_total{route="(unknown)",status="404"}')).toBe(4);
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="404"}')).toBeUndefined();
      expect(sample(text, 'svc_webhook_requests_total{route="gen",status="404"}')).toBeUndefined();
      expect(sample(text, 'svc_webhook_requests_total{route="pr",status="401"}')).toBe(1);
      // Nor are they rows of the route's delivery history: only the request its path served.
      const history = readFileSync(join(live.home.dir, "deliveries", "history.jsonl"), "utf8");
      const rows = history
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { status: number });
      expect(rows.map((r) => r.status)).toEqual([401]);
    });
  }
});

describe("svc_delivery_failures_total's platform label", { timeout: 30_000 }, () => {
  it("a subscription written by hand whose deliver names no target is counted as (unknown), not under its text", async () => {
    // What someone might write there by hand: a chat's incoming-webhook URL, whose path is its credential.
    const deliver = 'https://hooks.slack.com/services/T0/B0/xoxsecret"';
    const live = await gw.start({
      config: webhookConfig({}, { secret: SECRET }),
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          hand: { deliver, enabled: true, created_at: "2026-11-22T00:00:00.000Z" },
        }),
      },
    });
    const answer = await postJson(live.url("/webhooks/hand"), "{}", {
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": "h-1",
      "X-Hub-Signature-256": await signGithub(SECRET, "{}"),
    });
    expect(answer.status).toBe(202);
    await vi.waitFor(
      async () => {
        const { text } = await scrape(live.url("/metrics"));
        expect(sample(text, 'svc_delivery_failures_total{platform="(unknown)"}')).toBe(1);
        expect(text).not.toContain("hooks.slack.com");
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});
