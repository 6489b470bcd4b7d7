import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { createRedisSubscriptionStore } from "../../../src/io/state/redis/subscriptions.js";
import { assertUnchanged, ownRecord } from "../../../src/io/stores/subscriptions.js";
import { startTestRedis } from "../../helpers/redis.js";
import {
  appendedIds,
  clusterConfig,
  clusterSuite,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";
import { svc } from "../cli/svc.js";

/**
 * `state.backend: redis`: `svc webhook subscribe|remove|list` on one host write the subscriptions to
 * Redis, and every gateway sharing that Redis serves them (it follows the store in the background).
 */

const SECRET = "dynamic-secret";
const cluster = clusterSuite("svc-subs-", SECRET);
const { nodes, cliHome, deliver } = cluster;
/**
 * For gateways whose test waits for a change by sending requests: they read the subscriptions' revision
 * every 100 ms instead of every second. Not for the tests of what the CLI waits for (the default poll).
 */
const QUICK_POLL = { subscriptionPollMs: 100 };

describe("dynamic subscriptions in Redis", { timeout: 60_000 }, () => {
  it("subscribe on host A is served by two gateways with their own SVC_HOMEs; remove takes it from both", async () => {
    const config = clusterConfig(
      cluster.redis.url,
      `s${randomUUID()}`,
      {},
      sharedAppendAgent(join(cluster.dir, "runs.log")),
    );
    const gws = await Promise.all([startNode(config, QUICK_POLL), startNode(config, QUICK_POLL)]);
    nodes.push(...gws);
    for (const gw of gws) expect((await deliver(gw, "gh", randomUUID())).status).toBe(404);

    const hostA = cliHome(config);
    const subscribed = await svc(hostA, ["webhook", "subscribe", "gh", "--secret", SECRET]);
    expect(subscribed.stderr).not.toContain("Error");
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toContain("Subscribed gh");
    // Nothing in host A's file: the record lives in Redis.
    expect(
      (await svc(cliHome(clusterConfig(cluster.redis.url, "elsewhere", {}, {})), ["webhook", "list"])).stdout,
    ).toContain("No dynamic subscriptions");
    const listed = await svc(hostA, ["webhook", "list"]);
    expect(listed.stdout).toMatch(/^gh\s/m);
    expect((await svc(hostA, ["config", "check"])).stdout).toContain("1 subscription,");
    expect(listed.stdout).not.toContain(SECRET);

    for (const gw of gws)
      await vi.waitFor(async () => expect((await deliver(gw, "gh", randomUUID())).status).toBe(202), {
        timeout: 10_000,
        interval: 100,
      });

    // `svc webhook test` finds the subscription (and its secret) in Redis too.
    const tested = await svc(hostA, ["webhook", "test", "gh", "--port", String(gws[0]?.gateway.port)]);
    expect(tested.stderr).not.toContain("no dynamic subscription");
    expect(tested.code).toBe(0);

    expect((await svc(hostA, ["webhook", "remove", "gh"])).code).toBe(0);
    for (const gw of gws)
      await vi.waitFor(async () => expect((await deliver(gw, "gh", randomUUID())).status).toBe(404), {
        timeout: 10_000,
        interval: 100,
      });
  });

  it("runs accepted for a subscription removed before they start still run, with the route they were accepted under", async () => {
    const runs = join(cluster.dir, `removed-${randomUUID()}.log`);
    // One run at a time, each held until the gate file exists (made once the removal is in effect): the
    // later ones wait in the shared queue until then, however slow or fast the machine.
    const gate = join(cluster.dir, `removed-gate-${randomUUID()}`);
    const config = clusterConfig(
      cluster.redis.url,
      `s${randomUUID()}`,
      {},
      {
        ...sharedAppendAgent(runs, 1),
        command: [
          "sh",
          "-c",
          `while [ ! -e "$1" ]; do sleep 0.05; done; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0"`,
          runs,
          gate,
        ],
      },
    );
    const gw = await startNode(config, QUICK_POLL);
    nodes.push(gw);
    const host = cliHome(config);
    expect((await svc(host, ["webhook", "subscribe", "gone", "--secret", SECRET])).code).toBe(0);
    await vi.waitFor(async () => expect((await deliver(gw, "gone", "probe-0")).status).toBe(202), {
      timeout: 10_000,
      interval: 100,
    });
    const ids = ["removed-1", "removed-2", "removed-3"];
    for (const id of ids) expect((await deliver(gw, "gone", id)).status).toBe(202);
    expect((await svc(host, ["webhook", "remove", "gone"])).code).toBe(0);
    await vi.waitFor(async () => expect((await deliver(gw, "gone", randomUUID())).status).toBe(404), {
      timeout: 10_000,
      interval: 100,
    });
    // Nothing has run yet: every run is still held (the first) or waiting in the queue.
    expect(existsSync(runs)).toBe(false);
    writeFileSync(gate, "");
    await vi.waitFor(
      () => {
        const ran = readFileSync(runs, "utf8").split("\n");
        for (const id of ids) expect(ran).toContain(id);
      },
      { timeout: 20_000, interval: 200 },
    );
  });

  it("svc webhook test right after svc webhook subscribe (or disable) is answered as the record now says: it waits for the gateway's poll of the store", async () => {
    const config = clusterConfig(
      cluster.redis.url,
      `s${randomUUID()}`,
      {},
      sharedAppendAgent(join(cluster.dir, "quick.log")),
    );
    const gw = await startNode(config);
    nodes.push(gw);
    const host = cliHome(config);
    expect((await svc(host, ["webhook", "subscribe", "quick", "--secret", SECRET])).code).toBe(0);
    const tested = await svc(host, ["webhook", "test", "quick", "--port", String(gw.gateway.port)]);
    expect(tested.stdout).toContain("202 Accepted");
    expect(tested.code).toBe(0);
    // Disabled a moment ago: answered as the record now says, as with the file.
    expect((await svc(host, ["webhook", "disable", "quick"])).code).toBe(0);
    const disabled = await svc(host, ["webhook", "test", "quick", "--port", String(gw.gateway.port)]);
    expect(disabled.stdout).toContain("404 Not Found");
    expect(disabled.code).toBe(1);
  });

  it("svc webhook redeliver right after svc webhook disable (or enable) is answered as the record now says: a disabled subscription runs nothing", async () => {
    const runs = join(cluster.dir, "redeliver.log");
    const config = clusterConfig(cluster.redis.url, `s${randomUUID()}`, {}, sharedAppendAgent(runs));
    const gw = await startNode(config);
    nodes.push(gw);
    // The CLI in the gateway's SVC_HOME, whose delivery history it redelivers from.
    const cli = (args: string[]) => svc(gw.home, [...args, "--port", String(gw.gateway.port)]);
    expect((await svc(gw.home, ["webhook", "subscribe", "again", "--secret", SECRET])).code).toBe(0);
    const id = randomUUID();
    await vi.waitFor(async () => expect((await deliver(gw, "again", id)).status).toBe(202), {
      timeout: 5_000,
      interval: 100,
    });
    await vi.waitFor(() => expect(appendedIds(runs).get(id)).toBe(1), { timeout: 10_000, interval: 100 });

    expect((await svc(gw.home, ["webhook", "disable", "again"])).code).toBe(0);
    const disabled = await cli(["webhook", "redeliver", id]);
    expect(disabled.stdout).toContain("404 Not Found");
    expect(disabled.code).toBe(1);

    expect((await svc(gw.home, ["webhook", "enable", "again"])).code).toBe(0);
    const enabled = await cli(["webhook", "redeliver", id]);
    expect(enabled.stdout).toContain("202 Accepted");
    expect(enabled.code).toBe(0);
    const redelivered = /as (redelivery-[0-9a-f]{8}-\S+)\)/.exec(enabled.stdout)?.[1] as string;
    await vi.waitFor(() => expect(appendedIds(runs).get(redelivered)).toBe(1), {
      timeout: 10_000,
      interval: 100,
    });
    // The one sent while the subscription was disabled ran nothing.
    expect([...appendedIds(runs).keys()].filter((run) => run !== id)).toEqual([redelivered]);
  });

  it("a host whose webhook adapter is off (a config.yaml holding only state:, or a worker's) subscribes too, and the gateways sharing the Redis serve it", async () => {
    const prefix = `s${randomUUID()}`;
    const config = clusterConfig(
      cluster.redis.url,
      prefix,
      {},
      sharedAppendAgent(join(cluster.dir, "admin.log")),
    );
    const gw = await startNode(config, QUICK_POLL);
    nodes.push(gw);
    // An admin host: its config.yaml names the Redis and nothing else, so its adapter is off.
    const admin = cliHome({ state: config.state });
    const off = `${join(admin.dir, "config.yaml")}: platforms.webhook.enabled is not set, and false is its default in a config.yaml`;
    const note = `Note: the webhook adapter is off here (${off}), so a gateway started with this configuration serves no webhook; the subscriptions in ${prefix}:subscriptions in Redis at ${cluster.redis.url} are served by the gateways sharing that Redis whose adapter is on\n`;
    const subscribed = await svc(admin, ["webhook", "subscribe", "gh", "--secret", SECRET]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toContain("Subscribed gh");
    // No address of this host, which serves nothing: the path the serving gateways answer at.
    expect(subscribed.stdout).toContain(
      "URL:    /webhooks/gh on each gateway sharing that Redis whose webhook adapter is on (this host's is off)\n",
    );
    expect(subscribed.stderr).toBe(note);
    await vi.waitFor(async () => expect((await deliver(gw, "gh", randomUUID())).status).toBe(202), {
      timeout: 10_000,
      interval: 100,
    });
    // The other commands say the same, not that nothing receives the subscriptions.
    const disabled = await svc(admin, ["webhook", "disable", "gh"]);
    expect(disabled.code).toBe(0);
    expect(disabled.stderr).toBe(note);
    await vi.waitFor(async () => expect((await deliver(gw, "gh", randomUUID())).status).toBe(404), {
      timeout: 10_000,
      interval: 100,
    });
  });

  it("a gateway started after the subscription serves it from the start", async () => {
    const config = clusterConfig(
      cluster.redis.url,
      `s${randomUUID()}`,
      {},
      sharedAppendAgent(join(cluster.dir, "late.log")),
    );
    expect((await svc(cliHome(config), ["webhook", "subscribe", "late", "--secret", SECRET])).code).toBe(0);
    const gw = await startNode(config);
    nodes.push(gw);
    expect((await deliver(gw, "late", randomUUID())).status).toBe(202);
  });

  it("the CLI without a reachable Redis fails naming state.redis_url (subscribe, list, config check)", async () => {
    const down = await startTestRedis();
    await down.cleanup();
    const home = cliHome(clusterConfig(down.url, "x", {}, {}));
    const result = await svc(home, ["webhook", "subscribe", "gh", "--secret", SECRET]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("state.redis_url");
    expect(result.stderr).toContain(`127.0.0.1:${down.port}`);
    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toContain("state.redis_url");
    // The gateway would refuse to start, so `svc config check` reports it.
    const checked = await svc(home, ["config", "check"]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain("state.redis_url: cannot reach");
  });
});

describe("a record in Redis that is not JSON (written with redis-cli or another tool)", {
  timeout: 30_000,
}, () => {
  it("costs only its own route: listed as invalid, the others listed and written, and svc webhook remove takes it", async () => {
    const prefix = `s${randomUUID()}`;
    const keys = redisKeys(prefix);
    const home = cliHome(clusterConfig(cluster.redis.url, prefix, {}, {}));
    expect((await svc(home, ["webhook", "subscribe", "good", "--secret", SECRET])).code).toBe(0);
    const client = new Redis(cluster.redis.url);
    try {
      await client.hset(keys.subscriptions(), "bad", '{"secret": TOPSECRET}');
      const listed = await svc(home, ["webhook", "list"]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^good +\(all\) +log +default +yes/m);
      expect(listed.stdout).toMatch(
        /^bad +- .* invalid .*bad: not valid JSON — fix it, or svc webhook remove bad$/m,
      );
      expect(listed.stdout).not.toContain("TOPSECRET");
      const checked = await svc(home, ["config", "check"]);
      expect(checked).toMatchObject({ code: 0, stdout: expect.stringContaining("2 subscriptions") });
      expect(checked.stderr).toContain("bad: not valid JSON");
      // Another record's write leaves the unreadable one as it was; enabling it is refused.
      expect((await svc(home, ["webhook", "subscribe", "other", "--secret", SECRET])).code).toBe(0);
      const enabled = await svc(home, ["webhook", "enable", "bad"]);
      expect(enabled).toMatchObject({ code: 1, stderr: expect.stringContaining("bad is not valid JSON") });
      expect(await client.hget(keys.subscriptions(), "bad")).toBe('{"secret": TOPSECRET}');
      expect(await svc(home, ["webhook", "remove", "bad"])).toMatchObject({
        code: 0,
        stdout: "Removed bad\n",
      });
      expect(Object.keys(await client.hgetall(keys.subscriptions())).sort()).toEqual(["good", "other"]);
    } finally {
      client.disconnect();
    }
  });
});

describe("stale updates in the Redis store", { timeout: 30_000 }, () => {
  it("a writer that read before a concurrent remove cannot bring the route back", async () => {
    const keys = redisKeys(`s${randomUUID()}`);
    const client = new Redis(cluster.redis.url);
    const other = new Redis(cluster.redis.url);
    try {
      const store = createRedisSubscriptionStore(client, keys, "test");
      await store.update((records) => {
        records.gh = { secret: SECRET, enabled: true };
      });
      const read = await store.read();
      // Another host removes it after this writer read the store.
      await other.hdel(keys.subscriptions(), "gh");
      await other.incr(keys.subscriptionsRevision());
      await expect(
        store.update((records) => {
          assertUnchanged(store.path, records, "gh", ownRecord(read.records, "gh"));
          records.gh = { secret: SECRET, enabled: true, description: "stale" };
        }),
      ).rejects.toMatchObject({ code: "store_conflict" });
      expect(await other.hgetall(keys.subscriptions())).toEqual({});
    } finally {
      client.disconnect();
      other.disconnect();
    }
  });

  it("a change that lands between the writer's read and its write is judged again: disable wins over a stale update", async () => {
    const keys = redisKeys(`s${randomUUID()}`);
    const client = new Redis(cluster.redis.url);
    const other = new Redis(cluster.redis.url);
    try {
      const store = createRedisSubscriptionStore(client, keys, "test");
      await store.update((records) => {
        records.gh = { secret: SECRET, enabled: true };
      });
      const read = await store.read();
      let attempts = 0;
      await expect(
        store.update((records) => {
          attempts += 1;
          // First attempt: the route is disabled after this update read the hash (WATCHed); sent on the
          // same connection, so it lands before the update's MULTI/EXEC, which it aborts.
          if (attempts === 1)
            void client.hset(keys.subscriptions(), "gh", JSON.stringify({ secret: SECRET, enabled: false }));
          assertUnchanged(store.path, records, "gh", ownRecord(read.records, "gh"));
          records.gh = { secret: SECRET, enabled: true, description: "stale" };
        }),
      ).rejects.toMatchObject({ code: "store_conflict" });
      expect(attempts).toBe(2);
      expect(JSON.parse((await other.hget(keys.subscriptions(), "gh")) ?? "{}")).toEqual({
        secret: SECRET,
        enabled: false,
      });
    } finally {
      client.disconnect();
      other.disconnect();
    }
  });
});
