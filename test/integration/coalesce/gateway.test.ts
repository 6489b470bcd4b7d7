import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
/** The gateway of the running test. */
const perTest = gatewayPerTest();
const live = perTest.live;

const OPEN = "INSECURE_NO_AUTH";
const pr = (id: string, number?: number) => ({
  body: number === undefined ? { action: "edited" } : { action: "synchronize", pull_request: { number } },
  headers: { "x-forge-delivery": id, "x-forge-event": "pull_request" },
});
const send = (path: string, event: { body: unknown; headers: Record<string, string> }) =>
  postJson(live().url(path), event.body, event.headers);
const recorded = (g: TestGateway) => {
  try {
    return readdirSync(join(g.home.dir, "runs"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -5))
      .sort();
  } catch {
    return [];
  }
};

/** A gateway with one coalescing route `gh` keyed on the PR number, and the recorder agent. */
function coalescingGateway(prompt: string, windows: Record<string, number>): Promise<TestGateway> {
  return perTest.start({
    fakeTimers: true,
    // The stop waits for the flushed groups' runs (five agent processes) however loaded the machine: a 5 s drain
    // in real time let the last one be kept for the next start instead.
    drainTimeoutMs: 120_000,
    files: { "agent/recorder.sh": RECORDER_AGENT },
    config: webhookConfig(
      { gh: { secret: OPEN, prompt, coalesce: { key: "pull_request.number", ...windows } } },
      { rate_limit: 1000 },
      { agent: recorderAgent() },
    ),
  });
}

describe("coalescing over HTTP: flush on stop and reload (spec 3.1; the other rows: transitions.test.ts)", () => {
  it("stop flushes every pending group: each produces exactly one run before stop resolves", async () => {
    gw = await coalescingGateway("{action}", { window_seconds: 60 });
    for (let n = 0; n < 5; n++) for (const v of ["a", "b"]) await send("/webhooks/gh", pr(`p${n}${v}`, n));
    expect(recorded(gw)).toEqual([]);
    const g = gw;
    gw = undefined;
    await g.gateway.stop();
    expect(recorded(g)).toEqual(["p0b", "p1b", "p2b", "p3b", "p4b"]);
    g.home.cleanup();
  });

  it("a config reload (SIGHUP) flushes pending groups too", async () => {
    gw = await coalescingGateway("{action}", { window_seconds: 60 });
    await send("/webhooks/gh", pr("r1", 1));
    await send("/webhooks/gh", pr("r2", 1));
    live().gateway.reload();
    expect((await waitForRun(live(), "r2")).prompt).toBe(`${coalesceNote(1)}\n\nsynchronize`);
    expect(recorded(live())).toEqual(["r2"]);
  });
});

describe("dynamic subscriptions through the gateway (spec 2.6, 4.3)", () => {
  const record = (secret: string, extra: Record<string, unknown> = {}) => ({
    secret,
    prompt: "dyn {action}",
    enabled: true,
    ...extra,
  });
  const signed = (path: string, secret: string, id: string) => {
    const body = JSON.stringify({ action: id });
    return postJson(live().url(path), body, {
      ...signGenericV2(secret, body, Math.floor(live().clock.now() / 1000)),
      "x-request-id": id,
    });
  };

  it("serves subscriptions from the file (keyed by route name), re-reads it when it changes, keeps the last good set when corrupt, and lets static routes win", async () => {
    const subs = (records: Record<string, unknown>) => JSON.stringify(records);
    gw = await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "webhook_subscriptions.json": subs({ dyn: record("s1"), fixed: record("dynamic-secret") }),
      },
      config: webhookConfig(
        { fixed: { secret: "static-secret", prompt: "static {action}" } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    const file = join(gw.home.dir, "webhook_subscriptions.json");
    expect(await signed("/webhooks/dyn", "s1", "r1")).toMatchObject({ status: 202 });
    expect((await waitForRun(gw, "r1")).prompt).toBe("dyn r1");
    expect(await signed("/webhooks/fixed", "dynamic-secret", "r2")).toMatchObject({ status: 401 });
    expect(await signed("/webhooks/fixed", "static-secret", "r3")).toMatchObject({ status: 202 });
    expect((await waitForRun(gw, "r3")).prompt).toBe("static r3");

    writeFileSync(file, subs({ dyn: record("s1", { enabled: false }), other: record("second-sub-secret") }));
    expect(await signed("/webhooks/dyn", "s1", "r4")).toMatchObject({ status: 404 });
    expect(await signed("/webhooks/other", "second-sub-secret", "r5")).toMatchObject({ status: 202 });

    writeFileSync(file, "{ not json");
    expect(await signed("/webhooks/other", "second-sub-secret", "r6")).toMatchObject({ status: 202 });
    expect(gw.logs().some((l) => l.level === 50 && l.msg.includes("keeping the last good set"))).toBe(true);
    expect(gw.logs().some((l) => JSON.stringify(l).includes("second-sub-secret"))).toBe(false);
  });
});

/** The first run the recorder agent wrote (cron runs have generated delivery ids). */
function firstRun() {
  return vi.waitFor(
    () => {
      const found = recorded(live());
      if (found.length === 0) throw new Error("no run yet");
      return readRun(live().home, found[0] as string);
    },
    { timeout: 10_000, interval: 50 },
  );
}

describe("cron jobs in the gateway (spec 3.2)", () => {
  const job = (id: string, name: string, state: string) => ({
    id,
    name,
    schedule: "every 1d",
    prompt: `job ${name}`,
    deliver: "log",
    deliver_extra: {},
    state,
    next_run: "2099-01-01T00:00:00.000Z",
    created_at: "2026-11-22T00:00:00.000Z",
  });

  it("the scheduler runs a due job on its own and records the run", async () => {
    gw = await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": JSON.stringify({
          revision: 1,
          jobs: { j1: { ...job("j1", "due", "enabled"), next_run: "2026-01-01T00:00:00.000Z" } },
        }),
      },
      config: webhookConfig({}, {}, { agent: recorderAgent() }),
    });
    const run = await firstRun();
    expect(run).toMatchObject({ prompt: "job due", route: "cron:due", event: "schedule" });
    const stored = await vi.waitFor(
      () => {
        const j = JSON.parse(readFileSync(join(live().home.dir, "cron", "jobs.json"), "utf8")).jobs.j1;
        if (j.last_run === undefined) throw new Error("not recorded yet");
        return j;
      },
      { timeout: 10_000 },
    );
    expect(stored.last_run).toMatchObject({ status: "ok", trigger: "schedule" });
    expect(Date.parse(stored.next_run)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
  });

  it("an enabled job is fired with the event (202); a paused or disabled job is not fired, the event is logged and dropped (202)", async () => {
    gw = await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": JSON.stringify({
          revision: 1,
          jobs: {
            j1: job("j1", "triage", "enabled"),
            j2: job("j2", "sleepy", "paused"),
            j3: job("j3", "gone", "disabled"),
          },
        }),
      },
      config: webhookConfig(
        {
          fire: { secret: OPEN, cron_job: "triage" },
          held: { secret: OPEN, cron_job: "j2" },
          off: { secret: OPEN, cron_job: "gone" },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    expect(await send("/webhooks/fire", pr("c1", 4))).toMatchObject({
      status: 202,
      body: { status: "accepted" },
    });
    const run = await firstRun();
    expect(run?.prompt).toContain(
      "job triage\n\n[Webhook event: route fire, event pull_request, delivery c1]",
    );
    expect(run?.route).toBe("cron:triage");

    expect(await send("/webhooks/held", pr("c2", 5))).toMatchObject({ status: 202 });
    expect(await send("/webhooks/off", pr("c3", 6))).toMatchObject({ status: 202 });
    await vi.waitFor(
      () => {
        const msgs = live()
          .logs()
          .map((l) => l.msg);
        if (!msgs.some((m) => m.includes("cron_job j2 is paused; event dropped")))
          throw new Error("not logged yet");
        if (!msgs.some((m) => m.includes("cron_job gone is disabled; event dropped")))
          throw new Error("not logged yet");
      },
      { timeout: 10_000 },
    );
    expect(recorded(gw)).toHaveLength(1);
  });

  it("the fired job's run gets the route's rendered prompt as the event's context (no prompt: the payload dump)", async () => {
    gw = await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": JSON.stringify({ revision: 1, jobs: { j1: job("j1", "triage", "enabled") } }),
      },
      config: webhookConfig(
        { fire: { secret: OPEN, cron_job: "triage", prompt: "PR #{pull_request.number} was {action}" } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    expect((await send("/webhooks/fire", pr("c1", 4))).status).toBe(202);
    expect((await firstRun())?.prompt).toBe(
      "job triage\n\n[Webhook event: route fire, event pull_request, delivery c1]\nPR #4 was synchronize",
    );
  });
});
