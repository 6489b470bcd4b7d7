import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import {
  directNoteConfig,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { type JsonAnswer, postJson } from "../../helpers/http.js";

/**
 * docs/operations.md, "Stop timeout", and docs/delivery-targets.md: a direct delivery whose request is still
 * under way when the drain's deadline comes is cut short there, not held for the platform's
 * `timeout_seconds`. Its sender is answered 503 with Retry-After, as one whose wait the stop ended, and its
 * id is forgotten; the log says it was not delivered because the gateway stopped (a WARN, not a failure), and
 * so does its row in the delivery history. The drain runs on the test's clock; the platforms never answer.
 */
const DRAIN_MS = 5000;
/** Far past the drain (and past the test's time): only the drain's deadline can end these requests. */
const PLATFORM_TIMEOUT_S = 60;
/** Three Telegram messages' worth: parts of 4000, 4000 and 1000 characters. */
const SPLIT_TEXT = `${"a".repeat(4000)}\n\n${"b".repeat(4000)}\n\n${"c".repeat(1000)}`;

/** A route script that passes the payload on once the test creates `release-script` (`holding` while it waits). */
const GATE_SCRIPT = `payload="$(cat)"
: > "$(dirname "$0")/../holding"
while [ ! -e "$(dirname "$0")/../release-script" ]; do sleep 0.05; done
printf '%s' "$payload"
`;

let tg: FakeApi;
let smtp: FakeSmtp;
const mailed: string[][] = [];
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  tg = await startFakeApi(async (r) => {
    if (r.path.endsWith("/getMe")) return { json: { ok: true, result: { username: "bot" } } };
    const { text } = r.json as { text: string };
    // A split message's first part is answered; anything else never is.
    if (text.startsWith("a")) return { json: { ok: true, result: { message_id: 1 } } };
    await held;
    return { json: { ok: true, result: { message_id: 2 } } };
  });
  smtp = await startFakeSmtp({ received: mailed, hold: () => held });
});
afterAll(async () => {
  release();
  await Promise.all([tg.close(), smtp.close()]);
});

/** The messages the Telegram fake was asked to send. */
const sent = () => tg.requests.filter((r) => r.path.endsWith("/sendMessage")).length;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** Stops `gateway` while `post` is under way: nothing answers it until the drain's deadline. */
async function stopAtDeadline(gateway: TestGateway, post: Promise<JsonAnswer>): Promise<JsonAnswer> {
  let answered = false;
  void post.then(() => {
    answered = true;
  });
  let stopped = false;
  const stopping = gateway.gateway.stop().then(() => {
    stopped = true;
  });
  gateway.clock.advance(DRAIN_MS - 1);
  // A round trip to the fake platform: time for an answer or the stop's end to come, were either due.
  await fetch(`${tg.url}/bot1:x/getMe`);
  expect({ answered, stopped }).toEqual({ answered: false, stopped: false });
  gateway.clock.advance(1);
  const answer = await post;
  await stopping;
  return answer;
}

function expectStoppedAnswer(answer: JsonAnswer): void {
  expect({
    status: answer.status,
    body: answer.body,
    retryAfter: answer.headers.get("retry-after"),
  }).toEqual({ status: 503, body: { error: "Shutting down" }, retryAfter: "30" });
}

const UNDER_WAY =
  "not delivered — the gateway stopped while the delivery was under way, at the end of its drain (the platform may have taken it)";

/** The delivery history's records of `id`, read once the stop has closed it. */
function recordsOf(gateway: TestGateway, id: string) {
  return readHistory(historyDir(gateway.home.dir)).filter((r) => r.id === id);
}

describe("a direct delivery whose request is under way when the gateway stops", () => {
  it("is cut short at the drain's deadline: 503 to its sender, a WARN that it was not delivered, and its history row says why", async () => {
    gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: DRAIN_MS,
      config: directNoteConfig(
        "telegram",
        { chat_id: "-7" },
        { token: "1:direct", base_url: tg.url, timeout_seconds: PLATFORM_TIMEOUT_S },
      ),
    });
    const sends = sent();
    const post = postJson(gw.url("/webhooks/note"), { text: "never answered" }, { "X-Request-ID": "cut-1" });
    await vi.waitFor(() => expect(sent()).toBe(sends + 1), { timeout: 5000, interval: 5 });
    expectStoppedAnswer(await stopAtDeadline(gw, post));
    const lines = gw.logs().filter((l) => l.delivery_id === "cut-1" && l.msg.startsWith("[delivery]"));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [
        40,
        "[delivery] telegram: route note: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
      ],
    ]);
    expect(gw.logs().filter((l) => l.level >= 50)).toEqual([]);
    expect(recordsOf(gw, "cut-1")).toEqual([
      expect.objectContaining({ kind: "request", status: 503, outcome: "Shutting down", reason: UNDER_WAY }),
    ]);
  });

  it("split into parts, says which parts went out before it was cut", async () => {
    gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: DRAIN_MS,
      config: directNoteConfig(
        "telegram",
        { chat_id: "-8" },
        { token: "1:direct", base_url: tg.url, timeout_seconds: PLATFORM_TIMEOUT_S },
      ),
    });
    const sends = sent();
    const post = postJson(gw.url("/webhooks/note"), { text: SPLIT_TEXT }, { "X-Request-ID": "cut-2" });
    await vi.waitFor(() => expect(sent()).toBe(sends + 2), { timeout: 5000, interval: 5 });
    expectStoppedAnswer(await stopAtDeadline(gw, post));
    const parts = " (part 2 of 3; part 1 was delivered)";
    expect(gw.logs().find((l) => l.delivery_id === "cut-2" && l.level === 40)?.msg).toBe(
      `[delivery] telegram: route note: not delivered — the gateway stopped while the delivery was under way (not counted as failed)${parts}`,
    );
    expect(recordsOf(gw, "cut-2")).toEqual([
      expect.objectContaining({ status: 503, reason: `${UNDER_WAY}${parts}` }),
    ]);
  });

  it("reached only after the drain's deadline (a route script that ends past it) sends nothing: a plain 503, its history row and its WARN say it did not begin", async () => {
    gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: DRAIN_MS,
      files: { "scripts/gate.sh": GATE_SCRIPT },
      config: webhookConfig(
        {
          note: {
            secret: "INSECURE_NO_AUTH",
            prompt: "{text}",
            script: "gate.sh",
            deliver: "telegram",
            deliver_only: true,
            deliver_extra: { chat_id: "-9" },
          },
        },
        {},
        {
          platforms: {
            telegram: {
              enabled: true,
              token: "1:direct",
              base_url: tg.url,
              timeout_seconds: PLATFORM_TIMEOUT_S,
            },
          },
        },
      ),
    });
    const home = gw.home;
    const sends = sent();
    const post = postJson(gw.url("/webhooks/note"), { text: "late" }, { "X-Request-ID": "cut-4" });
    await vi.waitFor(() => expect(existsSync(join(home.dir, "holding"))).toBe(true), {
      timeout: 5000,
      interval: 5,
    });
    const stopping = gw.gateway.stop();
    gw.clock.advance(DRAIN_MS);
    // A round trip to the fake platform: time for the deadline's cut to come.
    await fetch(`${tg.url}/bot1:x/getMe`);
    home.write("release-script", "");
    expectStoppedAnswer(await post);
    await stopping;
    expect(sent()).toBe(sends);
    expect(
      gw
        .logs()
        .filter((l) => l.delivery_id === "cut-4" && l.level >= 40)
        .map((l) => [l.level, l.msg]),
    ).toEqual([
      [
        40,
        "[delivery] telegram: route note: not delivered — the gateway stopped before the delivery began, its drain over (nothing sent; not counted as failed)",
      ],
    ]);
    const [record] = recordsOf(gw, "cut-4");
    expect(record).toEqual(
      expect.objectContaining({ kind: "request", status: 503, outcome: "Shutting down" }),
    );
    expect(record).not.toHaveProperty("reason");
  });

  it("to email, whose server holds its answer to the mail, is cut short the same way", async () => {
    gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: DRAIN_MS,
      config: directNoteConfig(
        "email",
        {},
        { ...emailPlatform(smtp.port, "ops@example.org"), timeout_seconds: PLATFORM_TIMEOUT_S },
      ),
    });
    const post = postJson(gw.url("/webhooks/note"), { text: "mail" }, { "X-Request-ID": "cut-3" });
    await vi.waitFor(() => expect(mailed).toEqual([["ops@example.org"]]), { timeout: 5000, interval: 5 });
    expectStoppedAnswer(await stopAtDeadline(gw, post));
    expect(gw.logs().find((l) => l.delivery_id === "cut-3" && l.level >= 40)?.msg).toBe(
      "[delivery] email: route note: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
    );
    expect(gw.logs().filter((l) => l.level >= 50)).toEqual([]);
  });
});
