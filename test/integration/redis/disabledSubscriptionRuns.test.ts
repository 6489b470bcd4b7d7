import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import { describe, expect, it, vi } from "vitest";
import { jobIdOf } from "../../../src/io/state/redis/sharedQueue.js";
import { pendingRun } from "../../helpers/pendingRun.js";
import {
  appendedIds,
  type ClusterNode,
  clusterConfig,
  clusterSuite,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";
import { svc } from "../cli/svc.js";

/**
 * `state.backend: redis`: a run of a dynamic subscription disabled since it was accepted is never dropped,
 * and the log names the subscription as disabled (not as a route that no longer exists).
 */

const SECRET = "dynamic-secret";
const cluster = clusterSuite("svc-disabled-", SECRET);
const { nodes, cliHome, deliver } = cluster;

const messages = (node: ClusterNode, part: string) => node.logs().filter((line) => line.msg.includes(part));

describe("runs of a disabled subscription with state.backend: redis", { timeout: 60_000 }, () => {
  it("a run stored without its route's settings (an earlier version's) waits in Redis while its subscription is disabled, said once, and runs once it is enabled", async () => {
    const prefix = `s${randomUUID()}`;
    const runs = join(cluster.dir, `legacy-${randomUUID()}.log`);
    const config = clusterConfig(cluster.redis.url, prefix, {}, sharedAppendAgent(runs));
    const host = cliHome(config);
    expect((await svc(host, ["webhook", "subscribe", "deploys", "--secret", SECRET])).code).toBe(0);
    expect((await svc(host, ["webhook", "disable", "deploys"])).code).toBe(0);
    // The job an earlier version stored: the pending run and its route's name, not the route's settings.
    const queue = new Queue("runs", {
      connection: { host: "127.0.0.1", port: cluster.redis.port },
      prefix: `${prefix}:bull`,
    });
    const key = "deploys:legacy-1";
    try {
      await queue.add("runs", pendingRun("legacy-1", { routeName: "deploys" }), { jobId: jobIdOf(key) });
      const gw = await startNode(config, { stall: { laterMs: 200 } });
      nodes.push(gw);
      const waits =
        "[webhook] deploys: a run stored by an earlier version of svc, without its route's settings, cannot run here — deploys is a disabled subscription now (svc webhook enable deploys serves it again); it waits in Redis, looked at again every 200 ms, and runs on the first instance that serves deploys for profile default";
      await vi.waitFor(() => expect(messages(gw, waits)).toHaveLength(1), { timeout: 10_000, interval: 100 });
      // Looked at again several times meanwhile: kept (delayed, not failed), and said once.
      await vi.waitFor(
        async () => {
          const job = await queue.getJob(jobIdOf(key));
          expect(job?.attemptsStarted ?? 0).toBeGreaterThanOrEqual(3);
        },
        { timeout: 10_000, interval: 100 },
      );
      expect(["delayed", "waiting", "active"]).toContain(
        await (await queue.getJob(jobIdOf(key)))?.getState(),
      );
      expect(messages(gw, waits)).toHaveLength(1);
      expect(messages(gw, "job failed")).toEqual([]);
      expect(appendedIds(runs).size).toBe(0);

      expect((await svc(host, ["webhook", "enable", "deploys"])).code).toBe(0);
      await vi.waitFor(() => expect(appendedIds(runs).get("legacy-1")).toBe(1), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await queue.close();
    }
  });

  it("a queued run of a subscription disabled before it starts goes on with its accepted route, and the log names the subscription as disabled", async () => {
    const runs = join(cluster.dir, `queued-${randomUUID()}.log`);
    // One run at a time, each a second long: the second waits in the shared queue.
    const config = clusterConfig(cluster.redis.url, `s${randomUUID()}`, {}, sharedAppendAgent(runs, 1, 1));
    const gw = await startNode(config);
    nodes.push(gw);
    const host = cliHome(config);
    expect((await svc(host, ["webhook", "subscribe", "later", "--secret", SECRET])).code).toBe(0);
    await vi.waitFor(async () => expect((await deliver(gw, "later", "first")).status).toBe(202), {
      timeout: 10_000,
      interval: 100,
    });
    expect((await deliver(gw, "later", "second")).status).toBe(202);
    expect((await svc(host, ["webhook", "disable", "later"])).code).toBe(0);
    await vi.waitFor(() => expect(appendedIds(runs).get("second")).toBe(1), {
      timeout: 20_000,
      interval: 100,
    });
    const said = messages(gw, "[webhook] later: later is a disabled subscription now");
    expect(said.map((line) => line.msg)).toEqual([
      "[webhook] later: later is a disabled subscription now (svc webhook enable later serves it again); the run goes on with the route it was accepted under",
    ]);
    expect(messages(gw, "serves no route later")).toEqual([]);
  });

  it("a run a stop saved to webhook-pending-runs.json for a subscription disabled since is kept there, and the start names the subscription as disabled", async () => {
    const prefix = `s${randomUUID()}`;
    const config = clusterConfig(
      cluster.redis.url,
      prefix,
      {},
      sharedAppendAgent(join(cluster.dir, "saved.log")),
    );
    const host = cliHome(config);
    expect((await svc(host, ["webhook", "subscribe", "nightly", "--secret", SECRET])).code).toBe(0);
    expect((await svc(host, ["webhook", "disable", "nightly"])).code).toBe(0);
    const saved = { version: 1, runs: [pendingRun("saved-1", { routeName: "nightly" })] };
    const gw = await startNode(config, { files: { "webhook-pending-runs.json": JSON.stringify(saved) } });
    nodes.push(gw);
    const file = join(gw.home.dir, "webhook-pending-runs.json");
    await vi.waitFor(() => expect(messages(gw, "saved agent run(s) not resumed")).toHaveLength(1), {
      timeout: 10_000,
      interval: 100,
    });
    const [line] = messages(gw, "saved agent run(s) not resumed");
    expect(line?.msg).toContain(
      "1 saved agent run(s) not resumed — their route is a disabled subscription (nightly: 1; svc webhook enable nightly, then restart the gateway)",
    );
    expect(line?.msg).not.toContain("no longer exists");
    expect(JSON.parse(readFileSync(file, "utf8")).runs).toEqual(saved.runs);
  });
});
