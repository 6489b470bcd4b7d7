import { randomUUID } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempPath } from "../../helpers/home.js";
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
 * An instance with the webhook adapter off (no listener, no MCP server, no cron job) still has work with
 * state.backend: redis: the runs the other instances accepted, waiting in the shared queue.
 */

const SECRET = "worker-only-secret";
let redis: TestRedis;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await redis.cleanup();
});

describe("a worker-only instance (platforms.webhook.enabled: false)", { timeout: 60_000 }, () => {
  it("starts on the shared queue alone and runs the runs another instance accepted", async () => {
    const prefix = `w${randomUUID()}`;
    const log = tempPath("svc-worker-only", ".log");
    // One slow run at a time: of three events, two still wait in Redis when the ingress instance stops.
    // Its stop waits for the run under way to end, however slow the machine: one its drain cut short
    // would stay locked in Redis for the lock's 30 s (as documented), past this test's wait for the worker.
    const ingress = await startNode(
      clusterConfig(redis.url, prefix, { hook: { secret: SECRET } }, sharedAppendAgent(log, 1, 1)),
      { drainTimeoutMs: 40_000 },
    );
    nodes.push(ingress);
    for (const id of ["w-1", "w-2", "w-3"]) {
      const body = JSON.stringify({ id });
      const answer = await postJson(ingress.url("/webhooks/hook"), body, {
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": await sign(SECRET, body),
      });
      expect(answer.status).toBe(202);
    }
    await ingress.stop();
    const ranByIngress = [...appendedIds(log).keys()];
    expect(ranByIngress.length).toBeLessThan(3);

    const worker = await startNode(
      clusterConfig(redis.url, prefix, { hook: { secret: SECRET } }, sharedAppendAgent(log), {
        enabled: false,
      }),
    );
    nodes.push(worker);
    await vi.waitFor(
      () =>
        expect(appendedIds(log)).toEqual(
          new Map([
            ["w-1", 1],
            ["w-2", 1],
            ["w-3", 1],
          ]),
        ),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    expect(worker.logs().some((l) => l.msg.startsWith("[webhook] Adapter disabled"))).toBe(true);
  });

  it("its outage and recovery lines speak of the shared queue's runs, not of requests it does not take", async () => {
    const own = await startTestRedis();
    const worker = await startNode(
      clusterConfig(
        own.url,
        `o${randomUUID()}`,
        { hook: { secret: SECRET } },
        sharedAppendAgent(tempPath("svc-worker-outage", ".log")),
        { enabled: false },
      ),
      { drainTimeoutMs: 200 },
    );
    const outage = () => worker.logs().filter((l) => l.msg.includes("is unreachable"));
    try {
      own.freeze();
      await vi.waitFor(() => expect(outage()).toHaveLength(1), { timeout: 20_000, interval: 100 });
      expect(outage()[0]?.msg).toMatch(
        /is unreachable \(.*\); the shared queue's runs wait until it is back \(this instance takes no requests: platforms\.webhook is off\)$/,
      );
      // Back, it says the runs go on: it serves no requests.
      own.thaw();
      const back = () => worker.logs().filter((l) => l.msg.includes("is reachable again"));
      await vi.waitFor(() => expect(back()).toHaveLength(1), { timeout: 20_000, interval: 100 });
      expect(back()[0]?.msg).toMatch(/is reachable again; the shared queue's runs go on$/);
    } finally {
      own.thaw();
      await worker.stop();
      await own.cleanup();
    }
  });
});
