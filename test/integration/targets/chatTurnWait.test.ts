import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sleepOn } from "../../../src/clock.js";
import { configSchema } from "../../../src/config/schema.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryTarget } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { directNoteConfig, type FakeClock, fakeClock, startTestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message } from "./support.js";

/**
 * docs/delivery-targets.md, "Long messages": deliveries to one chat go one after another, and a delivery
 * waits at most 10 s for the earlier ones, then goes ahead. The wait runs on the gateway's clock (here a
 * fake one the test moves); a Telegram fake on loopback holds its answer to the message "held" until released.
 */
let tg: FakeApi;
let clock: FakeClock;
/** Each message as it reached the platform: when (on the test's clock), and whether "held" was answered by then. */
let arrivals: Array<{ text: string; at: number; heldAnswered: boolean }>;
let heldAnswered = false;
let releaseHeld: () => void = () => {};
let held: Promise<void>;

beforeAll(async () => {
  tg = await startFakeApi(async (r) => {
    if (r.path.endsWith("/getMe")) return { json: { ok: true, result: { username: "bot" } } };
    const { text } = r.json as { text: string };
    arrivals.push({ text, at: clock.elapsed(), heldAnswered });
    if (text === "held") {
      await held;
      heldAnswered = true;
    }
    return { json: { ok: true, result: { message_id: arrivals.length } } };
  });
});
afterAll(() => tg.close());
beforeEach(() => {
  clock = fakeClock(0);
  arrivals = [];
  heldAnswered = false;
  held = new Promise<void>((resolve) => {
    releaseHeld = resolve;
  });
});

const arrived = (text: string) => arrivals.find((a) => a.text === text);
const waitArrived = (text: string) =>
  vi.waitFor(() => expect(arrived(text)).toBeDefined(), { timeout: 5000, interval: 5 });

function telegram(): DeliveryTarget {
  const config = configSchema.parse({
    platforms: { telegram: { enabled: true, token: "1:turn", base_url: tg.url } },
  });
  const target = createTargets(config, { logger: captureLogger().logger, sleep: sleepOn(clock) }).get(
    "telegram",
  );
  if (target === undefined) throw new Error("telegram not built");
  return target;
}

const LATER_ID = { "x-github-delivery": "later-1" };

/**
 * A gateway on the fake clock with a direct route to `chat`: its first delivery ("held") is under way at the
 * fake API, and a second ("later") waits its turn on the clock.
 */
async function laterWaitingBehindHeld(chat: string, laterHeaders: Record<string, string> = {}) {
  const gw = await startTestGateway({
    clock,
    fakeSleeps: true,
    config: directNoteConfig("telegram", { chat_id: chat }, { token: "1:turn", base_url: tg.url }),
  });
  try {
    const first = postJson(gw.url("/webhooks/note"), { text: "held" });
    await waitArrived("held");
    const later = postJson(gw.url("/webhooks/note"), { text: "later" }, laterHeaders);
    await vi.waitFor(() => expect(clock.pendingTimers()).toBeGreaterThan(0), { timeout: 5000, interval: 5 });
    return { gw, first, later };
  } catch (err) {
    releaseHeld();
    await gw.stop();
    throw err;
  }
}

describe("a delivery's wait for the earlier ones to its chat", () => {
  it("lasts 10 s on the gateway's clock; the next one still waits for the one that is stalled", async () => {
    const target = telegram();
    const send = (text: string, chat: string) => target.send(message(text, { chat_id: chat }));
    const first = send("held", "-1");
    await waitArrived("held");
    const later = send("later", "-1");
    // A round trip to another chat (never held up) gives a message sent at once the time to arrive.
    await send("other chat", "-2");
    clock.advance(9_999);
    await send("other chat again", "-2");
    expect(arrived("later")).toBeUndefined();
    clock.advance(1);
    await later;
    expect(arrived("later")).toEqual({ text: "later", at: 10_000, heldAnswered: false });
    // "later" went ahead and is done; "held" is still under way, and the next message waits for it.
    const next = send("next", "-1");
    await send("other chat, third", "-2");
    expect(arrived("next")).toBeUndefined();
    releaseHeld();
    await Promise.all([first, next]);
    expect(arrived("next")).toMatchObject({ at: 10_000, heldAnswered: true });
  });

  it("ends at once when the gateway stops, and the delivery sends nothing", async () => {
    const target = telegram();
    const first = target.send(message("held", { chat_id: "-3" }));
    await waitArrived("held");
    const stop = new AbortController();
    const waiting = target.send(message("stopped", { chat_id: "-3" }), stop.signal);
    stop.abort(new Error("the gateway stops"));
    await expect(waiting).rejects.toThrow("the gateway stops");
    releaseHeld();
    await first;
    await target.send(message("after", { chat_id: "-3" }));
    expect(arrivals.map((a) => a.text)).toEqual(["held", "after"]);
  });

  it("runs on the clock the gateway is given", async () => {
    const { gw, first, later } = await laterWaitingBehindHeld("-4");
    try {
      clock.advance(10_000);
      expect((await later).status).toBe(200);
      expect(arrived("later")).toMatchObject({ at: 10_000, heldAnswered: false });
      releaseHeld();
      expect((await first).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });

  it("of a direct delivery ends when the gateway stops: it sends nothing, its sender is answered 503, and the one under way 200", async () => {
    const { gw, first, later } = await laterWaitingBehindHeld("-5", LATER_ID);
    try {
      // Its duplicate waits for its outcome: the gateway's debug line says it does.
      const duplicate = postJson(gw.url("/webhooks/note"), { text: "later" }, LATER_ID);
      await vi.waitFor(
        () =>
          expect(
            gw.logs().find((l) => l.msg.includes("waits for it") && l.delivery_id === "later-1"),
          ).toBeDefined(),
        { timeout: 5000, interval: 5 },
      );
      const stopping = gw.gateway.stop();
      const cut = await later;
      expect(cut.status).toBe(503);
      expect(cut.body).toEqual({ error: "Shutting down" });
      expect(cut.headers.get("retry-after")).toBe("30");
      // The duplicate is told the same: the delivery was not made, and its id is forgotten.
      const told = await duplicate;
      expect({ status: told.status, body: told.body, retryAfter: told.headers.get("retry-after") }).toEqual({
        status: 503,
        body: { error: "Shutting down" },
        retryAfter: "30",
      });
      expect(clock.elapsed()).toBe(0);
      // The request under way is answered before the stop ends.
      releaseHeld();
      expect((await first).status).toBe(200);
      await stopping;
      expect(arrivals.map((a) => a.text)).toEqual(["held"]);
    } finally {
      releaseHeld();
      await gw.stop();
    }
  });
});
