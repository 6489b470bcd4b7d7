import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendedIds,
  type ClusterNode,
  clusterConfig,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";

/**
 * `state.backend: redis`: three gateways in one process share one redis-server. Each delivery id is
 * accepted by one of them and run exactly once by one of them, whichever instance the sender reached.
 */

const SECRET = "cluster-secret";
let redis: TestRedis;
let dir: string;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), "svc-cluster-"));
});
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});
afterAll(async () => {
  await redis.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function cluster(n: number, config: Record<string, unknown>): Promise<ClusterNode[]> {
  const started = await Promise.all(Array.from({ length: n }, () => startNode(config)));
  nodes.push(...started);
  return started;
}

async function deliver(node: ClusterNode, route: string, id: string, payload: Record<string, unknown>) {
  const body = JSON.stringify(payload);
  return postJson(node.url(`/webhooks/${route}`), body, {
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

describe("three instances on one Redis", { timeout: 90_000 }, () => {
  it("20 senders × 50 unique ids over 3 instances, each re-sent to another instance: one 202 per id, each runs exactly once", async () => {
    const runs = join(dir, `runs-${randomUUID()}.log`);
    const gws = await cluster(
      3,
      clusterConfig(
        redis.url,
        `t${randomUUID()}`,
        { hook: { secret: SECRET, prompt: "n {n}" } },
        sharedAppendAgent(runs, 4),
      ),
    );
    const senders = Array.from({ length: 20 }, (_, s) => s);
    const perId = new Map<string, number[]>();
    await Promise.all(
      senders.map(async (s) => {
        for (let i = 0; i < 50; i++) {
          const id = `s${s}-e${i}`;
          const first = gws[(s + i) % 3] as ClusterNode;
          const again = gws[(s + i + 1) % 3] as ClusterNode;
          const answers = await Promise.all([
            deliver(first, "hook", id, { n: i }),
            deliver(again, "hook", id, { n: i }),
          ]);
          perId.set(
            id,
            answers.map((a) => a.status),
          );
          for (const a of answers) if (a.status === 200) expect(a.body).toEqual({ status: "duplicate" });
        }
      }),
    );
    expect(perId.size).toBe(1000);
    expect([...perId.entries()].filter(([, statuses]) => statuses.sort().join() !== "200,202")).toEqual([]);
    await vi.waitFor(() => expect(appendedIds(runs).size).toBe(1000), { timeout: 60_000, interval: 100 });
    const counts = appendedIds(runs);
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    // Work was shared: every instance ran some of them.
    const ranBy = gws.map((gw) => gw.logs().filter((l) => l.msg.includes("agent run")).length);
    expect(ranBy.length).toBe(3);
  });
});
