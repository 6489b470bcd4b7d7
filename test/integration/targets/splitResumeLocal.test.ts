import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../../src/io/stores/deliveryHistory.js";
import type { FakeApi, FakeReply } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { appendedRuns } from "../../helpers/appendAgent.js";
import {
  fakeClock,
  inHome,
  startGatewayInHome,
  startTestGateway,
  stopPastDrain,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { sample } from "../../helpers/metrics.js";
import { answerSplitParts, SPLIT_TEXT, type SplitPartsFake } from "../../helpers/splitMessage.js";

/**
 * docs/delivery-targets.md ("Retries", "At least once") and docs/durability.md, with state.backend: local: a
 * reply split into 3 Telegram messages whose delivery a stop cuts short after its 1st part was delivered is
 * saved with the run, with where the delivery stood. The next start delivers it from the 2nd part without
 * running the agent again: the 1st part goes out once. The platform is a Telegram fake on loopback; the
 * first gateway's retries and drain wait on the test's clock.
 */
const CHAT = "-4401";
const RETRY_AFTER_S = 20;

/** The agent notes each run's delivery id in `$SVC_HOME/runs.log` and answers with the prompt. */
const NOTING_ECHO_AGENT = {
  provider: "command",
  command: ["sh", "-c", 'printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"; cat', inHome("")],
  max_concurrent_runs: 1,
};

function splitConfig(telegramUrl: string): Record<string, unknown> {
  return webhookConfig(
    {
      r1: {
        secret: "INSECURE_NO_AUTH",
        prompt: "{text}",
        deliver: "telegram",
        deliver_extra: { chat_id: CHAT },
      },
    },
    { rate_limit: 1000 },
    {
      agent: NOTING_ECHO_AGENT,
      platforms: { telegram: { enabled: true, token: "1:split", base_url: telegramUrl } },
    },
  );
}

let tg: FakeApi;
let gw: TestGateway | undefined;

beforeEach(async () => {
  tg = await startFakeTelegram();
});

afterEach(async () => {
  gw?.home.cleanup();
  gw = undefined;
  await tg.close();
});

/**
 * Starts the gateway (retries and its drain of 1 s on a clock the test moves), posts the split reply as
 * delivery `id` of route r1, waits until `reached` holds, then stops it past its drain.
 */
async function sendAndStop(id: string, reached: (gw: TestGateway) => boolean): Promise<TestGateway> {
  const started = await startTestGateway({
    config: splitConfig(tg.url),
    fakeSleeps: true,
    drainTimeoutMs: 1000,
  });
  gw = started;
  const res = await postJson(started.url("/webhooks/r1"), JSON.stringify({ text: SPLIT_TEXT }), {
    "X-Request-Id": id,
  });
  expect(res.status).toBe(202);
  await vi.waitFor(() => expect(reached(started)).toBe(true), {
    timeout: 10_000,
    interval: 10,
  });
  await stopPastDrain(started);
  return started;
}

/**
 * Starts the gateway again in `first`'s home, its wall clock a minute on (the retry that waited is due), and
 * waits until the reply is delivered; then stops it.
 */
async function restartUntilDelivered(first: TestGateway): Promise<void> {
  const again = await startGatewayInHome(first.home, 300, () => Date.now() + 60_000);
  try {
    await vi.waitFor(
      () =>
        expect(first.logs().some((l) => l.msg === "[delivery] telegram: delivered for route r1")).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
  } finally {
    await again.stop();
  }
}

/**
 * Starts the gateway again in `first`'s home, its waits on a clock the test moves (the kept retry is still
 * most of its 20 s away), runs `meanwhile` once the kept delivery waits for its retry, then moves that clock
 * until the split reply's last two parts and a short reply (part 0) are sent; then stops it.
 */
async function restartPastKeptRetry(
  first: TestGateway,
  parts: SplitPartsFake,
  meanwhile: (url: (path: string) => string) => Promise<void> = async () => {},
): Promise<void> {
  const sleeps = fakeClock();
  const again = await startGatewayInHome(first.home, 300, undefined, undefined, sleeps);
  const url = (path: string) => `http://127.0.0.1:${again.port}${path}`;
  try {
    await vi.waitFor(
      () =>
        expect(
          first.logs().some((l) => l.msg.includes("route r1: handed on waiting to retry — retry 1/3 in")),
        ).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    await meanwhile(url);
    // The short reply waits its turn behind the resumed one, out of its run slot as that one is (2 runs
    // outside their slots); before the fix it went out at once, between parts 1 and 2.
    await vi.waitFor(
      async () => {
        const outside = sample(await (await fetch(url("/metrics"))).text(), "svc_deliveries_retrying");
        expect(outside === 2 || parts.sent().includes(0)).toBe(true);
      },
      { timeout: 10_000, interval: 20 },
    );
    await vi.waitFor(
      () => {
        sleeps.advance(RETRY_AFTER_S * 1000);
        expect(parts.sent()).toHaveLength(5);
      },
      { timeout: 10_000, interval: 20 },
    );
  } finally {
    await again.stop();
  }
}

/** The history's one row: the request accepted, its run ok, its delivery to telegram ok. */
function expectOneRowDelivered(home: string, id: string): void {
  expect(summarizeHistory(readHistory(historyDir(home)))).toEqual([
    expect.objectContaining({
      request: expect.objectContaining({ id, route: "r1", outcome: "accepted" }),
      run: expect.objectContaining({ outcome: "ok" }),
      delivery: expect.objectContaining({ platform: "telegram", outcome: "ok" }),
    }),
  ]);
}

describe("state.backend: local — a split reply whose delivery a stop cut short after its 1st part", {
  timeout: 30_000,
}, () => {
  it("stopped while its 2nd part waits to retry: the next start sends parts 2 and 3 only, without the agent", async () => {
    const parts: SplitPartsFake = answerSplitParts(tg, CHAT, RETRY_AFTER_S);
    parts.refuseSecond(1);
    const first = await sendAndStop("split-1", (started) =>
      started.logs().some((l) => l.msg.endsWith(`retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)),
    );
    expect(parts.sent()).toEqual([1, 2]);
    expect(appendedRuns(first.home.dir)).toEqual(new Map([["split-1", 1]]));

    await restartUntilDelivered(first);
    const messages = first.logs().map((l) => l.msg);
    expect(messages).toContain(
      "[state] 1 agent run(s) left unfinished at the last shutdown queued again (from the journal)",
    );
    expect(messages).toContain(
      "[delivery] telegram: route r1: handed on — goes on now (part 2; part 1 was delivered)",
    );
    // The 2nd part refused once (429: not posted), then posted; the 1st and the 3rd posted once each.
    expect(parts.sent()).toEqual([1, 2, 2, 3]);
    expect(appendedRuns(first.home.dir)).toEqual(new Map([["split-1", 1]]));
    expectOneRowDelivered(first.home.dir, "split-1");
  });

  it("stopped while its 2nd part waits to retry: a short reply to the same chat after the restart, before the retry is due, goes out after parts 2 and 3", async () => {
    const parts = answerSplitParts(tg, CHAT, RETRY_AFTER_S);
    parts.refuseSecond(1);
    const first = await sendAndStop("split-3", (started) =>
      started.logs().some((l) => l.msg.endsWith(`retry 1/3 in ${RETRY_AFTER_S * 1000} ms`)),
    );
    expect(parts.sent()).toEqual([1, 2]);

    await restartPastKeptRetry(first, parts, async (url) => {
      const res = await postJson(url("/webhooks/r1"), JSON.stringify({ text: "hello" }), {
        "X-Request-Id": "short-1",
      });
      expect(res.status).toBe(202);
    });
    // The chat reads a, b, c, hello: the 2nd part refused once (429: not posted), then posted.
    expect(parts.sent()).toEqual([1, 2, 2, 3, 0]);
    expect(appendedRuns(first.home.dir)).toEqual(
      new Map([
        ["split-3", 1],
        ["short-1", 1],
      ]),
    );
  });

  it("stopped while its 2nd part waits to retry and a short reply to the same chat waits behind it: the next start posts the short one after parts 2 and 3", async () => {
    const parts = answerSplitParts(tg, CHAT, RETRY_AFTER_S);
    parts.refuseSecond(1);
    const started = await startTestGateway({
      config: splitConfig(tg.url),
      fakeSleeps: true,
      drainTimeoutMs: 1000,
    });
    gw = started;
    const post = (id: string, text: string) =>
      postJson(started.url("/webhooks/r1"), JSON.stringify({ text }), { "X-Request-Id": id });
    expect((await post("split-4", SPLIT_TEXT)).status).toBe(202);
    await vi.waitFor(
      () =>
        expect(started.logs().some((l) => l.msg.endsWith(`retry 1/3 in ${RETRY_AFTER_S * 1000} ms`))).toBe(
          true,
        ),
      { timeout: 10_000, interval: 10 },
    );
    expect((await post("short-2", "hello")).status).toBe(202);
    // Both runs outside their slots: the short reply waits its turn behind the retrying one.
    await vi.waitFor(
      async () =>
        expect(sample(await (await fetch(started.url("/metrics"))).text(), "svc_deliveries_retrying")).toBe(
          2,
        ),
      { timeout: 10_000, interval: 20 },
    );
    await stopPastDrain(started);
    expect(parts.sent()).toEqual([1, 2]);

    await restartPastKeptRetry(started, parts);
    expect(parts.sent()).toEqual([1, 2, 2, 3, 0]);
  });

  it("stopped while its 2nd part's request is under way (the drain cut it): the next start sends from that part", async () => {
    // The 2nd part's first request is never answered: the stop's drain cuts it off.
    let release: (() => void) | undefined;
    let held = false;
    const parts = answerSplitParts(tg, CHAT, RETRY_AFTER_S, (text) => {
      if (held || !text.startsWith("b")) return undefined;
      held = true;
      return new Promise<FakeReply>((resolve) => {
        release = () => resolve({ status: 500, json: { ok: false, error_code: 500, description: "gone" } });
      });
    });
    try {
      const first = await sendAndStop("split-2", () => parts.sent().length === 2);
      expect(parts.sent()).toEqual([1, 2]);
      expect(first.logs().map((l) => l.msg)).toContain(
        "[delivery] telegram: route r1: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
      );

      await restartUntilDelivered(first);
      // Only the part whose answer the stop cut off is sent again.
      expect(parts.sent()).toEqual([1, 2, 2, 3]);
      expect(appendedRuns(first.home.dir)).toEqual(new Map([["split-2", 1]]));
      expectOneRowDelivered(first.home.dir, "split-2");
    } finally {
      release?.();
    }
  });
});
