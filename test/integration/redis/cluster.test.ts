import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SHARED_RUN_NOTE } from "../../../src/cli/webhook/deliveries.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { postJson } from "../../helpers/http.js";
import { sample } from "../../helpers/metrics.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendedIds,
  type ClusterNode,
  clusterConfig,
  prCoalescingRoute,
  promptAppendAgent,
  sharedAppendAgent,
  startNode,
} from "../../helpers/redisCluster.js";
import { journalLines, journalRuns } from "../../helpers/runJournal.js";
import { svc } from "../cli/svc.js";

/**
 * `state.backend: redis`: three gateways in one process share one redis-server. Each delivery id is
 * accepted by one of them and run exactly once by one of them, whichever instance the sender reached.
 */

const SECRET = "cluster-secret";
let redis: TestRedis;
let dir: string;
const nodes: ClusterNode[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), "svc-cluster-"));
});
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});
afterAll(async () => {
  await redis.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** `into`: the list the nodes are stopped from after the test (the file's, or a test's own: `ownNodes`). */
async function cluster(
  n: number,
  config: Record<string, unknown>,
  files: Record<string, string> = {},
  into: ClusterNode[] = nodes,
): Promise<ClusterNode[]> {
  const started = await Promise.all(Array.from({ length: n }, () => startNode(config, { files })));
  into.push(...started);
  return started;
}

/**
 * The nodes of a test that runs at once with others, stopped when it ends: `finished` is the test's own
 * `onTestFinished`, from its context (the file's afterEach would stop the nodes of the tests still running).
 */
function ownNodes(finished: (fn: () => Promise<void>) => void): ClusterNode[] {
  const own: ClusterNode[] = [];
  finished(async () => {
    await Promise.all(own.map((node) => node.stop()));
  });
  return own;
}

async function deliver(node: ClusterNode, route: string, id: string, payload: Record<string, unknown>) {
  const body = JSON.stringify(payload);
  return postJson(node.url(`/webhooks/${route}`), body, {
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

describe("three instances on one Redis", { timeout: 180_000 }, () => {
  it("20 senders × 20 unique ids over 3 instances, each re-sent to another instance: one 202 per id, each runs exactly once", async () => {
    // The in-process echo agent: each instance's run journal counts its runs, with no process per run.
    const gws = await cluster(
      3,
      clusterConfig(
        redis.url,
        `t${randomUUID()}`,
        { hook: { secret: SECRET, prompt: "n {n}" } },
        { provider: "echo", max_concurrent_runs: 4 },
      ),
    );
    const ran = () => {
      const counts = new Map<string, number>();
      for (const gw of gws)
        for (const [id, n] of journalRuns(gw.home.dir)) counts.set(id, (counts.get(id) ?? 0) + n);
      return counts;
    };
    const senders = Array.from({ length: 20 }, (_, s) => s);
    const perId = new Map<string, number[]>();
    await Promise.all(
      senders.map(async (s) => {
        for (let i = 0; i < 20; i++) {
          const id = `s${s}-e${i}`;
          const first = gws[(s + i) % 3] as ClusterNode;
          const again = gws[(s + i + 1) % 3] as ClusterNode;
          const answers = await Promise.all([
            deliver(first, "hook", id, { n: i }),
            deliver(again, "hook", id, { n: i }),
          ]);
          perId.set(
            id,
            answers.map((a) => a.status),
          );
          for (const a of answers) if (a.status === 200) expect(a.body).toEqual({ status: "duplicate" });
        }
      }),
    );
    expect(perId.size).toBe(400);
    expect([...perId.entries()].filter(([, statuses]) => statuses.sort().join() !== "200,202")).toEqual([]);
    await vi.waitFor(() => expect(ran().size).toBe(400), { timeout: 120_000, interval: 100 });
    const counts = ran();
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  });

  it("rate_limit holds for the three together: 30 of 90 requests pass, the rest are 429 with Retry-After", async () => {
    const runs = join(dir, `runs-${randomUUID()}.log`);
    const gws = await cluster(
      3,
      clusterConfig(redis.url, `t${randomUUID()}`, { hook: { secret: SECRET } }, sharedAppendAgent(runs, 4), {
        rate_limit: 30,
      }),
    );
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) => deliver(gws[i % 3] as ClusterNode, "hook", `rl-${i}`, { i })),
    );
    expect(answers.filter((a) => a.status === 202)).toHaveLength(30);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited).toHaveLength(60);
    for (const a of limited) expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("coalescing groups are shared: 9 events for one key over 3 instances (and 3 for another) make 2 runs", async () => {
    const runs = join(dir, `runs-${randomUUID()}.log`);
    const agent = promptAppendAgent(runs);
    const route = prCoalescingRoute(SECRET);
    const gws = await cluster(3, clusterConfig(redis.url, `t${randomUUID()}`, { hook: route }, agent));
    for (let i = 0; i < 9; i++) {
      const answer = await deliver(gws[i % 3] as ClusterNode, "hook", `x-${i}`, { pr: "x" });
      expect(answer).toMatchObject({ status: 202, body: { status: "coalesced" } });
      if (i % 3 === 0) await deliver(gws[(i + 1) % 3] as ClusterNode, "hook", `y-${i}`, { pr: "y" });
    }
    const ran = () =>
      existsSync(runs)
        ? readFileSync(runs, "utf8")
            .split("\n")
            .filter((l) => l !== "")
        : [];
    await vi.waitFor(() => expect(ran()).toHaveLength(2), { timeout: 20_000, interval: 50 });
    expect(ran().sort()).toEqual([
      "x-8|[Coalesced: this run covers 9 events; 8 earlier events for this key were superseded]",
      "y-6|[Coalesced: this run covers 3 events; 2 earlier events for this key were superseded]",
    ]);
    const dispatched = gws.flatMap((gw) =>
      gw.logs().filter((l) => l.msg.includes("coalesced group dispatched")),
    );
    expect(dispatched).toHaveLength(2);
    // Each line says why its group fired, as with one process: both quiet windows closed.
    expect(dispatched.map((l) => l.reason)).toEqual(["quiet_window", "quiet_window"]);
  });

  it("a due cron job fires once across the cluster", async () => {
    const runs = join(dir, `runs-${randomUUID()}.log`);
    const gws = await cluster(
      3,
      clusterConfig(redis.url, `t${randomUUID()}`, { hook: { secret: SECRET } }, sharedAppendAgent(runs, 2)),
      {
        "cron/jobs.json": oneJobStore({
          name: "nightly",
          prompt: "job nightly",
          next_run: "2026-01-01T00:00:00.000Z",
        }),
      },
    );
    // Every instance either ran the job or saw the due time taken by another one.
    const decided = (what: string) => gws.flatMap((gw) => gw.logs().filter((l) => l.msg.includes(what)));
    await vi.waitFor(
      () => expect(decided("run finished").length + decided("taken by another instance").length).toBe(3),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    expect(decided("run finished")).toHaveLength(1);
    expect([...appendedIds(runs).keys()].filter((id) => id.startsWith("cron-j1-"))).toHaveLength(1);
  });

  // The three tests below run at once, each with nodes of its own and its own key prefix: each mostly
  // waits on its agents' runs (3 s, 2 s) or a run held past its drain.
  it.concurrent("a scheduled cron run that ends in its instance's stop gives back the next due time it held, so another instance can run it, and the stop logs no Redis outage", async ({
    onTestFinished,
  }) => {
    const started = ownNodes(onTestFinished);
    const prefix = `t${randomUUID()}`;
    const runs = join(dir, `held-${randomUUID()}.log`);
    const node = await startNode(
      clusterConfig(redis.url, prefix, { hook: { secret: SECRET } }, sharedAppendAgent(runs, 1, 3)),
      {
        drainTimeoutMs: 30_000,
        files: {
          "cron/jobs.json": oneJobStore({
            name: "nightly",
            prompt: "job nightly",
            next_run: "2026-01-01T00:00:00.000Z",
          }),
        },
      },
    );
    started.push(node);
    const raw = new Redis(redis.url);
    try {
      const leases = () => raw.keys(`${prefix}:cron:default:j1:*`);
      // Its due time, and the next one, held while the run goes on.
      await vi.waitFor(async () => expect(await leases()).toHaveLength(2), { timeout: 20_000, interval: 50 });
      await node.gateway.stop();
      expect(appendedIds(runs).size).toBe(1);
      // Only the due time it ran stays claimed: the catch-up's, the latest of the daily due times from the
      // store's next_run on (docs/durability.md), not the one the store missed.
      const day = 86_400_000;
      const missed = Date.parse("2026-01-01T00:00:00.000Z");
      const latest = new Date(missed + Math.floor((Date.now() - missed) / day) * day).toISOString();
      expect(await leases()).toEqual([`${prefix}:cron:default:j1:${latest}`]);
      expect(node.logs().filter((line) => line.msg.includes("unreachable"))).toEqual([]);
    } finally {
      raw.disconnect();
    }
  });

  it.concurrent("svc webhook deliveries on the instance that ran an event another instance answered shows that run with its event type, as the answering instance shows the request", async ({
    onTestFinished,
  }) => {
    const started = ownNodes(onTestFinished);
    const runs = join(dir, `history-${randomUUID()}.log`);
    // One run at a time per instance, each lasting 2 s: the second event sent to A runs on B.
    const [a, b] = (await cluster(
      2,
      clusterConfig(
        redis.url,
        `t${randomUUID()}`,
        { hook: { secret: SECRET, prompt: "n {n}" } },
        sharedAppendAgent(runs, 1, 2),
      ),
      {},
      started,
    )) as [ClusterNode, ClusterNode];
    const ids = [`first-${randomUUID()}`, `second-${randomUUID()}`];
    for (const [n, id] of ids.entries()) expect((await deliver(a, "hook", id, { n })).status).toBe(202);
    await vi.waitFor(() => expect(appendedIds(runs).size).toBe(2), { timeout: 60_000, interval: 100 });
    type Row = { id: string; status: number | null; event?: string; run: { outcome: string } | null };
    const rowsOf = async (node: ClusterNode): Promise<Row[]> => {
      const res = await svc(node.home, ["webhook", "deliveries", "--json"]);
      expect(res.code).toBe(0);
      return JSON.parse(res.stdout) as Row[];
    };
    // Each instance writes its history out once per turn: the run's line follows its end.
    const [onA, onB] = await vi.waitFor(
      async () => {
        const rows: [Row[], Row[]] = [await rowsOf(a), await rowsOf(b)];
        expect(rows.flat().filter((row) => row.run?.outcome === "ok")).toHaveLength(2);
        return rows;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(onA.map((row) => [row.id, row.status]).sort()).toEqual(ids.map((id) => [id, 202]).sort());
    const ranOnB = onA.filter((row) => row.run === null).map((row) => row.id);
    expect(ranOnB).toHaveLength(1);
    // Its run record keeps the event type the request came with, which only A's request record had.
    expect(onB.map((row) => [row.id, row.status, row.event, row.run?.outcome])).toEqual([
      [ranOnB[0], null, "push", "ok"],
    ]);
    const table = await svc(b.home, ["webhook", "deliveries"]);
    expect(table.stdout).toMatch(
      new RegExp(
        `${ranOnB[0]}\\s+hook\\s+push\\s+-\\s+ok\\s+log ok\\s+request not in this history \\(received by another instance`,
      ),
    );
    // The answering instance's row of that request says where its run is, rather than a bare `-` that reads
    // as a run still to come; the one it ran itself shows its run.
    const answered = await svc(a.home, ["webhook", "deliveries"]);
    expect(answered.stdout).toMatch(
      new RegExp(
        `${ranOnB[0]}\\s+hook\\s+push\\s+202 accepted\\s+-\\s+-\\s+${SHARED_RUN_NOTE.replace(/[().]/g, "\\$&")}$`,
        "m",
      ),
    );
    const ranOnA = ids.find((id) => id !== ranOnB[0]) as string;
    expect(answered.stdout).toMatch(
      new RegExp(`${ranOnA}\\s+hook\\s+push\\s+202 accepted\\s+ok\\s+log ok$`, "m"),
    );
    // Its payload is kept by the instance that answered it: redeliver says to run it there (or that an instance
    // killed before recording the request kept none).
    const again = await svc(b.home, ["webhook", "redeliver", ranOnB[0] as string]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      `delivery "${ranOnB[0]}" ran here (route hook), but its request is not in this history: another gateway instance received it (run svc webhook redeliver there, with that instance's SVC_HOME: it keeps the payload)`,
    );
  });

  it.concurrent("an instance stopped while a run outlasts its drain stops, and leaves that job to another instance, which runs it once", async ({
    onTestFinished,
  }) => {
    const started = ownNodes(onTestFinished);
    const log = join(dir, "drain.log");
    const go = join(dir, "drain.go");
    // Until the go file exists a run waits (and is aborted by its instance's stop); after, it is done.
    const agent = {
      provider: "command",
      command: [
        "sh",
        "-c",
        `printf "%s start\\n" "$SVC_DELIVERY_ID" >> "$0"; ` +
          `while [ ! -e "$1" ]; do sleep 0.05; done; printf "%s done\\n" "$SVC_DELIVERY_ID" >> "$0"`,
        log,
        go,
      ],
      max_concurrent_runs: 2,
    };
    const config = clusterConfig(redis.url, `d${randomUUID()}`, { hook: { secret: SECRET } }, agent);
    const stall = { lockDurationMs: 1500, stalledIntervalMs: 500 };
    const first = await startNode(config, { stall, drainTimeoutMs: 200 });
    started.push(first);
    expect((await deliver(first, "hook", "drain-1", { n: 1 })).status).toBe(202);
    const logged = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
    await vi.waitFor(() => expect(logged()).toContain("drain-1 start"), { timeout: 20_000, interval: 20 });
    // Resolves only if the stop gives up on the run past the drain (a hang fails the test by its timeout).
    await first.stop();
    expect(logged()).not.toContain("drain-1 done");
    writeFileSync(go, "");
    started.push(await startNode(config, { stall }));
    await vi.waitFor(() => expect(logged()).toContain("drain-1 done"), { timeout: 30_000, interval: 50 });
    expect(logged().filter((line) => line === "drain-1 done")).toHaveLength(1);
  });

  it.concurrent("a run the shared queue gives up on (its instance lost too often) is recorded failed once, by the instance that gives it up: history row, failed-run count, run journal (a fired cron job's last_run) and one ERROR line saying what to do", async ({
    onTestFinished,
  }) => {
    const started = ownNodes(onTestFinished);
    const log = join(dir, `lost-${randomUUID()}.log`);
    // The run never ends by itself: its instance's stop past the drain leaves its job locked, as a lost instance does.
    const agent = {
      provider: "command",
      command: ["sh", "-c", `printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0"; exec sleep 30`, log],
      max_concurrent_runs: 2,
    };
    // An agent run (hook) and the run of the cron job a cron_job route fires (fire), both given up.
    const config = clusterConfig(
      redis.url,
      `g${randomUUID()}`,
      { hook: { secret: SECRET }, fire: { secret: SECRET, cron_job: "nightly" } },
      agent,
    );
    const files = {
      "cron/jobs.json": oneJobStore({
        name: "nightly",
        prompt: "job nightly",
        next_run: "2099-01-01T00:00:00.000Z",
      }),
    };
    // Given up at its first loss (svc's own limit is the third), with a short lock looked at often. Not too
    // short: a lock that lapses while its instance still runs (a loaded machine's event loop held up past
    // it) is a loss too, and the job is then given up before the instance's stop.
    const stall = { lockDurationMs: 1500, stalledIntervalMs: 100, maxStalledCount: 0 };
    const lost = await startNode(config, { stall, drainTimeoutMs: 50, files });
    started.push(lost);
    const id = `lost-${randomUUID()}`;
    const fireId = `fire-${randomUUID()}`;
    expect((await deliver(lost, "hook", id, {})).status).toBe(202);
    expect((await deliver(lost, "fire", fireId, {})).status).toBe(202);
    // The agent's two runs: the hook's under its delivery id, the job's under its own (cron-j1-…).
    await vi.waitFor(() => expect([...appendedIds(log).values()]).toEqual([1, 1]), {
      timeout: 20_000,
      interval: 20,
    });
    // Two instances up: whichever takes a job from the queue gives it up; the other records nothing of it.
    const up = await Promise.all([startNode(config, { stall, files }), startNode(config, { stall, files })]);
    started.push(...up);
    await lost.stop();
    const REASON = "job stalled more than allowable limit";
    const givenUp = (node: ClusterNode) => node.logs().filter((line) => line.err === REASON);
    const givenUpIds = () => up.flatMap(givenUp).map((line) => line.delivery_id);
    await vi
      .waitFor(() => expect(givenUpIds().sort()).toEqual([fireId, id].sort()), {
        timeout: 20_000,
        interval: 20,
      })
      .catch((err: Error) => {
        // What each instance said of the two runs, for a failure to tell where they went.
        const said = [lost, ...up].map((node, at) =>
          node
            .logs()
            .filter((line) => line.delivery_id === id || line.delivery_id === fireId)
            .map((line) => `${at === 0 ? "lost" : `up${at}`}: ${line.msg}`),
        );
        throw new Error(`${err.message}\n${said.flat().join("\n")}`);
      });
    const [line] = up.flatMap(givenUp).filter((l) => l.delivery_id === id);
    expect(line?.level).toBe(50);
    expect(line?.msg).toContain(`svc webhook redeliver ${id} on the instance that answered its request`);
    const gaveUp = (deliveryId: string) =>
      up.find((node) => givenUp(node).some((l) => l.delivery_id === deliveryId)) as ClusterNode;
    const recorder = gaveUp(id);
    const other = up.find((node) => node !== recorder) as ClusterNode;
    const failedRuns = async (node: ClusterNode) =>
      sample(
        await (await fetch(node.url("/metrics"))).text(),
        'svc_run_duration_seconds_count{outcome="failed"}',
      );
    for (const node of up) expect(await failedRuns(node)).toBe(givenUp(node).length);
    // The run journal, the delivery history and the job's last_run are written at the end of the turn.
    await vi.waitFor(
      () =>
        expect(journalLines(recorder.home.dir)).toEqual([
          expect.objectContaining({ delivery_id: id, route: "hook", error: expect.stringContaining(REASON) }),
        ]),
      { timeout: 5000, interval: 20 },
    );
    const lastRun = (node: ClusterNode) =>
      (
        JSON.parse(readFileSync(join(node.home.dir, "cron", "jobs.json"), "utf8")) as {
          jobs: Record<string, { last_run?: unknown }>;
        }
      ).jobs.j1?.last_run;
    const fireRecorder = gaveUp(fireId);
    await vi.waitFor(
      () =>
        expect(lastRun(fireRecorder)).toEqual({
          at: expect.any(String),
          status: "error",
          trigger: `webhook:fire:${fireId}`,
          error: expect.stringContaining(REASON),
        }),
      { timeout: 5000, interval: 20 },
    );
    expect(lastRun(up.find((node) => node !== fireRecorder) as ClusterNode)).toBeUndefined();
    const rows = async (node: ClusterNode) => {
      const res = await svc(node.home, ["webhook", "deliveries", "--json"]);
      expect(res.code).toBe(0);
      return JSON.parse(res.stdout) as Array<{ id: string; run: { outcome: string; error?: string } | null }>;
    };
    for (const node of up)
      expect((await rows(node)).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        givenUp(node)
          .map((l) => String(l.delivery_id))
          .sort()
          .map((given) =>
            expect.objectContaining({
              id: given,
              run: expect.objectContaining({ outcome: "failed", error: expect.stringContaining(REASON) }),
            }),
          ),
      );
    expect(journalLines(other.home.dir)).toEqual([]);
  });

  it("refuses to start when state.redis_url names a database the server does not have (its keys would go to database 0)", async () => {
    const config = clusterConfig(
      redis.url.replace(/\/\d+$/, "/99"),
      "x",
      { hook: { secret: SECRET } },
      sharedAppendAgent(join(dir, "never.log")),
    );
    await expect(startNode(config)).rejects.toThrow(
      /config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/99 has no database 99 \(.*out of range.*\) — end state\.redis_url with a database this server has/,
    );
  });

  it("refuses to start when nothing answers at state.redis_url, naming the file, the key and the fix", async () => {
    const gone = await startTestRedis();
    await gone.cleanup();
    const config = clusterConfig(
      gone.url,
      "x",
      { hook: { secret: SECRET } },
      sharedAppendAgent(join(dir, "never.log")),
    );
    await expect(startNode(config)).rejects.toThrow(
      /config\.yaml: state\.redis_url: cannot reach redis:\/\/127\.0\.0\.1:\d+\/0 \(.*\) — start Redis at .*, or fix state\.redis_url/,
    );
  });
});
