import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { PendingRun } from "../../../src/io/stores/pendingRuns.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A recipient is "a template the event did not fill" when its rendering left a placeholder without a value,
 * not when its text has braces: a payload may fill a chat id, a thread or an address with text in braces (a
 * chat titled `{team}`, a display name `{ops}`), which is judged as the value it is. A placeholder the event
 * has no field for is refused as before, and so is one in a run saved by a version that did not record which
 * templates were left unfilled (its text alone tells).
 */
const OPEN = "INSECURE_NO_AUTH";
let telegram: FakeApi;
let smtp: FakeSmtp;
let gw: TestGateway;
const mailedTo: string[][] = [];

/** Saved at an earlier stop, before runs recorded their unfilled keys (`old`), and after (`new`). */
const savedRun = (deliveryId: string, chat: string, fields: Partial<PendingRun> = {}): PendingRun => ({
  profile: "default",
  routeName: "agent",
  event: undefined,
  deliveryId,
  prompt: "saved",
  extra: { chat_id: chat },
  receivedAt: Date.now(),
  ...fields,
});

beforeAll(async () => {
  telegram = await startFakeTelegram();
  smtp = await startFakeSmtp({ received: mailedTo });
  const smtpPort = smtp.port;
  gw = await startTestGateway({
    config: webhookConfig(
      {
        ci: {
          secret: OPEN,
          prompt: "Build {build.number}",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "{build.chat}", message_thread_id: "{build.topic}" },
        },
        mail: {
          secret: OPEN,
          prompt: "Page {n}",
          deliver: "email",
          deliver_only: true,
          deliver_extra: { to: "{user.email}" },
        },
        unset: {
          secret: OPEN,
          prompt: "Page {n}",
          deliver: "email",
          deliver_only: true,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax, set nowhere
          deliver_extra: { to: "${OPS_MAIL}@example.org" },
        },
        agent: {
          secret: OPEN,
          prompt: "Run {n}",
          deliver: "telegram",
          deliver_extra: { chat_id: "{build.chat}" },
        },
      },
      { rate_limit: 1000 },
      {
        agent: recorderAgent("agent reply"),
        platforms: {
          telegram: { enabled: true, token: "1:T", base_url: telegram.url, home_channel: "-100999" },
          email: emailPlatform(smtpPort, "home@example.org"),
        },
      },
    ),
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "webhook-pending-runs.json": JSON.stringify({
        version: 1,
        runs: [savedRun("saved-old", "{build.chat}"), savedRun("saved-new", "{saved}", { unfilled: [] })],
      }),
    },
  });
  // The runs saved at the earlier stop run at the start: their sends (and refusal) come before the tests
  // below count and compare the fake's last sends.
  await vi.waitFor(
    () => {
      expect(sends()).toContainEqual({ chat_id: "{saved}", text: "agent reply" });
      expect(logged(0, 'deliver_extra.chat_id of route "agent" did not resolve ("{build.chat}"')).toBe(true);
    },
    { timeout: 30_000 },
  );
});
afterAll(async () => {
  await gw.stop();
  await telegram.close();
  await smtp.close();
});

const sends = () =>
  telegram.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => r.json as Record<string, unknown>);
const logged = (from: number, text: string) =>
  gw
    .logs()
    .slice(from)
    .some((l) => l.msg.includes(text));

describe("a recipient the event filled with text in braces", () => {
  it("is delivered to: a chat id and a thread id, each as the event holds it", async () => {
    const res = await postJson(gw.url("/webhooks/ci"), {
      build: { number: 1, chat: "{team}", topic: "{7}" },
    });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(sends().at(-1)).toEqual({ chat_id: "{team}", text: "Build 1", message_thread_id: "{7}" });
  });

  it("an address with a display name in braces is mailed to", async () => {
    const res = await postJson(gw.url("/webhooks/mail"), {
      n: 1,
      user: { email: "{ops} <ops@example.org>" },
    });
    expect(res).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(mailedTo.at(-1)).toEqual(["ops@example.org"]);
  });

  it("one that is no address is refused as such, not as a template the event did not fill", async () => {
    const before = mailedTo.length;
    const seen = gw.logs().length;
    const res = await postJson(gw.url("/webhooks/mail"), { n: 2, user: { email: "{oncall}" } });
    expect(res.status).toBe(502);
    expect(mailedTo).toHaveLength(before);
    expect(logged(seen, 'the recipient "{oncall}" is no e-mail address — nothing sent')).toBe(true);
  });

  it("a run's reply (agent mode) is delivered to it", async () => {
    const res = await postJson(gw.url("/webhooks/agent"), { n: 1, build: { chat: "{agents}" } });
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(sends()).toContainEqual({ chat_id: "{agents}", text: "agent reply" }), {
      timeout: 10_000,
    });
  });
});

describe("a placeholder the event has no field for", () => {
  it("is still refused as a template the event did not fill, and no thread is named", async () => {
    const before = sends().length;
    const seen = gw.logs().length;
    const res = await postJson(gw.url("/webhooks/ci"), { build: { number: 2 } });
    expect(res.status).toBe(502);
    expect(sends()).toHaveLength(before);
    expect(
      logged(
        seen,
        'telegram: deliver_extra.chat_id of route "ci" did not resolve ("{build.chat}" is a template the event did not fill: it has no such field) — the message is not sent (never redirected to another chat)',
      ),
    ).toBe(true);
    const sent = await postJson(gw.url("/webhooks/ci"), { build: { number: 3, chat: "-100555" } });
    expect(sent.status).toBe(200);
    expect(sends().at(-1)).toEqual({ chat_id: -100555, text: "Build 3" });
  });

  it("is still refused for an e-mail recipient, saying so", async () => {
    const before = mailedTo.length;
    const seen = gw.logs().length;
    const res = await postJson(gw.url("/webhooks/mail"), { n: 3 });
    expect(res.status).toBe(502);
    expect(mailedTo).toHaveLength(before);
    expect(
      logged(
        seen,
        'the recipient "{user.email}" is no e-mail address (a template the event did not fill) — nothing sent',
      ),
    ).toBe(true);
  });
});

describe("a recipient's variable that nothing set", () => {
  it("names no recipient: refused as a placeholder left unfilled, never mailed to as written", async () => {
    const before = mailedTo.length;
    const seen = gw.logs().length;
    // The payload's own OPS_MAIL does not fill it.
    const res = await postJson(gw.url("/webhooks/unset"), { n: 4, OPS_MAIL: "someone" });
    expect(res.status).toBe(502);
    expect(mailedTo).toHaveLength(before);
    expect(logged(seen, "holds {OPS_MAIL}, a placeholder the event did not fill")).toBe(true);
  });
});

describe("runs saved at an earlier stop", () => {
  it("one saved without its unfilled keys is judged by its text: {build.chat} is refused, never sent", async () => {
    await vi.waitFor(
      () =>
        expect(
          logged(
            0,
            'telegram: deliver_extra.chat_id of route "agent" did not resolve ("{build.chat}" is a template the event did not fill: it has no such field)',
          ),
        ).toBe(true),
      { timeout: 10_000 },
    );
    expect(sends().filter((s) => s.chat_id === "{build.chat}")).toEqual([]);
  });

  it("one saved with them (none unfilled) is delivered to its chat in braces", async () => {
    await vi.waitFor(() => expect(sends()).toContainEqual({ chat_id: "{saved}", text: "agent reply" }), {
      timeout: 10_000,
    });
  });
});
