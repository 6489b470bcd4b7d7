import { cpSync, rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Gateway } from "../../../src/gateway/index.js";
import type { FakeApi, RecordedRequest } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import {
  fakeClock,
  startGatewayInHome,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { scrapedSample } from "../../helpers/metrics.js";
import { liveOnDisk } from "../state/killHelpers.js";

/**
 * docs/delivery-targets.md, "Retries": a run whose delivery waits to retry hands its run slot back, so a
 * target that is down does not hold up another route's runs. The target is a Telegram fake on loopback
 * that answers 503 for one chat until it is "up" again; the backoff waits on the test's clock.
 */
const OPEN = "INSECURE_NO_AUTH";
const DOWN_CHAT = "-100";
/** A second chat of the down target (deliveries to one chat go one after another, whatever the slots). */
const DOWN_CHAT_2 = "-101";
const UP_CHAT = "-200";
let tg: FakeApi;
/** Whether the down chat is answered again. */
let healthy = false;
beforeAll(async () => {
  tg = await startFakeTelegram();
});
afterAll(() => tg.close());

const chatOf = (r: RecordedRequest) => String((r.json as { chat_id?: unknown } | undefined)?.chat_id);
const sendsTo = (chat: string) =>
  tg.requests.filter((r) => r.path.endsWith("/sendMessage") && chatOf(r) === chat);

const gateways: TestGateway[] = [];
const homes: TempHome[] = [];
const others: Gateway[] = [];
afterEach(async () => {
  for (const gateway of others.splice(0)) await gateway.stop();
  for (const gw of gateways.splice(0)) await gw.stop();
  for (const home of homes.splice(0)) home.cleanup();
  tg.requests.length = 0;
});

beforeAll(() => {
  tg.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    if ((chatOf(request) === DOWN_CHAT || chatOf(request) === DOWN_CHAT_2) && !healthy)
      return { status: 503, json: { ok: false, error_code: 503, description: "Service Unavailable" } };
    return { json: { ok: true, result: { message_id: 1, chat: { id: Number(chatOf(request)) } } } };
  });
});

function config(): Record<string, unknown> {
  const route = (chat: string) => ({
    secret: OPEN,
    prompt: "event {n}",
    deliver: "telegram",
    deliver_extra: { chat_id: chat },
  });
  return webhookConfig(
    {
      down: route(DOWN_CHAT),
      down2: route(DOWN_CHAT_2),
      up: route(UP_CHAT),
      fire: { secret: OPEN, cron_job: "triage" },
    },
    { rate_limit: 1000 },
    {
      agent: { provider: "echo", max_concurrent_runs: 1 },
      platforms: { telegram: { enabled: true, token: "1:retry-slot", base_url: tg.url } },
    },
  );
}

/** The job the `fire` route fires: it delivers to the down chat. */
const JOBS = oneJobStore({
  name: "triage",
  prompt: "job triage",
  next_run: "2099-01-01T00:00:00.000Z",
  deliver: "telegram",
  deliver_extra: { chat_id: DOWN_CHAT },
});

async function start(retryingDeliveryCap?: number): Promise<TestGateway> {
  healthy = false;
  const gw = await startTestGateway({
    config: config(),
    clock: fakeClock(Date.now()),
    fakeSleeps: true,
    files: { "cron/jobs.json": JOBS },
    ...(retryingDeliveryCap === undefined ? {} : { retryingDeliveryCap }),
  });
  gateways.push(gw);
  return gw;
}

const post = async (gw: TestGateway, route: string, id: string) => {
  const res = await postJson(gw.url(`/webhooks/${route}`), { n: id }, { "X-Request-ID": id });
  expect(res.status).toBe(202);
};

/** Waits until the log says the delivery of `id` waits for its retry `retry`. */
const retryWaiting = (gw: TestGateway, id: string, retry = 1) =>
  vi.waitFor(
    () =>
      expect(gw.logs().some((l) => l.delivery_id === id && l.msg.includes(`retry ${retry}/3 in`))).toBe(true),
    { timeout: 5000, interval: 10 },
  );
const gauges = async (gw: TestGateway) => ({
  waiting: await scrapedSample(gw.base, "svc_runs_waiting"),
  active: await scrapedSample(gw.base, "svc_runs_active"),
  retrying: await scrapedSample(gw.base, "svc_deliveries_retrying"),
});

describe("a delivery waiting to retry does not hold a run slot", () => {
  it("another route's run goes on in the one slot while the down target's delivery waits; it is delivered once up", async () => {
    const gw = await start();
    await post(gw, "down", "d-1");
    await retryWaiting(gw, "d-1");
    await post(gw, "up", "u-1");
    // The clock does not move: the backoff of d-1 has not ended, yet u-1 ran in the only slot.
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 3000, interval: 10 });
    expect(sendsTo(DOWN_CHAT)).toHaveLength(1);
    expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 1 });
    healthy = true;
    gw.clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 3000, interval: 10 });
    await vi.waitFor(async () => expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 0 }), {
      timeout: 3000,
      interval: 10,
    });
    expect(gw.logs().some((l) => l.delivery_id === "d-1" && l.msg.includes("delivered for route down"))).toBe(
      true,
    );
  });

  it("a delivery waiting its turn behind one that waits to retry, to the same chat, hands its slot back too and keeps its turn", async () => {
    const gw = await start();
    await post(gw, "down", "d-6");
    await retryWaiting(gw, "d-6");
    // d-7 goes to the same chat: its delivery waits for d-6's (up to 10 s), which waits to retry.
    await post(gw, "down", "d-7");
    await post(gw, "up", "u-6");
    // The clock does not move: neither d-6's backoff nor d-7's wait is over, yet u-6 ran in the only slot.
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 3000, interval: 10 });
    expect(sendsTo(DOWN_CHAT)).toHaveLength(1);
    expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 2 });
    // Past the 10 s a delivery waits for the earlier ones while the chat is still down: d-7, whose slot went
    // back, still waits for d-6 (now waiting for its second retry) rather than going ahead to the down chat.
    gw.clock.advance(10_500);
    await retryWaiting(gw, "d-6", 2);
    healthy = true;
    gw.clock.advance(2000);
    // d-6's retry is delivered, then d-7 in its turn, each once.
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(4), { timeout: 3000, interval: 10 });
    await vi.waitFor(async () => expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 0 }), {
      timeout: 3000,
      interval: 10,
    });
    const texts = sendsTo(DOWN_CHAT).map((r) => (r.json as { text?: string }).text);
    expect(texts).toEqual(["event d-6", "event d-6", "event d-6", "event d-7"]);
  });

  it("a job fired by a cron_job route hands its slot back too while its delivery waits to retry", async () => {
    const gw = await start();
    await post(gw, "fire", "f-1");
    await vi.waitFor(
      () =>
        expect(gw.logs().some((l) => l.route === "cron:triage" && l.msg.includes("retry 1/3 in"))).toBe(true),
      { timeout: 5000, interval: 10 },
    );
    await post(gw, "up", "u-4");
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 3000, interval: 10 });
    expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 1 });
    healthy = true;
    gw.clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 3000, interval: 10 });
    await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.endsWith("triage: run finished"))).toBe(true), {
      timeout: 3000,
      interval: 10,
    });
    expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 0 });
  });

  it("stays unfinished in the run journal while it waits, so a crash then delivers it again at the next start", async () => {
    const gw = await start();
    await post(gw, "down", "d-2");
    await retryWaiting(gw, "d-2");
    await post(gw, "up", "u-2");
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 3000, interval: 10 });
    // What a SIGKILL now leaves: the journal on disk (the lock's holder is gone with the process). Copied
    // once u-2's end is written (it is not synced at once: a crash before would run u-2 again).
    const copy = tempHome();
    homes.push(copy);
    await vi.waitFor(
      () => {
        rmSync(copy.dir, { recursive: true, force: true });
        cpSync(gw.home.dir, copy.dir, { recursive: true, filter: (src) => !src.endsWith("/LOCK") });
        const live = [...liveOnDisk(copy).runs.values()].map((r) => r.deliveryId);
        expect(live).toEqual(["d-2"]);
      },
      { timeout: 3000, interval: 20 },
    );
    healthy = true;
    const restarted = await startGatewayInHome(copy);
    others.push(restarted);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(2), { timeout: 5000, interval: 10 });
    // The run that finished before the crash is not run again.
    expect(sendsTo(UP_CHAT)).toHaveLength(1);
    // The first gateway's retry (it was never killed) ends too, so its stop need not wait out the drain.
    gw.clock.advance(1000);
    await vi.waitFor(() => expect(sendsTo(DOWN_CHAT)).toHaveLength(3), { timeout: 3000, interval: 10 });
  });

  it("past the cap a run whose delivery waits to retry keeps its slot, said once", async () => {
    const gw = await start(1);
    await post(gw, "down", "d-3");
    await retryWaiting(gw, "d-3");
    await post(gw, "down2", "d-4");
    await retryWaiting(gw, "d-4");
    await post(gw, "up", "u-3");
    // d-4 keeps the only slot (one delivery already waits outside a slot): u-3 waits for it.
    await vi.waitFor(async () => expect(await gauges(gw)).toEqual({ waiting: 1, active: 1, retrying: 1 }), {
      timeout: 3000,
      interval: 10,
    });
    expect(sendsTo(UP_CHAT)).toHaveLength(0);
    // d-4's second retry meets the cap again: still one line.
    gw.clock.advance(1000);
    await retryWaiting(gw, "d-4", 2);
    await retryWaiting(gw, "d-3", 2);
    const capLines = gw.logs().filter((l) => l.msg.includes("wait to retry outside their run slots"));
    expect(capLines).toHaveLength(1);
    expect(capLines[0]?.level).toBe(40);
    healthy = true;
    gw.clock.advance(2000);
    await vi.waitFor(() => expect(sendsTo(UP_CHAT)).toHaveLength(1), { timeout: 3000, interval: 10 });
    await vi.waitFor(async () => expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 0 }), {
      timeout: 3000,
      interval: 10,
    });
  });

  it("past the cap a delivery waiting behind a retrying one keeps its slot and still goes ahead after 10 s", async () => {
    const gw = await start(1);
    await post(gw, "down", "d-8");
    await retryWaiting(gw, "d-8");
    // d-9 waits behind d-8 to the same chat; the cap (1) leaves it its slot, so its wait stays bounded.
    await post(gw, "down", "d-9");
    await vi.waitFor(async () => expect(await gauges(gw)).toEqual({ waiting: 0, active: 1, retrying: 1 }), {
      timeout: 3000,
      interval: 10,
    });
    gw.clock.advance(10_500);
    await vi.waitFor(
      () => expect(sendsTo(DOWN_CHAT).map((r) => (r.json as { text?: string }).text)).toContain("event d-9"),
      { timeout: 3000, interval: 10 },
    );
    healthy = true;
    await vi.waitFor(
      async () => {
        gw.clock.advance(1000);
        expect(await gauges(gw)).toEqual({ waiting: 0, active: 0, retrying: 0 });
      },
      { timeout: 5000, interval: 20 },
    );
  });

  it("the stop's drain waits for a delivery retrying outside its slot", async () => {
    const gw = await start();
    await post(gw, "down", "d-5");
    await retryWaiting(gw, "d-5");
    let stopped = false;
    const stopping = gw.gateway.stop().then(() => {
      stopped = true;
    });
    healthy = true;
    await vi.waitFor(
      () => {
        if (sendsTo(DOWN_CHAT).length < 2) gw.clock.advance(100);
        expect(stopped).toBe(true);
      },
      { timeout: 5000, interval: 10 },
    );
    await stopping;
    expect(sendsTo(DOWN_CHAT)).toHaveLength(2);
    const messages = gw.logs().map((l) => l.msg);
    expect(messages.some((m) => m.includes("delivered for route down"))).toBe(true);
    expect(messages.some((m) => /not finished at shutdown/.test(m))).toBe(false);
    gateways.splice(0);
    gw.home.cleanup();
  });
});
