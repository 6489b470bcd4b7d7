import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  type ClusterNode,
  clusterConfig,
  prCoalescingRoute,
  promptAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";

/**
 * `state.backend: redis`: a coalescing group's timer is a delayed job in the shared `coalesce` queue, and
 * of the idle workers only one is told when it is due (BullMQ wakes one blocked worker). When that worker's
 * instance stops, the group must still fire at its window's end on another instance, not once that
 * instance's worker looks by itself (BullMQ's 5 s by default; lengthened here so the test does not depend
 * on how late that is).
 */

const SECRET = "stopped-group-secret";
/** An idle worker looks by itself only once a minute: the group fires in time only if it is told. */
const STALL = { idleWaitSeconds: 60 };
let redis: TestRedis;
let raw: Redis;
let dir: string;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  raw = new Redis(redis.url);
  dir = mkdtempSync(join(tmpdir(), "svc-stopped-group-"));
});
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});
afterAll(async () => {
  raw.disconnect();
  await redis.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** How many clients wait in a blocking pop (the queues' idle workers). */
async function blockedWorkers(): Promise<number> {
  const clients = (await raw.client("LIST")) as string;
  return clients.split("\n").filter((line) => / cmd=bzpopmin /.test(line)).length;
}

describe("a coalescing group pending when the instance that received its events stops", {
  timeout: 60_000,
}, () => {
  it("fires at its window's end on the instance still up, with every event counted", async () => {
    const runs = join(dir, `runs-${randomUUID()}.log`);
    const agent = promptAppendAgent(runs);
    const route = prCoalescingRoute(SECRET);
    const config = clusterConfig(redis.url, `g${randomUUID()}`, { hook: route }, agent);
    // A's workers wait first, so A's coalesce worker is the one Redis wakes when the group's timer is stored.
    const a = await startNode(config, { stall: STALL, drainTimeoutMs: 200 });
    nodes.push(a);
    await vi.waitFor(async () => expect(await blockedWorkers()).toBe(2), { timeout: 10_000, interval: 20 });
    const b = await startNode(config, { stall: STALL });
    nodes.push(b);
    await vi.waitFor(async () => expect(await blockedWorkers()).toBe(4), { timeout: 10_000, interval: 20 });
    for (const id of ["p-1", "p-2"]) {
      const body = JSON.stringify({ pr: 7 });
      const answer = await postJson(a.url("/webhooks/hook"), body, {
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": await sign(SECRET, body),
      });
      expect(answer).toMatchObject({ status: 202, body: { status: "coalesced" } });
    }
    await a.stop();
    const ran = () => (existsSync(runs) ? readFileSync(runs, "utf8").split("\n").filter(Boolean) : []);
    await vi.waitFor(() => expect(ran()).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(ran()).toEqual([
      "p-2|[Coalesced: this run covers 2 events; 1 earlier event for this key was superseded]",
    ]);
    expect(b.logs().filter((l) => l.msg.includes("coalesced group dispatched"))).toHaveLength(1);
  });
});
