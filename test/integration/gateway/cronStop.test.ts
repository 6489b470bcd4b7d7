import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

/** A scheduled cron run still going when the gateway's drain ends is stopped, its agent with it. */

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

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
    await vi.waitFor(
      () => expect(existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "").toBe(true),
      {
        timeout: 10_000,
        interval: 50,
      },
    );
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(alive(pid)).toBe(true);
    const logs = gw.logs;
    await gw.gateway.stop();
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5000, interval: 50 });
    expect(logs().map((l) => l.msg)).toContain(
      "[cron] slow: run stopped by the gateway's stop before it finished",
    );
  });
});
