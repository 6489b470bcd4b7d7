import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { createRedisSubscriptionStore } from "../../../src/io/state/redis/subscriptions.js";
import { type ClusterNode, clusterConfig, clusterSuite, startNode } from "../../helpers/redisCluster.js";

/**
 * docs/delivery-targets.md (Session mirroring) and docs/durability.md, with state.backend: redis: an instance
 * subscribes to the other instances' session mirrors (`<prefix>:session-mirrors`) only while one of its routes
 * or subscriptions has `mirror_to_session`. A deployment without one opens no subscriber connection, so an
 * ACL user with the documented keys and no channel (Redis 7's default, `resetchannels`) starts without a
 * warning; with one, the start warns with the grant to add. A reload, or a subscription in Redis, that adds
 * the first mirroring route subscribes; one that leaves none unsubscribes. The real redis-server.
 */
const OPEN = "INSECURE_NO_AUTH";
const suite = clusterSuite("svc-mirror-sub-", "unused");
const agent = { provider: "command", command: ["cat"] };

const route = (mirror: boolean) => ({
  secret: OPEN,
  prompt: "event {n}",
  deliver: "log",
  ...(mirror ? { mirror_to_session: true } : {}),
});

const subscribers = async (channel: string) => {
  const admin = new Redis(suite.redis.url);
  try {
    return ((await admin.pubsub("NUMSUB", channel)) as [string, number])[1];
  } finally {
    admin.disconnect();
  }
};

const mirrorWarnings = (node: ClusterNode) =>
  node.logs().filter((line) => line.msg.includes("session mirrors of the other instances"));

/** An ACL user with the keys under `prefix` and every command, and no channel (Redis 7's default). */
async function userWithoutChannels(prefix: string): Promise<string> {
  const user = `u${randomUUID().slice(0, 8)}`;
  const admin = new Redis(suite.redis.url);
  try {
    await admin.call("ACL", "SETUSER", user, "on", ">pw-8e2a", "resetchannels", `~${prefix}:*`, "+@all");
  } finally {
    admin.disconnect();
  }
  return suite.redis.url.replace("redis://", `redis://${user}:pw-8e2a@`);
}

describe("state.backend: redis — the session mirrors' subscription", { timeout: 60_000 }, () => {
  it("without a route that mirrors: no subscriber connection, no warning for an ACL user without channels", async () => {
    const prefix = `q${randomUUID()}`;
    const url = await userWithoutChannels(prefix);
    const node = await startNode(clusterConfig(url, prefix, { plain: route(false) }, agent));
    suite.nodes.push(node);
    expect(await subscribers(`${prefix}:session-mirrors`)).toBe(0);
    // Read before the stop, which removes the home and its log.
    expect(node.logs().some((line) => line.msg.startsWith("[state] Shared state in Redis"))).toBe(true);
    expect(mirrorWarnings(node)).toEqual([]);
    expect(node.logs().filter((line) => line.level === 40 && /NOPERM/.test(line.msg))).toEqual([]);
  });

  it("with a route that mirrors, an ACL user without the channel: the start says what to grant", async () => {
    const prefix = `q${randomUUID()}`;
    const channel = `${prefix}:session-mirrors`;
    const url = await userWithoutChannels(prefix);
    const node = await startNode(clusterConfig(url, prefix, { tgm: route(true) }, agent));
    suite.nodes.push(node);
    expect(mirrorWarnings(node).map((line) => [line.level, line.msg])).toEqual([
      [
        40,
        expect.stringMatching(
          new RegExp(
            `^\\[state\\] session mirrors of the other instances' deliveries not received: Redis refused the subscription to ${channel} \\(NOPERM .*\\) — let the user of state\\.redis_url use the channel ${channel} \\(ACL SETUSER <user> &${channel}\\)$`,
          ),
        ),
      ],
    ]);
  });

  it("subscribes at the reload that adds the first mirroring route, unsubscribes at the one that leaves none", async () => {
    const prefix = `q${randomUUID()}`;
    const channel = `${prefix}:session-mirrors`;
    const node = await startNode(clusterConfig(suite.redis.url, prefix, { plain: route(false) }, agent));
    suite.nodes.push(node);
    expect(await subscribers(channel)).toBe(0);

    node.home.write(
      "config.yaml",
      stringify(clusterConfig(suite.redis.url, prefix, { tgm: route(true) }, agent)),
    );
    node.gateway.reload();
    await vi.waitFor(async () => expect(await subscribers(channel)).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });

    node.home.write(
      "config.yaml",
      stringify(clusterConfig(suite.redis.url, prefix, { plain: route(false) }, agent)),
    );
    node.gateway.reload();
    await vi.waitFor(async () => expect(await subscribers(channel)).toBe(0), {
      timeout: 10_000,
      interval: 20,
    });
    expect(mirrorWarnings(node)).toEqual([]);
  });

  it("follows the subscriptions in Redis: one with mirror_to_session subscribes, its removal unsubscribes", async () => {
    const prefix = `q${randomUUID()}`;
    const channel = `${prefix}:session-mirrors`;
    const node = await startNode(clusterConfig(suite.redis.url, prefix, { plain: route(false) }, agent), {
      subscriptionPollMs: 50,
    });
    suite.nodes.push(node);
    const client = new Redis(suite.redis.url);
    try {
      const store = createRedisSubscriptionStore(client, redisKeys(prefix), "test");
      await store.update((records) => {
        records.mirrored = { secret: OPEN, enabled: true, deliver: "log", mirror_to_session: true };
      });
      await vi.waitFor(async () => expect(await subscribers(channel)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      await store.update((records) => {
        delete records.mirrored;
      });
      await vi.waitFor(async () => expect(await subscribers(channel)).toBe(0), {
        timeout: 10_000,
        interval: 20,
      });
    } finally {
      client.disconnect();
    }
  });
});
