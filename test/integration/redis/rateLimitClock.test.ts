import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * `state.backend: redis`: the shared rate-limit window is a key's TTL in Redis, and what an instance
 * remembers of it (a window it saw spent, answered 429 without asking Redis; the `Retry-After`) follows
 * the gateway's clock that is never set, as the local limiter does (docs/operations.md): a system clock
 * set back (an NTP step of an hour) must not keep a route answered 429 for that hour after its window ended.
 */

let redis: TestRedis;
let raw: Redis;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  raw = new Redis(redis.url);
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});
afterAll(async () => {
  raw.disconnect();
  await redis.cleanup();
});

describe("the shared rate limit and the system clock", { timeout: 30_000 }, () => {
  it("a window seen spent ends with the window, also when the system clock was set back an hour meanwhile", async () => {
    let elapsed = 0;
    const prefix = `c${randomUUID()}`;
    const node = await startNode(
      clusterConfig(
        redis.url,
        prefix,
        { hook: { secret: "clock-secret" } },
        { provider: "echo" },
        {
          rate_limit: 2,
        },
      ),
      { elapsed: () => elapsed },
    );
    nodes.push(node);
    // Badly signed: counted all the same (the rate limit comes first), and nothing runs.
    const send = () => postJson(node.url("/webhooks/hook"), "{}", { "X-Hub-Signature-256": "sha256=00" });
    expect((await send()).status).toBe(401);
    expect((await send()).status).toBe(401);
    const spent = await send();
    expect(spent.status).toBe(429);
    expect(spent.headers.get("retry-after")).toBe("60");
    // A minute later, on the clock that is never set, with the system clock stepped back an hour meanwhile;
    // Redis's key has lapsed with its minute (its TTL cut short here, as the test does not wait the minute).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() - 3_600_000);
    elapsed += 61_000;
    await raw.pexpire(`${prefix}:rate:hook`, 1);
    await vi.waitFor(async () => expect(await raw.exists(`${prefix}:rate:hook`)).toBe(0), {
      timeout: 10_000,
    });
    expect((await send()).status).toBe(401);
  });
});
