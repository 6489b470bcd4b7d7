import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { gatewayPerTest, inHome, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { alive, pidInFile, signalProcess } from "../../helpers/process.js";

/**
 * A scheduled cron run still going when the gateway's drain ends is stopped, its agent with it. A cron run
 * the stop ended (its drain, or the stop's own signal reaching its agent) was recorded as the job failing
 * (`last_run` error, `run failed`); it is now recorded as interrupted, and a scheduled run's occurrence is
 * due again, run once as a catch-up at the next start, as a missed run is.
 */

const gateways = gatewayPerTest();

const jobOf = (gw: TestGateway) =>
  (
    JSON.parse(readFileSync(join(gw.home.dir, "cron", "jobs.json"), "utf8")) as {
      jobs: { j1: { next_run: string; last_run?: { status: string; trigger: string; error?: string } } };
    }
  ).jobs.j1;

const JOBS = JSON.stringify({
  revision: 1,
  jobs: {
    j1: {
      id: "j1",
      name: "slow",
      schedule: "every 1h",
      prompt: "take your time",
      deliver: "log",
      deliver_extra: {},
      state: "enabled",
      next_run: "2020-01-01T00:00:00.000Z",
      created_at: "2026-11-22T00:00:00.000Z",
    },
  },
});

describe("stopping the gateway while a scheduled cron run is going", { timeout: 30_000 }, () => {
  it("stops the run's agent (no process outlives the gateway) and records the run as stopped", async () => {
    const gw = await gateways.start({
      config: webhookConfig(
        {},
        {},
        {
          agent: {
            provider: "command",
            // The agent's own pid, then a long sleep in its place.
            command: ["sh", "-c", 'echo $$ > "$0/agent.pid"; exec sleep 40', inHome("")],
          },
        },
      ),
      files: { "cron/jobs.json": JOBS },
      drainTimeoutMs: 300,
    });
    const pidFile = join(gw.home.dir, "agent.pid");
    const pid = await pidInFile(pidFile);
    expect(alive(pid)).toBe(true);
    const logs = gw.logs;
    await gw.gateway.stop();
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 50 });
    expect(logs().map((l) => l.msg)).toContain(
      "[cron] slow: run interrupted by the gateway's stop before it finished; it runs again at the next start, as a missed run does",
    );
    // Not the job failing; its occurrence due again.
    expect(jobOf(gw).last_run).toMatchObject({ status: "interrupted", trigger: "schedule" });
    expect(jobOf(gw).last_run?.error).toBeUndefined();
    expect(jobOf(gw).next_run).toBe("2020-01-01T00:00:00.000Z");
  });
});

describe("a cron run whose agent the gateway's stop signal ended", { timeout: 30_000 }, () => {
  it("is interrupted, not failed: the scheduled run is caught up and the fired one runs again at the next start", async () => {
    // While `hold` exists: note the pid under the run's trigger and wait; else note the trigger in runs.log.
    const agent = `if [ -e "$0/hold" ]; then echo $$ > "$0/$(echo "$SVC_EVENT" | cut -c1-8).pid"; exec sleep 30; fi; echo "$SVC_EVENT" | cut -c1-8 >> "$0/runs.log"`;
    const gw = await gateways.start({
      config: webhookConfig(
        { fire: { secret: "INSECURE_NO_AUTH", cron_job: "slow" } },
        {},
        { agent: { provider: "command", command: ["sh", "-c", agent, inHome("")] } },
      ),
      files: { "cron/jobs.json": JOBS, hold: "" },
      // The stop's 1 s is measured on the test's clock: it never runs out here.
      fakeTimers: true,
    });
    expect((await postJson(gw.url("/webhooks/fire"), {}, { "X-Request-ID": "f1" })).status).toBe(202);
    const scheduled = await pidInFile(join(gw.home.dir, "schedule.pid"));
    const fired = await pidInFile(join(gw.home.dir, "webhook:.pid"));
    // The unit's stop signal reaches the agents a moment before the gateway's stop begins.
    signalProcess(scheduled, "SIGTERM");
    signalProcess(fired, "SIGTERM");
    for (const pid of [scheduled, fired])
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5000, interval: 10 });
    await gw.gateway.stop();
    const lines = gw.logs().map((l) => l.msg);
    expect(lines.filter((l) => l.includes("failed"))).toEqual([]);
    expect(lines).toContain(
      "[cron] slow: run interrupted by the gateway's stop (its agent ended by the stop's signal); it runs again at the next start, as a missed run does",
    );
    expect(jobOf(gw).last_run?.status).toBe("interrupted");
    expect(jobOf(gw).next_run).toBe("2020-01-01T00:00:00.000Z");
    rmSync(join(gw.home.dir, "hold"));
    await gateways.restart(gw);
    await vi.waitFor(
      () =>
        expect(readFileSync(join(gw.home.dir, "runs.log"), "utf8").split("\n").sort()).toEqual([
          "",
          "schedule",
          "webhook:",
        ]),
      { timeout: 10_000, interval: 20 },
    );
  });
});

describe("stopping the gateway while a webhook run and a scheduled cron run are both going", {
  timeout: 30_000,
}, () => {
  it("one drain (gateway.drain_timeout_seconds) bounds both: past it both agents are stopped, the webhook run saved", async () => {
    const gw = await gateways.start({
      config: webhookConfig(
        { pr: { secret: "INSECURE_NO_AUTH", prompt: "review" } },
        {},
        {
          agent: {
            provider: "command",
            // Each agent's pid under its route's name (`pr`, `cron:slow`), then a long sleep in its place.
            command: ["sh", "-c", 'echo $$ > "$0/$SVC_ROUTE.pid"; exec sleep 40', inHome("")],
          },
        },
      ),
      files: { "cron/jobs.json": JOBS },
      // The drain's bound is a sleep on the test's clock: only the test's advance ends it.
      fakeSleeps: true,
      drainTimeoutMs: 60_000,
    });
    expect((await postJson(gw.url("/webhooks/pr"), { n: 1 })).status).toBe(202);
    const pidOf = (route: string) => {
      const file = join(gw.home.dir, `${route}.pid`);
      const text = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
      return /^\d+$/.test(text) ? Number(text) : undefined;
    };
    const pids = await vi.waitFor(
      () => {
        const both = [pidOf("pr"), pidOf("cron:slow")];
        if (both.some((pid) => pid === undefined)) throw new Error("agents not started yet");
        return both as number[];
      },
      { timeout: 10_000, interval: 50 },
    );
    const { clock, logs } = gw;
    let stopped = false;
    const stopping = gw.gateway.stop().then(() => {
      stopped = true;
    });
    // Once the drain waits (its sleep is on the clock), the drain's length passes, once.
    await vi.waitFor(() => expect(clock.pendingTimers()).toBeGreaterThan(0), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(60_000);
    await vi.waitFor(() => expect(stopped).toBe(true), { timeout: 10_000, interval: 50 });
    await stopping;
    for (const pid of pids)
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 50 });
    const lines = logs().map((l) => l.msg);
    expect(lines).toContain(
      "[cron] slow: run interrupted by the gateway's stop before it finished; it runs again at the next start, as a missed run does",
    );
    expect(lines.some((l) => l.startsWith("[webhook] 1 agent run(s) not finished at shutdown"))).toBe(true);
  });
});
