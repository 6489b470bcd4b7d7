import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { FakeApi, RecordedRequest } from "../../fakes/httpFake.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { fakeClock } from "../../helpers/gateway.js";
import { startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { sample } from "../../helpers/metrics.js";
import { signalGroup } from "../../helpers/process.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendEchoAgent,
  type ClusterNode,
  clusterConfig,
  startNode,
  withPlatform,
} from "../../helpers/redisCluster.js";

/**
 * docs/delivery-targets.md, "Retries", with state.backend: redis: a run whose delivery waits to retry hands
 * its worker slot back, its reply kept with its job in Redis, so a target that is down does not hold up
 * another route's runs, and an instance that takes the job over delivers the reply without the agent.
 * The target is a Telegram fake on loopback answering 503 for one chat until it is "up"; the backoff
 * waits on the test's clock.
 */
const OPEN = "INSECURE_NO_AUTH";
const DOWN_CHAT = "-100";
/** A second chat of the down target (deliveries to one chat go one after another, whatever the slots). */
const DOWN_CHAT_2 = "-101";
const UP_CHAT = "-200";
let tg: FakeApi;
let redis: TestRedis;
let home: TempHome;
let healthy = false;
/** Messages the down chat got answered 200 for. */
let delivered = 0;
const nodes: ClusterNode[] = [];
const children: ChildProcess[] = [];

const chatOf = (r: RecordedRequest) => String((r.json as { chat_id?: unknown } | undefined)?.chat_id);
const sendsTo = (chat: string) =>
  tg.requests.filter((r) => r.path.endsWith("/sendMessage") && chatOf(r) === chat);

beforeAll(async () => {
  [tg, redis] = await Promise.all([startFakeTelegram(), startTestRedis()]);
  home = tempHome();
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    if ((chatOf(request) === DOWN_CHAT || chatOf(request) === DOWN_CHAT_2) && !healthy)
      return { status: 503, json: { ok: false, error_code: 503, description: "Service Unavailable" } };
    if (chatOf(request) === DOWN_CHAT) delivered += 1;
    return { json: { ok: true, result: { message_id: 1, chat: { id: Number(chatOf(request)) } } } };
  });
});
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const child of children.splice(0)) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
  tg.requests.length = 0;
  healthy = false;
  delivered = 0;
});
afterAll(async () => {
  await Promise.all([tg.close(), redis.cleanup()]);
  home.cleanup();
});

/** One run at a time; the agent notes each of its runs in `agentLog` and answers with the prompt. */
function config(prefix: string, agentLog: string): Record<string, unknown> {
  const route = (chat: string) => ({
    secret: OPEN,
    prompt: "event {n}",
    deliver: "telegram",
    deliver_extra: { chat_id: chat },
  });
  const base = clusterConfig(
    redis.url,
    prefix,
    {
      down: route(DOWN_CHAT),
      down2: route(DOWN_CHAT_2),
      up: route(UP_CHAT),
      fire: { secret: OPEN, cron_job: "triage" },
    },
    appendEchoAgent(agentLog),
  );
  return withPlatform(base, "telegram", { enabled: true, token: "1:retry-slot", base_url: tg.url });
}

async function post(node: ClusterNode, route: string, id: string): Promise<void> {
  const answer = await postJson(node.url(`/webhooks/${route}`), JSON.stringify({ n: id }), {
    "X-Request-Id": id,
  });
  expect(answer.status).toBe(202);
}

const retrying = async (node: Pick<ClusterNode, "url">) =>
  sample(await (await fetch(node.url("/metrics"))).text(), "svc_deliveries_retrying");
const gauges = async (node: ClusterNode) => {
  const text = await (await fetch(node.url("/metrics"))).text();
  return [
    sample(text, "svc_runs_waiting"),
    sample(text, "svc_runs_active"),
    sample(text, "svc_deliveries_retrying"),
  ];
};

/**
 * The lease of a job set aside while its delivery waits (the lock duration), shortened: only the killed
 * instance's matters, and nothing of it is renewed once it is killed.
 */
const STALL = { lockDurationMs: 1000, stalledIntervalMs: 500 };

/** An instance in a process (and process group) of its own, which the test can SIGKILL. */
async function startInstance(
  config: Record<string, unknown>,
): Promise<{ child: ChildProcess; url(path: string): string }> {
  const dir = join(home.dir, randomUUID());
  home.write(`${dir.slice(home.dir.length + 1)}/config.yaml`, stringify(config));
  const { child, port } = await startGatewayProcess({ dir, stall: STALL, children });
  return { child, url: (path) => `http://127.0.0.1:${port}${path}` };
}
const agentRuns = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : [];

describe("state.backend: redis — a delivery waiting to retry", { timeout: 30_000 }, () => {
  it("hands its worker slot back: another route's run goes on while the target is down", async () => {
    const clock = fakeClock(Date.now());
    const log = join(home.dir, `${randomUUID()}.log`);
    const node = await startNode(config(`r${randomUUID()}`, log), { sleeps: clock });
    nodes.push(node);
    await post(node, "down", "d-1");
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect(await retrying(node)).toBe(1), { timeout: 10_000, interval: 20 });

    // The only slot is free: the up route's run is delivered while the down one waits for its retry.
    await post(node, "up", "u-1");
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    expect(sendsTo(DOWN_CHAT)).toHaveLength(1);

    healthy = true;
    clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect(await retrying(node)).toBe(0), { timeout: 10_000, interval: 20 });
    expect(agentRuns(log)).toEqual(["d-1", "u-1"]);
  });

  it("of a cron job fired by a cron_job route hands its worker slot back too", async () => {
    const clock = fakeClock(Date.now());
    const log = join(home.dir, `${randomUUID()}.log`);
    const jobs = oneJobStore({
      name: "triage",
      prompt: "job triage",
      next_run: "2099-01-01T00:00:00.000Z",
      deliver: "telegram",
      deliver_extra: { chat_id: DOWN_CHAT_2 },
    });
    const node = await startNode(config(`r${randomUUID()}`, log), {
      sleeps: clock,
      files: { "cron/jobs.json": jobs },
    });
    nodes.push(node);
    await post(node, "fire", "f-1");
    await vi.waitFor(async () => expect(await retrying(node)).toBe(1), { timeout: 10_000, interval: 20 });
    await post(node, "up", "u-6");
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 10_000, interval: 20 });

    healthy = true;
    clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT_2)).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(sendsTo(DOWN_CHAT_2)[1]?.json).toMatchObject({ text: expect.stringMatching(/^job triage/) });
    expect(agentRuns(log)).toHaveLength(2);
  });

  it("past the cap keeps its slot, said once", async () => {
    const clock = fakeClock(Date.now());
    const log = join(home.dir, `${randomUUID()}.log`);
    const node = await startNode(config(`r${randomUUID()}`, log), { sleeps: clock, retryingDeliveryCap: 1 });
    nodes.push(node);
    await post(node, "down", "d-4");
    await vi.waitFor(async () => expect(await retrying(node)).toBe(1), { timeout: 10_000, interval: 20 });
    await post(node, "down2", "d-5");
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT_2)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await post(node, "up", "u-5");
    // d-5 keeps the only slot as its delivery waits: u-5 waits in Redis.
    await vi.waitFor(async () => expect(await gauges(node)).toEqual([1, 1, 1]), {
      timeout: 10_000,
      interval: 20,
    });
    const capLines = () => node.logs().filter((l) => l.msg.startsWith("[runs] 1 agent-run deliveries"));
    expect(capLines()).toHaveLength(1);
    expect(sendsTo(UP_CHAT)).toHaveLength(0);

    healthy = true;
    clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    expect([sendsTo(DOWN_CHAT).length, sendsTo(DOWN_CHAT_2).length]).toEqual([2, 2]);
    expect(capLines()).toHaveLength(1);
  });

  it("is delivered by another instance, without its agent, once its instance stops past the drain", async () => {
    const log = join(home.dir, `${randomUUID()}.log`);
    const cfg = config(`r${randomUUID()}`, log);
    // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
    const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
    nodes.push(a);
    await post(a, "down", "d-2");
    await vi.waitFor(async () => expect(await retrying(a)).toBe(1), { timeout: 10_000, interval: 20 });
    // The gateway stops first (its log is read), then the node's home goes.
    await a.gateway.stop();
    const said = a
      .logs()
      .map((l) => l.msg)
      .filter((m) => m.includes("when the drain ended"));
    await a.stop();
    expect(said).toEqual([
      "[state] 1 agent run(s) whose delivery waited to retry stopped when the drain ended; their replies stay in Redis and are delivered by another instance (this one after its restart), without running their agent again",
    ]);
    expect(sendsTo(DOWN_CHAT)).toHaveLength(1);

    healthy = true;
    const b = await startNode(cfg);
    nodes.push(b);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(sendsTo(DOWN_CHAT)[1]?.json).toMatchObject({ text: "event d-2" });
    expect(agentRuns(log)).toEqual(["d-2"]);
  });

  it("of a failed model run's notice, taken over, still fails the run once delivered", async () => {
    const model = await startFakeOpenAI();
    try {
      model.script({ status: 401, body: JSON.stringify({ error: { message: "key rejected" } }) });
      const cfg = {
        ...config(`r${randomUUID()}`, join(home.dir, `${randomUUID()}.log`)),
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
      };
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      await post(a, "down", "d-6");
      await vi.waitFor(async () => expect(await retrying(a)).toBe(1), { timeout: 10_000, interval: 20 });
      await a.stop();

      healthy = true;
      const b = await startNode(cfg);
      nodes.push(b);
      await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect(sendsTo(DOWN_CHAT)[1]?.json).toMatchObject({
        text: expect.stringContaining("Agent run failed"),
      });
      const failed = () => b.logs().find((l) => l.msg === "[webhook] down: agent run failed");
      await vi.waitFor(() => expect(failed()).toBeDefined(), { timeout: 10_000, interval: 20 });
      expect(JSON.stringify(failed())).toContain("key rejected");
    } finally {
      await model.close();
    }
  });

  it("is delivered once by another instance, without its agent, when its instance is killed", async () => {
    const log = join(home.dir, `${randomUUID()}.log`);
    const cfg = config(`r${randomUUID()}`, log);
    const a = await startInstance(cfg);
    const answer = await postJson(a.url("/webhooks/down"), JSON.stringify({ n: "d-3" }), {
      "X-Request-Id": "d-3",
    });
    expect(answer.status).toBe(202);
    // Its first attempt answered 503, its job set aside with the reply: killed in the 1 s before the retry.
    await vi.waitFor(async () => expect(await retrying(a)).toBe(1), { timeout: 10_000, interval: 20 });
    const gone = new Promise((resolve) => a.child.once("exit", resolve));
    signalGroup(a.child.pid as number, "SIGKILL");
    await gone;
    healthy = true;

    // The lease (1 s here, renewed by no one now) runs out and this instance takes the job.
    const b = await startNode(cfg, { stall: STALL });
    nodes.push(b);
    await vi.waitFor(() => expect(delivered).toBe(1), { timeout: 10_000, interval: 20 });
    expect(sendsTo(DOWN_CHAT).at(-1)?.json).toMatchObject({ text: "event d-3" });
    expect(agentRuns(log)).toEqual(["d-3"]);
    // Finished: not delivered again.
    await vi.waitFor(() =>
      expect(b.logs().some((l) => l.msg.includes("telegram: delivered for route down"))).toBe(true),
    );
    expect(delivered).toBe(1);
  });
});
