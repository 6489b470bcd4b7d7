import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { postJson } from "../../helpers/http.js";
import { clusterConfig, clusterSuite, startNode } from "../../helpers/redisCluster.js";

/**
 * docs/coalescing-and-cron.md, with state.backend: redis: a fire whose job's store cannot be read when its
 * turn comes is dropped with why in the delivery history, as with the journal; its delivery ID is kept (the
 * shared queue keeps the finished job under it), and the line does not say it was forgotten.
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

describe("state.backend: redis — a fire waiting in the shared queue whose cron store breaks meanwhile", {
  timeout: 60_000,
}, () => {
  it("is dropped at its turn with why in the history; its ID is kept, as the line says", async () => {
    const jobs = oneJobStore({ name: "triage", prompt: "job triage", next_run: "2099-01-01T00:00:00.000Z" });
    const gate = join(suite.dir, `${randomUUID()}.release`);
    const node = await startNode(
      clusterConfig(
        suite.redis.url,
        `c${randomUUID()}`,
        { fire: { secret: OPEN, cron_job: "triage" } },
        gatedAgent(gate),
      ),
      { files: { "cron/jobs.json": jobs } },
    );
    suite.nodes.push(node);
    const fire = (id: string) => postJson(node.url("/webhooks/fire"), { id }, { "x-request-id": id });
    expect((await fire("r0")).status).toBe(202);
    expect((await fire("r1")).status).toBe(202);
    const file = join(node.home.dir, "cron", "jobs.json");
    writeFileSync(file, '{"revision": 3, "jobs": {');
    writeFileSync(gate, "");
    const why = `cron_job triage not fired — event dropped: ${file}: not valid JSON`;
    await vi.waitFor(
      () =>
        expect(node.logs().find((l) => l.delivery_id === "r1" && l.level === 50)?.msg).toContain(
          `[webhook] fire: ${why}`,
        ),
      { timeout: 15_000, interval: 50 },
    );
    await vi.waitFor(
      () => {
        const runs = readFileSync(join(node.home.dir, "deliveries", "history.jsonl"), "utf8")
          .split("\n")
          .filter((line) => line.includes('"kind":"run"') && line.includes('"id":"r1"'))
          .map((line) => JSON.parse(line) as { outcome: string; error: string });
        expect(runs).toEqual([{ ...runs[0], outcome: "dropped", error: expect.stringContaining(why) }]);
      },
      { timeout: 15_000, interval: 50 },
    );
    // Kept: the shared queue keeps the finished job under the ID for the hour (svc webhook redeliver sends it again).
    writeFileSync(file, jobs);
    expect(await fire("r1")).toMatchObject({ status: 200, body: { status: "duplicate" } });
  });
});
