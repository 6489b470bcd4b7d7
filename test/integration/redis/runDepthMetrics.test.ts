import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempPath } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { sample } from "../../helpers/metrics.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * With state.backend: redis the runs wait in the shared queue, not in the process: the backlog gauges
 * read it there (the waiting runs of every instance, the runs this instance works on).
 */

const SECRET = "run-depth-secret";
let redis: TestRedis;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await redis.cleanup();
});

async function scrape(
  node: ClusterNode,
): Promise<{ waiting: number | undefined; active: number | undefined }> {
  const text = await (await fetch(node.url("/metrics"))).text();
  return { waiting: sample(text, "svc_runs_waiting"), active: sample(text, "svc_runs_active") };
}

describe("svc_runs_waiting / svc_runs_active with state.backend: redis", { timeout: 60_000 }, () => {
  it("count the runs waiting in the shared queue and the ones this instance runs", async () => {
    const release = tempPath("svc-run-depth");
    const started = tempPath("svc-run-depth", ".started");
    // One run at a time, each held until the test releases it.
    const agent = {
      provider: "command",
      command: ["sh", "-c", 'echo x >> "$1"; while [ ! -e "$0" ]; do sleep 0.05; done', release, started],
      max_concurrent_runs: 1,
    };
    const node = await startNode(
      clusterConfig(redis.url, `d${randomUUID()}`, { hook: { secret: SECRET } }, agent),
    );
    nodes.push(node);
    expect(await scrape(node)).toEqual({ waiting: 0, active: 0 });

    for (const id of ["d-1", "d-2", "d-3"]) {
      const body = JSON.stringify({ id });
      const answer = await postJson(node.url("/webhooks/hook"), body, {
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": await sign(SECRET, body),
      });
      expect(answer.status).toBe(202);
    }
    await vi.waitFor(async () => expect(await scrape(node)).toEqual({ waiting: 2, active: 1 }), {
      timeout: 20_000,
      interval: 50,
    });

    writeFileSync(release, "");
    await vi.waitFor(async () => expect(await scrape(node)).toEqual({ waiting: 0, active: 0 }), {
      timeout: 20_000,
      interval: 50,
    });
  });
});
