import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalGroup } from "../../helpers/process.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendedIds,
  type ClusterNode,
  clusterConfig,
  prCoalescingRoute,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";

/**
 * An instance SIGKILLed after recording a request's delivery id and before storing its run: the sender
 * never got its 202 (the connection was cut), and its retry must not be answered `duplicate` for an
 * event nothing stored.
 */

const SECRET = "record-kill-secret";
const KILL_AFTER_RECORD = join(import.meta.dirname, "../../helpers/killAfterSeenRecord.mjs");

let redis: TestRedis;
let home: TempHome;
const children: ChildProcess[] = [];
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  home = tempHome();
});
afterAll(async () => {
  for (const child of children) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
  await Promise.all(nodes.map((node) => node.stop()));
  await redis.cleanup();
  home.cleanup();
});

/** A gateway in a process group of its own that dies right after its first delivery id is recorded. */
function startDoomedInstance(
  config: Record<string, unknown>,
): Promise<{ child: ChildProcess; port: number }> {
  const name = `doomed-${randomUUID()}`;
  const dir = join(home.dir, name);
  home.write(`${name}/config.yaml`, stringify(config));
  return startGatewayProcess({ dir, stall: {}, children, nodeArgs: ["--import", KILL_AFTER_RECORD] });
}

async function push(port: number, id: string) {
  const body = JSON.stringify({ id, pr: 7 });
  return postJson(`http://127.0.0.1:${port}/webhooks/hook`, body, {
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

const ROUTES: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ["an agent route", { secret: SECRET }, "accepted"],
  ["a coalescing route (killed before its join)", prCoalescingRoute(SECRET), "coalesced"],
];

describe("an instance killed between recording a delivery id and storing its run", {
  timeout: 60_000,
}, () => {
  // The two routes at once: each has its key prefix, its instances and its log, and mostly waits (an
  // instance's start, its kill, the run).
  it.concurrent.each(ROUTES)(
    "%s: the sender's retry on another instance is answered 503 with Retry-After while the record lasts, then runs — never 200 duplicate",
    async (_name, route, status) => {
      const prefix = `k${randomUUID()}`;
      const log = join(home.dir, `${prefix}.log`);
      const config = clusterConfig(redis.url, prefix, { hook: route }, sharedAppendAgent(log));
      const doomed = await startDoomedInstance(config);
      const exited = new Promise((resolve) => doomed.child.once("exit", (_code, signal) => resolve(signal)));
      await expect(push(doomed.port, "lost-1")).rejects.toThrow();
      expect(await exited).toBe("SIGKILL");
      const raw = new Redis(redis.url);
      try {
        // What the kill left: the id recorded (pending), no run stored under it.
        expect(await raw.exists(`${prefix}:seen:hook:lost-1`)).toBe(1);
        expect(await raw.exists(`${prefix}:bull:runs:j-hook%3Alost-1`)).toBe(0);
        const live = await startNode(config);
        nodes.push(live);
        const retry = await push(live.gateway.port, "lost-1");
        expect(retry.status).toBe(503);
        const after = Number(retry.headers.get("retry-after"));
        expect(after).toBeGreaterThan(0);
        expect(after).toBeLessThanOrEqual(60);
        // The pending record runs out (its minute, shortened here): the next retry is a new delivery and runs.
        await raw.pexpire(`${prefix}:seen:hook:lost-1`, 1);
        await vi.waitFor(async () => expect(await raw.exists(`${prefix}:seen:hook:lost-1`)).toBe(0));
        const accepted = await push(live.gateway.port, "lost-1");
        expect([accepted.status, accepted.body.status]).toEqual([202, status]);
        await vi.waitFor(() => expect(appendedIds(log).get("lost-1")).toBe(1), {
          timeout: 20_000,
          interval: 50,
        });
        // Stored now: a further retry is the duplicate it is.
        expect((await push(live.gateway.port, "lost-1")).body).toEqual({ status: "duplicate" });
      } finally {
        raw.disconnect();
      }
    },
  );
});
