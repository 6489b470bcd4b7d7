import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { postJson } from "../../helpers/http.js";
import { type ClusterNode, clusterConfig, clusterSuite, startNode } from "../../helpers/redisCluster.js";

/**
 * docs/coalescing-and-cron.md, with state.backend: redis: a fire whose job's store cannot be read when its
 * turn comes is dropped with why in the delivery history, as with the journal, and its delivery ID is
 * forgotten (its finished job and the ID's record removed together), so the sender's retry is taken, by any
 * instance, and runs.
 */
const OPEN = "INSECURE_NO_AUTH";
const suite = clusterSuite("svc-cron-broken-", OPEN);

/** Holds each run until `gate` exists (or its directory is gone). */
const gatedAgent = (gate: string) => ({
  provider: "command",
  command: [
    "sh",
    "-c",
    'cat >/dev/null; while [ -d "$(dirname "$0")" ] && [ ! -e "$0" ]; do sleep 0.05; done; printf done',
    gate,
  ],
  max_concurrent_runs: 1,
});

/** The run records of delivery `id` in a node's history. */
const runsOf = (node: ClusterNode, id: string) => {
  const file = join(node.home.dir, "deliveries", "history.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes('"kind":"run"') && line.includes(`"id":"${id}"`))
    .map((line) => JSON.parse(line) as { outcome: string; error?: string });
};

describe("state.backend: redis — a fire waiting in the shared queue whose cron store breaks meanwhile", {
  timeout: 60_000,
}, () => {
  it("is dropped at its turn with why in the history; its ID is forgotten, so the sender's retry to another instance is taken and runs", async () => {
    const jobs = oneJobStore({ name: "triage", prompt: "job triage", next_run: "2099-01-01T00:00:00.000Z" });
    const gate = join(suite.dir, `${randomUUID()}.release`);
    const prefix = `c${randomUUID()}`;
    const config = clusterConfig(
      suite.redis.url,
      prefix,
      { fire: { secret: OPEN, cron_job: "triage" } },
      gatedAgent(gate),
    );
    const node = await startNode(config, { files: { "cron/jobs.json": jobs } });
    suite.nodes.push(node);
    const fire = (to: ClusterNode, id: string) =>
      postJson(to.url("/webhooks/fire"), { id }, { "x-request-id": id });
    expect((await fire(node, "r0")).status).toBe(202);
    expect((await fire(node, "r1")).status).toBe(202);
    const file = join(node.home.dir, "cron", "jobs.json");
    writeFileSync(file, '{"revision": 3, "jobs": {');
    writeFileSync(gate, "");
    const why = `cron_job triage not fired — event dropped, its delivery ID forgotten (the sender's retry is taken once the store can be read): ${file}: not valid JSON`;
    await vi.waitFor(
      () =>
        expect(node.logs().find((l) => l.delivery_id === "r1" && l.level === 50)?.msg).toContain(
          `[webhook] fire: ${why}`,
        ),
      { timeout: 15_000, interval: 50 },
    );
    await vi.waitFor(
      () => {
        const runs = runsOf(node, "r1");
        expect(runs).toEqual([{ ...runs[0], outcome: "dropped", error: expect.stringContaining(why) }]);
      },
      { timeout: 15_000, interval: 50 },
    );
    // Freed once the queue recorded the job finished: its job and the ID's record go together.
    const raw = new Redis(suite.redis.url);
    try {
      await vi.waitFor(
        async () =>
          expect(
            await raw.exists(
              `${prefix}:seen:fire:r1`,
              `${prefix}:bull:runs:j-${encodeURIComponent("fire:r1")}`,
            ),
          ).toBe(0),
        { timeout: 15_000, interval: 50 },
      );
      // r0 ran before the store broke: its ID is kept.
      expect(await raw.exists(`${prefix}:seen:fire:r0`)).toBe(1);
    } finally {
      raw.disconnect();
    }
    writeFileSync(file, jobs);
    const other = await startNode(config, { files: { "cron/jobs.json": jobs } });
    suite.nodes.push(other);
    expect(await fire(other, "r1")).toMatchObject({
      status: 202,
      body: { status: "accepted", delivery_id: "r1" },
    });
    await vi.waitFor(
      () =>
        expect([...runsOf(node, "r1"), ...runsOf(other, "r1")].map((r) => r.outcome).sort()).toEqual([
          "dropped",
          "ok",
        ]),
      { timeout: 15_000, interval: 50 },
    );
    // Taken once: a second retry is a duplicate again.
    expect(await fire(node, "r1")).toMatchObject({ status: 200, body: { status: "duplicate" } });
  });
});
