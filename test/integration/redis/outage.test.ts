import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempPath } from "../../helpers/home.js";
import { postJson, request } from "../../helpers/http.js";
import { scrapedSample } from "../../helpers/metrics.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendedIds,
  type ClusterNode,
  clusterConfig,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";

/**
 * Redis stopped under load: requests are answered 503 with Retry-After (never a 202 that is not kept),
 * each instance logs the outage once, and serves again by itself once Redis is back. Redis keeps an
 * append-only file here, so what it acknowledged before the outage is still there after it.
 */

const SECRET = "outage-secret";
let redis: TestRedis;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis({ persist: true });
});
afterAll(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await redis.cleanup();
});

// The tests of each group of describe.concurrent below run at once: those of "stopping while Redis is
// unreachable", then (after the mid-load test, which keeps the two groups apart) those of the two
// idle-client describes and the full Redis's. Each has a Redis and a gateway of its own and mostly waits
// (for a timeout, an idle spell, a stop).

/**
 * A gateway with route `hook` on a Redis of its own (key prefix `<prefix><uuid>`, agent lines appended to a
 * temporary `<log>` file), and a signed push to it.
 */
async function hookOnOwnRedis(prefix: string, log: string) {
  const own = await startTestRedis();
  const config = clusterConfig(
    own.url,
    `${prefix}${randomUUID()}`,
    { hook: { secret: SECRET } },
    sharedAppendAgent(tempPath(log, ".log")),
  );
  const node = await startNode(config, { drainTimeoutMs: 200 });
  const deliver = async () => {
    const body = JSON.stringify({ n: 1 });
    return postJson(node.url("/webhooks/hook"), body, {
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": randomUUID(),
      "X-Hub-Signature-256": await sign(SECRET, body),
    });
  };
  return { own, node, deliver };
}

describe.concurrent("stopping while Redis is unreachable", { timeout: 60_000 }, () => {
  it("the gateway's stop ends (BullMQ's unforced close would wait for Redis to answer its QUIT)", async () => {
    const own = await startTestRedis();
    try {
      const runs = join(tmpdir(), `svc-outage-${randomUUID()}.log`);
      const config = clusterConfig(
        own.url,
        `u${randomUUID()}`,
        { hook: { secret: SECRET } },
        sharedAppendAgent(runs),
      );
      const node = await startNode(config, { drainTimeoutMs: 500 });
      await own.stop();
      // Once a request is refused for it, the gateway knows Redis is gone.
      await vi.waitFor(
        async () => {
          const body = JSON.stringify({ n: 1 });
          const answer = await postJson(node.url("/webhooks/hook"), body, {
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": `u-${randomUUID()}`,
            "X-Hub-Signature-256": await sign(SECRET, body),
          });
          expect(answer.status).toBe(503);
        },
        { timeout: 20_000, interval: 50 },
      );
      // A hang fails the test by its timeout.
      await node.stop();
    } finally {
      await own.cleanup();
    }
  });

  it("a frozen Redis (its connections stay open) is logged unreachable, then reachable again once it answers", async () => {
    const { own, node, deliver } = await hookOnOwnRedis("z", "svc-frozen-log");
    const state = () => node.logs().filter((l) => l.msg.startsWith("[state] Redis at"));
    try {
      own.freeze();
      expect((await deliver()).status).toBe(503);
      // Kept frozen until the outage is logged: a request's command unanswered in 2 s is one only once a
      // PING gets no answer in 2 s either (one slow command is no outage).
      await vi.waitFor(() => expect(state().some((l) => l.msg.includes("is unreachable"))).toBe(true), {
        timeout: 15_000,
        interval: 100,
      });
      // /health stays 200 meanwhile (docs/operations.md): every instance sharing the Redis is alike, and
      // neither a load balancer's nor a supervisor's action on it would bring Redis back.
      expect((await request(node.url("/health"))).status).toBe(200);
      expect((await deliver()).status).toBe(503);
      own.thaw();
      await vi.waitFor(
        () => {
          expect(state().filter((l) => l.msg.includes("is unreachable"))).toHaveLength(1);
          expect(state().filter((l) => l.msg.includes("is reachable again"))).toHaveLength(1);
        },
        { timeout: 15_000, interval: 100 },
      );
      expect((await deliver()).status).toBe(202);
      // The same server, thawed: nothing of it was lost, and nothing says so.
      expect(state().filter((l) => l.msg.includes("restarted"))).toEqual([]);
    } finally {
      own.thaw();
      await node.stop();
      await own.cleanup();
    }
  });

  it("a Redis that keeps nothing, restarted during the outage, is said to have lost what it held, once it is back", async () => {
    const own = await startTestRedis();
    const config = clusterConfig(
      own.url,
      `r${randomUUID()}`,
      { hook: { secret: SECRET } },
      sharedAppendAgent(tempPath("svc-restarted-log", ".log")),
    );
    const node = await startNode(config, { drainTimeoutMs: 200 });
    const state = () => node.logs().filter((l) => l.msg.startsWith("[state] Redis at"));
    try {
      await own.stop();
      await own.start();
      await vi.waitFor(() => expect(state().some((l) => l.msg.includes("is reachable again"))).toBe(true), {
        timeout: 15_000,
        interval: 50,
      });
      await vi.waitFor(
        () =>
          expect(state().filter((l) => l.level === 40 && l.msg.includes("restarted"))).toEqual([
            expect.objectContaining({
              msg: `[state] Redis at ${own.url} restarted while it was unreachable (its run_id changed), and it keeps nothing across a restart (appendonly no, save ""): the runs waiting in its queue, the pending coalescing groups, the idempotency records and the dynamic subscriptions it held are gone (a sender's retry of an event it had accepted runs as a new one) — set appendonly yes in its redis.conf (and CONFIG SET appendonly yes for the running server)`,
            }),
          ]),
        { timeout: 5_000, interval: 50 },
      );
    } finally {
      await node.stop();
      await own.cleanup();
    }
  });

  it("a Redis that keeps nothing but loaded a snapshot written before its restart (SAVE, SHUTDOWN SAVE) is not said to have lost what it held", async () => {
    const own = await startTestRedis();
    const prefix = `s${randomUUID()}`;
    const config = clusterConfig(
      own.url,
      prefix,
      { hook: { secret: SECRET } },
      sharedAppendAgent(tempPath("svc-reloaded-log", ".log")),
    );
    const node = await startNode(config, { drainTimeoutMs: 200 });
    const state = () => node.logs().filter((l) => l.msg.startsWith("[state] Redis at"));
    const client = new Redis(own.url);
    try {
      await client.save();
      client.disconnect();
      await own.stop();
      await own.start();
      await vi.waitFor(
        () =>
          expect(state().filter((l) => l.msg.includes("restarted"))).toEqual([
            expect.objectContaining({
              level: 30,
              msg: `[state] Redis at ${own.url} restarted while it was unreachable (its run_id changed) and loaded what it held from a file, though its settings keep nothing across a restart (appendonly no, save "") — set appendonly yes in its redis.conf (and CONFIG SET appendonly yes for the running server)`,
            }),
          ]),
        { timeout: 15_000, interval: 50 },
      );
    } finally {
      client.disconnect();
      await node.stop();
      await own.cleanup();
    }
  });

  it("a start on a Redis holding none of svc's keys records it lost, so an instance still to notice the restart that emptied it says so", async () => {
    const own = await startTestRedis();
    const prefix = `e${randomUUID()}`;
    const config = clusterConfig(
      own.url,
      prefix,
      { hook: { secret: SECRET } },
      sharedAppendAgent(tempPath("svc-emptied-log", ".log")),
    );
    const node = await startNode(config, { drainTimeoutMs: 200 });
    const client = new Redis(own.url);
    try {
      const runId = /run_id:(\w+)/.exec(await client.info("server"))?.[1];
      expect(await client.get(`${prefix}:server-seen`)).toBe(`${runId} lost`);
    } finally {
      client.disconnect();
      await node.stop();
      await own.cleanup();
    }
  });

  it("the stop ends when Redis stops answering without closing its connections (a frozen server)", async () => {
    const own = await startTestRedis();
    try {
      const config = clusterConfig(
        own.url,
        `f${randomUUID()}`,
        { hook: { secret: SECRET } },
        sharedAppendAgent(join(tmpdir(), `svc-frozen-${randomUUID()}.log`)),
      );
      const node = await startNode(config, { drainTimeoutMs: 200 });
      // The connections look ready, so BullMQ's close is unforced and its QUIT is never answered.
      own.freeze();
      await node.stop();
    } finally {
      own.thaw();
      await own.cleanup();
    }
  });
});

describe("Redis stopped and restarted mid-load", { timeout: 90_000 }, () => {
  it("503 with Retry-After during the outage, 202 again after it, and every 202'd id runs", async () => {
    const runs = join(tmpdir(), `svc-outage-${randomUUID()}.log`);
    const config = clusterConfig(
      redis.url,
      `o${randomUUID()}`,
      { hook: { secret: SECRET } },
      sharedAppendAgent(runs, 4),
    );
    // A job a worker took just as Redis went down (the reply lost with the connection) is handed back by
    // stall detection once its lock expires: a short lock keeps that within the wait below.
    const stall = { stall: { lockDurationMs: 3000, stalledIntervalMs: 1000 } };
    nodes.push(...(await Promise.all([startNode(config, stall), startNode(config, stall)])));
    const answers: Array<{ id: string; status: number; body: unknown; retryAfter: string | null }> = [];
    let stop = false;
    let seq = 0;
    const sender = async (s: number) => {
      while (!stop) {
        seq += 1;
        const id = `o-${s}-${seq}`;
        const body = JSON.stringify({ seq });
        const answer = await postJson((nodes[seq % 2] as ClusterNode).url("/webhooks/hook"), body, {
          "X-GitHub-Event": "push",
          "X-GitHub-Delivery": id,
          "X-Hub-Signature-256": await sign(SECRET, body),
        });
        answers.push({
          id,
          status: answer.status,
          body: answer.body,
          retryAfter: answer.headers.get("retry-after"),
        });
      }
    };
    const senders = Promise.all([0, 1, 2, 3, 4].map(sender));
    const count = (status: number) => answers.filter((a) => a.status === status).length;
    await vi.waitFor(() => expect(count(202)).toBeGreaterThanOrEqual(30), { timeout: 20_000, interval: 20 });
    await redis.stop();
    await vi.waitFor(() => expect(count(503)).toBeGreaterThanOrEqual(20), { timeout: 20_000, interval: 20 });
    const available = (node: ClusterNode) => scrapedSample(node.url(""), "svc_state_available");
    expect(await Promise.all(nodes.map(available))).toEqual([0, 0]);
    const acceptedBefore = count(202);
    await redis.start();
    await vi.waitFor(() => expect(count(202)).toBeGreaterThanOrEqual(acceptedBefore + 30), {
      timeout: 30_000,
      interval: 20,
    });
    stop = true;
    await senders;
    await vi.waitFor(async () => expect(await Promise.all(nodes.map(available))).toEqual([1, 1]), {
      timeout: 10_000,
      interval: 50,
    });

    expect(answers.filter((a) => a.status !== 202 && a.status !== 503)).toEqual([]);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body).toEqual({ error: "State store unavailable, retry later" });
      expect(a.retryAfter).toBe("5");
    }
    const accepted = answers.filter((a) => a.status === 202).map((a) => a.id);
    await vi.waitFor(
      () => {
        const ran = appendedIds(runs);
        expect(accepted.filter((id) => !ran.has(id))).toEqual([]);
      },
      { timeout: 30_000, interval: 100 },
    );
    rmSync(runs, { force: true });
    for (const node of nodes) {
      const msgs = node.logs().map((l) => l.msg);
      // The state line, once per outage (the subscriptions' refresh says "Redis is unreachable" too).
      const state = msgs.filter((m) => m.startsWith("[state] Redis at"));
      expect(state.filter((m) => m.includes("is unreachable"))).toHaveLength(1);
      expect(state.filter((m) => m.includes("is reachable again"))).toHaveLength(1);
    }
  });
});

/** A gateway on `url` with one route and an agent appending to a log of its own (removed by the test). */
async function idleNode(url: string) {
  const agentLog = join(tmpdir(), `svc-idle-log-${randomUUID()}.log`);
  const config = clusterConfig(
    url,
    `i${randomUUID()}`,
    { hook: { secret: SECRET } },
    sharedAppendAgent(agentLog),
  );
  return { node: await startNode(config, { drainTimeoutMs: 200 }), agentLog };
}

/** The status a signed push to the route of `idleNode` is answered with. */
async function postSigned(node: Awaited<ReturnType<typeof idleNode>>["node"]): Promise<number> {
  const body = JSON.stringify({ n: 1 });
  const answer = await postJson(node.url("/webhooks/hook"), body, {
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": randomUUID(),
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
  return answer.status;
}

describe.concurrent("a Redis that closes idle clients (its timeout setting)", { timeout: 60_000 }, () => {
  it("closes none of an idle gateway's connections: no outage is logged, and a request after the idle spell is answered 202", async () => {
    const own = await startTestRedis({ args: ["--timeout", "2"] });
    const { node, agentLog } = await idleNode(own.url);
    try {
      // Redis closes a client idle for more than its timeout (2 s) at its next check (every 100 ms): within
      // three seconds, when nothing keeps the connections busy. svc pings within half of it (every second),
      // which leaves a loaded machine's late timer a second, not half of one.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const unreachable = node.logs().filter((l) => l.msg.includes("is unreachable"));
      expect(unreachable).toEqual([]);
      expect(await postSigned(node)).toBe(202);
      expect(await scrapedSample(node.url(""), "svc_state_available")).toBe(1);
    } finally {
      await node.stop();
      await own.cleanup();
      rmSync(agentLog, { force: true });
    }
  });
});

/**
 * The setting was read once, at the gateway's start: a Redis restarted with a new redis.conf (or one whose
 * timeout was set on the running server) closed the idle connections of a gateway started before, each
 * close an outage in the log and a 503 for a request arriving then, until the gateway was restarted.
 */
describe.concurrent("a Redis whose timeout is set after the gateway started", { timeout: 60_000 }, () => {
  it("is read again once Redis is back: the connections it closes cost one outage, then none is closed", async () => {
    const own = await startTestRedis();
    const { node, agentLog } = await idleNode(own.url);
    const admin = new Redis(own.url);
    try {
      await admin.config("SET", "timeout", "2");
      admin.disconnect();
      const outages = () => node.logs().filter((l) => l.msg.includes("is unreachable")).length;
      // Redis closes a client idle for more than two seconds at its next check (every 100 ms).
      await vi.waitFor(() => expect(outages()).toBeGreaterThan(0), { timeout: 10_000, interval: 100 });
      await vi.waitFor(
        () => expect(node.logs().some((l) => l.msg.includes("is reachable again"))).toBe(true),
        { timeout: 10_000, interval: 100 },
      );
      const after = outages();
      // Idle half as long again as the timeout: connections not pinged within it would be closed again.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(outages()).toBe(after);
      expect(await postSigned(node)).toBe(202);
    } finally {
      admin.disconnect();
      await node.stop();
      await own.cleanup();
      rmSync(agentLog, { force: true });
    }
  });
});

// At once with the two idle-client describes above: it mostly waits for its gateway's stop.
describe.concurrent("a Redis that answers but refuses writes (full: OOM)", { timeout: 60_000 }, () => {
  it("reads svc_state_available 0 while requests are answered 503 for it, as a full disk does with local, and 1 once a write is taken again", async () => {
    const { own, node, deliver } = await hookOnOwnRedis("f", "svc-full-log");
    const admin = new Redis(own.url);
    const base = node.url("");
    try {
      expect((await deliver()).status).toBe(202);
      expect(await scrapedSample(base, "svc_state_available")).toBe(1);
      // Full: every write refused (OOM), reads and PING still answered.
      await admin.config("SET", "maxmemory", "1");
      expect((await deliver()).status).toBe(503);
      expect(await scrapedSample(base, "svc_state_available")).toBe(0);
      await admin.config("SET", "maxmemory", "0");
      expect((await deliver()).status).toBe(202);
      expect(await scrapedSample(base, "svc_state_available")).toBe(1);
      // Then read-only (a failover made it a replica) within the minute: that refusal is named too, with
      // its own fix, not left to the "takes writes again" line that ends it.
      await admin.call("REPLICAOF", "127.0.0.1", "1");
      try {
        expect((await deliver()).status).toBe(503);
      } finally {
        await admin.call("REPLICAOF", "NO", "ONE");
      }
      const refusals = node
        .logs()
        .filter((line) => line.level === 50 && line.msg.includes("requests that need it are answered 503"))
        .map((line) => line.msg);
      expect(refusals).toHaveLength(2);
      expect(refusals[0]).toContain("(OOM command not allowed");
      expect(refusals[1]).toContain("(READONLY ");
      expect(refusals[1]).toContain("a read-only replica: point state.redis_url at the primary");
      // Stopped right after the spell (as after a failover): no close waits out its bound. (Redis drops the
      // clients blocked on it when it becomes a replica; a worker's close waited 5 s for its blocking
      // connection, still waiting to reconnect, to say it had ended.)
      await node.gateway.stop();
      const unanswered = node.logs().filter((line) => line.msg.includes("the stop goes on without it"));
      expect(unanswered).toEqual([]);
    } finally {
      admin.disconnect();
      await node.stop();
      await own.cleanup();
    }
  });
});
