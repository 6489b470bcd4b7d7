import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A subscription written by hand with a delivery target every delivery fails on (a misspelt `deliver`, a
 * platform that is not enabled) is served all the same, as the other records are; each load of the store
 * names the record and the problem at WARN, as a config.yaml route's is named at start, rather than
 * leaving it to the first event's failed delivery.
 */

const SECRET = "subscription-secret-for-target-probe";
const GOOD = { secret: SECRET, prompt: "hello {n}" };

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

function signed(body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex");
  return { "X-Webhook-Timestamp": timestamp, "X-Webhook-Signature-V2": signature };
}

const warned = (gateway: TestGateway, prefix: string) =>
  gateway.logs().filter((l) => l.level === 40 && l.msg.startsWith(prefix));

describe("a hand-written subscription's delivery target", () => {
  it("an unknown deliver is named at WARN at start, the record and the others still served", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          "typo-target": { ...GOOD, deliver: "telegarm" },
          fine: GOOD,
        }),
      },
    });
    const running = gw;
    const lines = warned(running, "[webhook] dynamic subscription typo-target: deliver: ");
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringContaining(
        '[webhook] dynamic subscription typo-target: deliver: unknown target "telegarm" — did you mean "telegram"? use one of log, telegram,',
      ),
    ]);
    expect(warned(running, "[webhook] dynamic subscription fine:")).toEqual([]);
    for (const name of ["typo-target", "fine"]) {
      const body = JSON.stringify({ n: name });
      expect((await postJson(running.url(`/webhooks/${name}`), body, signed(body))).status).toBe(202);
    }
  });

  it("a record written while the gateway runs, to a platform that is not enabled, is named at the next load", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: { "webhook_subscriptions.json": JSON.stringify({ fine: GOOD }) },
    });
    const running = gw;
    expect(warned(running, "[webhook] dynamic subscription ")).toEqual([]);
    running.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        fine: GOOD,
        chat: { ...GOOD, deliver: "slack", deliver_extra: { chat_id: "C0123" } },
      }),
      0o600,
    );
    const body = JSON.stringify({ n: "chat" });
    expect((await postJson(running.url("/webhooks/chat"), body, signed(body))).status).toBe(202);
    await vi.waitFor(
      () =>
        expect(warned(running, "[webhook] dynamic subscription chat: deliver: ").map((l) => l.msg)).toEqual([
          "[webhook] dynamic subscription chat: deliver: slack needs platforms.slack enabled — set platforms.slack.enabled: true with its credentials (see docs/delivery-targets.md), or deliver to log",
        ]),
      { timeout: 10_000 },
    );
  });
});
