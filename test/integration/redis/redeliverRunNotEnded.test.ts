import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../src/io/log.js";
import { commandOptions, connectRedis, createRedisHealth } from "../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { createSharedQueue } from "../../../src/io/state/redis/sharedQueue.js";
import { RUNS_QUEUE, unendedRun } from "../../../src/io/state/redis/unendedRun.js";
import { postJson } from "../../helpers/http.js";
import { type ClusterNode, clusterConfig, clusterSuite, startNode } from "../../helpers/redisCluster.js";
import { svc } from "../cli/svc.js";

/**
 * docs/cli.md, svc webhook redeliver with state.backend: redis: a redelivery of an event whose run has not
 * ended in the shared queue (queued, or being run by an instance) notes that it starts a second run.
 */
const OPEN = "INSECURE_NO_AUTH";
const suite = clusterSuite("svc-redeliver-unended-", OPEN);

/** Marks each run started (`<dir>/<delivery id>.started`), then holds it until `<dir>/release` exists. */
const gatedAgent = (dir: string) => ({
  provider: "command",
  command: [
    "sh",
    "-c",
    'cat >/dev/null; : >"$0/$SVC_DELIVERY_ID.started"; while [ -d "$0" ] && [ ! -e "$0/release" ]; do sleep 0.05; done; printf done',
    dir,
  ],
  max_concurrent_runs: 1,
});

const SECOND = "— this redelivery starts a second run of the same event";
const notEnded = (id: string) => `Note: the run of ${id} has not ended`;

/** The run records of delivery `id` in the node's history. */
const runsOf = (node: ClusterNode, id: string) => {
  const file = join(node.home.dir, "deliveries", "history.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes('"kind":"run"') && line.includes(`"id":"${id}"`));
};

describe("state.backend: redis — svc webhook redeliver of an event whose run has not ended", {
  timeout: 90_000,
}, () => {
  it("notes a run being run by an instance and a run queued; once the run ended, says nothing", async () => {
    const node = await startNode(
      clusterConfig(suite.redis.url, `n${randomUUID()}`, { slow: { secret: OPEN } }, gatedAgent(suite.dir)),
    );
    suite.nodes.push(node);
    const post = (id: string) => postJson(node.url("/webhooks/slow"), { id }, { "x-request-id": id });
    expect((await post("slow-1")).status).toBe(202);
    expect((await post("slow-2")).status).toBe(202);
    // slow-1 runs (its agent held); slow-2 waits for the one slot.
    await vi.waitFor(() => expect(existsSync(join(suite.dir, "slow-1.started"))).toBe(true), {
      timeout: 15_000,
      interval: 50,
    });
    const port = String(node.gateway.port);
    const running = await svc(node.home, ["webhook", "redeliver", "slow-1", "--port", port]);
    expect(running.code).toBe(0);
    expect(running.stderr).toContain(
      `${notEnded("slow-1")} (a gateway instance is running it: its job is active in Redis's shared queue) ${SECOND}`,
    );
    const queued = await svc(node.home, ["webhook", "redeliver", "slow-2", "--port", port]);
    expect(queued.code).toBe(0);
    expect(queued.stderr).toContain(
      `${notEnded("slow-2")} (its job is queued in Redis's shared queue, waiting for a gateway instance to run it) ${SECOND}`,
    );
    writeFileSync(join(suite.dir, "release"), "");
    await vi.waitFor(() => expect(runsOf(node, "slow-1")).toHaveLength(1), { timeout: 15_000, interval: 50 });
    const ended = await svc(node.home, ["webhook", "redeliver", "slow-1", "--port", port]);
    expect(ended.code).toBe(0);
    expect(ended.stderr).not.toContain(notEnded("slow-1"));
  });

  it("reads a job of the shared queue as waiting, running or delayed until it is finished", async () => {
    const keys = redisKeys(`u${randomUUID()}`);
    const redis = await connectRedis(suite.redis.url, "config.yaml", commandOptions());
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = createSharedQueue<{ n: number }>({
      url: suite.redis.url,
      name: RUNS_QUEUE,
      keys,
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      process: () => held,
    });
    try {
      await queue.enqueue("hook:later", { n: 0 }, { delayMs: 60_000 });
      await queue.enqueue("hook:now", { n: 1 });
      expect(await unendedRun(redis, keys, "hook:later")).toBe("delayed");
      expect(await unendedRun(redis, keys, "hook:now")).toBe("waiting");
      expect(await unendedRun(redis, keys, "hook:never")).toBeUndefined();
      queue.start();
      await vi.waitFor(async () => expect(await unendedRun(redis, keys, "hook:now")).toBe("running"), {
        timeout: 10_000,
        interval: 20,
      });
      release();
      await vi.waitFor(async () => expect(await unendedRun(redis, keys, "hook:now")).toBeUndefined(), {
        timeout: 10_000,
        interval: 20,
      });
    } finally {
      release();
      await queue.close(1000);
      redis.disconnect();
    }
  });
});
