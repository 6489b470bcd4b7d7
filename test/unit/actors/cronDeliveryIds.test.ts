import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentRunner } from "../../../src/actors/agent/runner.js";
import { runCronJob } from "../../../src/actors/cron.js";
import type { Deliverer, DeliveryRequest } from "../../../src/actors/deliver.js";
import type { CronJob } from "../../../src/io/stores/cronStore.js";

/**
 * Targets de-duplicate a delivery's parts by route and delivery id (Matrix's transaction id, Discord's
 * nonce, Mattermost's pending_post_id, Feishu's uuid): two runs of one job must not share an id, also when
 * a burst of events on a cron_job route fires the job twice in the same millisecond.
 */
afterEach(() => {
  vi.useRealTimers();
});

const job: CronJob = {
  id: "j1",
  name: "digest",
  schedule: "every 1h",
  prompt: "Summarize",
  deliver: "discord",
  deliver_extra: { chat_id: "1" },
  state: "enabled",
};

describe("runCronJob", () => {
  it("gives two runs started in the same millisecond different delivery ids", async () => {
    vi.useFakeTimers({ now: new Date("2026-11-30T05:00:00Z"), toFake: ["Date"] });
    const runner: AgentRunner = { run: async (request) => ({ text: `reply to ${request.deliveryId}` }) };
    const delivered: DeliveryRequest[] = [];
    const deliverer: Deliverer = {
      async deliver(request) {
        delivered.push(request);
        return {};
      },
    };
    await Promise.all([
      runCronJob({ runner, deliverer }, job, job.prompt, "webhook:a:1"),
      runCronJob({ runner, deliverer }, job, job.prompt, "webhook:a:2"),
    ]);
    const ids = delivered.map((request) => request.message.deliveryId);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^cron-j1-\d+-/);
    expect(ids[1]).not.toBe(ids[0]);
  });
});
