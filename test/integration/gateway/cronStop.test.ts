import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { alive, pidInFile } from "../../helpers/process.js";

/** A scheduled cron run still going when the gateway's drain ends is stopped, its agent with it. */

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

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
    gw = await startTestGateway({
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
      "[cron] slow: run stopped by the gateway's stop before it finished",
    );
  });
});

describe("stopping the gateway while a webhook run and a scheduled cron run are both going", {
  timeout: 30_000,
}, () => {
  it("one drain (gateway.drain_timeout_seconds) bounds both: past it both agents are stopped, the webhook run saved", async () => {
    gw = await startTestGateway({
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
      const file = join(gw?.home.dir ?? "", `${route}.pid`);
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
    expect(lines).toContain("[cron] slow: run stopped by the gateway's stop before it finished");
    expect(lines.some((l) => l.startsWith("[webhook] 1 agent run(s) not finished at shutdown"))).toBe(true);
  });
});
