import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";
import { svc } from "../cli/svc.js";

/**
 * BullMQ requires `maxmemory-policy noeviction`: a Redis that evicts keys when full may drop queued runs and
 * idempotency records. The gateway says so in its own log (BullMQ's console line goes to stderr only).
 */

let redis: TestRedis;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
  await redis.cleanup();
});

const evictionLines = (node: ClusterNode) =>
  node.logs().filter((line) => line.msg.includes("maxmemory-policy"));

describe("a Redis that evicts keys", { timeout: 60_000 }, () => {
  it("is named at start with its policy and the fix; noeviction (Redis's default) is not", async () => {
    const config = clusterConfig(
      redis.url,
      `t${randomUUID()}`,
      { hook: { secret: "eviction-secret-7f3a", prompt: "x" } },
      { provider: "echo" },
    );
    const quiet = await startNode(config);
    nodes.push(quiet);
    expect(evictionLines(quiet)).toEqual([]);
    const checkedQuiet = await svc(quiet.home, ["config", "check"]);
    expect(checkedQuiet.code).toBe(0);
    expect(checkedQuiet.stderr).not.toContain("maxmemory-policy");

    const admin = new Redis(redis.url);
    try {
      await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    } finally {
      admin.disconnect();
    }
    const warned = await startNode(config);
    nodes.push(warned);
    const lines = evictionLines(warned);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.msg).toContain(`state.redis_url: ${redis.url} evicts keys when it is full`);
    expect(lines[0]?.msg).toContain("(maxmemory-policy allkeys-lru)");
    expect(lines[0]?.msg).toContain("set maxmemory-policy noeviction");
    // svc config check, which reads the same Redis (the subscriptions), warns of it as the start does.
    const checked = await svc(warned.home, ["config", "check"]);
    expect(checked.code).toBe(0);
    expect(checked.stderr).toContain(
      `Warning: ${warned.home.dir}/config.yaml: state.redis_url: ${redis.url} evicts keys when it is full (maxmemory-policy allkeys-lru)`,
    );
    expect(checked.stderr).toContain("set maxmemory-policy noeviction");
  });
});

/**
 * A Redis that keeps nothing across its own restart (`appendonly no` and `save ""`) loses every queued run
 * with it, silently: the start says so, as for eviction. A server that does not let CONFIG be read (a
 * managed Redis, an ACL) is not warned about.
 */
describe("a Redis without persistence", { timeout: 60_000 }, () => {
  const persistenceLines = (node: ClusterNode) =>
    node.logs().filter((line) => line.msg.includes("appendonly"));
  const configOf = (url: string) =>
    clusterConfig(url, `t${randomUUID()}`, { hook: { secret: "persist-secret-7f3a", prompt: "x" } }, {});

  it("is named at start with the fix (appendonly yes); svc config check warns alike", async () => {
    // The test helper's default: --appendonly no --save "".
    const config = configOf(redis.url);
    const warned = await startNode(config);
    nodes.push(warned);
    const lines = persistenceLines(warned);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.msg).toBe(
      `[state] state.redis_url: ${redis.url} keeps nothing across its own restart (appendonly no, save ""): a restart or crash of Redis loses every queued run, coalescing group, idempotency record and subscription — set appendonly yes in its redis.conf (and CONFIG SET appendonly yes for the running server)`,
    );
    const checked = await svc(warned.home, ["config", "check"]);
    expect(checked.code).toBe(0);
    expect(checked.stderr).toContain(
      `Warning: ${warned.home.dir}/config.yaml: state.redis_url: ${redis.url} keeps nothing across its own restart (appendonly no, save "")`,
    );
  });

  it("is not named when Redis has an append-only file, snapshots, or does not let CONFIG be read", async () => {
    const servers = await Promise.all([
      startTestRedis({ persist: true }),
      startTestRedis({ args: ["--save", "3600 1"] }),
      startTestRedis({ args: ["--rename-command", "CONFIG", ""] }),
    ]);
    try {
      for (const server of servers) {
        const node = await startNode(configOf(server.url));
        nodes.push(node);
        expect(persistenceLines(node)).toEqual([]);
        const checked = await svc(node.home, ["config", "check"]);
        expect(checked.code).toBe(0);
        expect(checked.stderr).not.toContain("appendonly");
      }
    } finally {
      await Promise.all(nodes.splice(0).map((node) => node.stop()));
      await Promise.all(servers.map((server) => server.cleanup()));
    }
  });
});
