import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempPath } from "../../helpers/home.js";
import { postJson, rawHttp } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, sharedAppendAgent, startNode } from "../../helpers/redisCluster.js";

/**
 * docs/webhook.md: with `state.backend: redis`, once an instance has heard the shared window is spent, a
 * request to the route is answered 429 from its head (no Redis round trip, its body never read).
 */

let redis: TestRedis;
let node: ClusterNode | undefined;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await node?.stop();
  await redis.cleanup();
});

describe("a spent shared window", () => {
  it("answers 429 with Retry-After from the head once this instance has seen it spent", async () => {
    const config = clusterConfig(
      redis.url,
      `q${randomUUID()}`,
      { open: { secret: "INSECURE_NO_AUTH" } },
      sharedAppendAgent(tempPath("svc-quota", ".log")),
      { rate_limit: 1 },
    );
    node = await startNode(config);
    expect((await postJson(node.url("/webhooks/open"), {})).status).toBe(202);
    // Read whole and counted in Redis: this instance learns the window is spent.
    expect((await postJson(node.url("/webhooks/open"), {})).status).toBe(429);
    const port = Number(new URL(node.url("/")).port);
    const answer = await rawHttp(port, [
      "POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
      "x".repeat(10),
    ]);
    expect(answer.status).toBe(429);
    expect(answer.head).toMatch(/\r\nRetry-After: \d+\r\n/i);
    expect(answer.head).toMatch(/\r\nConnection: close\r\n/i);
  });
});
