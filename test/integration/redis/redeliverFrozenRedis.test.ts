import { randomUUID } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempPath } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, sharedAppendAgent, startNode } from "../../helpers/redisCluster.js";
import { svc } from "../cli/svc.js";

/**
 * `svc webhook redeliver` against a gateway whose Redis is frozen (SIGSTOP: its connections stay open and
 * nothing is answered): the gateway answers 503 `State store unavailable`, which says nothing of Redis, so
 * the command's note says which Redis did not answer (without the URL's credentials) and what to do.
 */

const SECRET = "frozen-redeliver-secret";
/** An ACL user of the test's Redis: the URL carries its password, which no line may show. */
const PASSWORD = "pw-never-shown-7f3a";
let redis: TestRedis;
let node: ClusterNode | undefined;

beforeAll(async () => {
  redis = await startTestRedis({ args: ["--user", "svc", "on", `>${PASSWORD}`, "~*", "&*", "+@all"] });
});
afterAll(async () => {
  redis.thaw();
  await node?.stop();
  await redis.cleanup();
});

describe("svc webhook redeliver while Redis is frozen", { timeout: 60_000 }, () => {
  it("exits 1 with the gateway's 503 and a note naming the Redis that did not answer (no credentials), how long each side waited, and to redeliver once it answers", async () => {
    const url = `redis://svc:${PASSWORD}@127.0.0.1:${redis.port}/0`;
    const config = clusterConfig(
      url,
      `f${randomUUID()}`,
      { hook: { secret: SECRET } },
      sharedAppendAgent(tempPath("svc-frozen-redeliver", ".log")),
    );
    node = await startNode(config, { drainTimeoutMs: 200 });
    const id = randomUUID();
    const body = JSON.stringify({ n: 1 });
    const taken = await postJson(node.url("/webhooks/hook"), body, {
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": id,
      "X-Hub-Signature-256": await sign(SECRET, body),
    });
    expect(taken.status).toBe(202);

    redis.freeze();
    const sent = await svc(node.home, ["webhook", "redeliver", id, "--port", String(node.gateway.port)]);
    redis.thaw();
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain("503 Service Unavailable");
    const newId = /as (redelivery-[0-9a-f]{8}-\S+)\)/.exec(sent.stdout)?.[1] as string;
    const label = `redis://127.0.0.1:${redis.port}/0`;
    expect(sent.stderr).toBe(
      `Note: the gateway answered 503 because Redis at ${label} (state.redis_url) did not take the redelivery: this command could not reach it either, reading its subscriptions before it sent: ${node.home.dir}/config.yaml: state.redis_url: ${label} took the connection but did not answer in time (Command timed out) — a frozen (SIGSTOP), paused (CLIENT PAUSE) or overloaded Redis, or another service on that port: check that server, or fix state.redis_url. The gateway waits up to 2 s for each Redis command before it answers 503 (as this command does for its own read), and serves again by itself once Redis answers: then run svc webhook redeliver ${id} again (should Redis store this one late after all, it runs once: svc webhook deliveries --id ${newId} shows whether it did)\n`,
    );
    expect(sent.stderr).not.toContain(PASSWORD);
  });
});
