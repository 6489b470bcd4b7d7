import { afterEach, describe, expect, it, vi } from "vitest";
import { historyDir, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

const OPEN = "INSECURE_NO_AUTH";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** Dynamic subscriptions (spec 2.6) to a platform that is not enabled: `subscribe` only warns, so they exist. */
function subscriptions(records: Record<string, Record<string, unknown>>): string {
  const file: Record<string, unknown> = {};
  for (const [name, record] of Object.entries(records))
    file[name] = { secret: OPEN, enabled: true, ...record };
  return JSON.stringify(file);
}

// A static route to such a platform refuses startup (test/integration/webhook/platformWiring.test.ts);
// a subscription made while the platform is off is served, and its deliveries fail as spec 4.4/7 say.
describe("a subscription whose delivery platform is not enabled (spec 4.4, 7)", () => {
  it("a direct delivery to it answers 502 Delivery failed, the log names the platform and the fix", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: {
        "webhook_subscriptions.json": subscriptions({
          alerts: { deliver: "chat_2", deliver_only: true, prompt: "alert {id}" },
          // Written by hand: no command accepts a target that does not exist.
          typo: { deliver: "telegarm", deliver_only: true, prompt: "alert {id}" },
          // A chat's incoming-webhook URL pasted as the target: its path is the credential.
          hook: {
            deliver: "https://hooks.slack.com/services/T0/B0/HOOKSECRETXYZ",
            deliver_only: true,
            prompt: "alert {id}",
          },
        }),
      },
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 7 }, { "X-Request-ID": "ne-1" });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: "Delivery failed" });
    expect(gw.logs().map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/"chat_2" \(discord\) is not enabled — set platforms\.discord\.enabled: true/),
    );
    // Not "set platforms.telegarm.enabled", a platform that does not exist.
    expect((await postJson(gw.url("/webhooks/typo"), { id: 7 })).status).toBe(502);
    const typo = gw
      .logs()
      .map((l) => l.msg)
      .filter((m) => m.includes("telegarm"));
    expect(typo).toContainEqual(
      expect.stringContaining('"telegarm" is not a delivery target — set the route\'s deliver to one'),
    );
    expect(typo.join("\n")).not.toContain("platforms.telegarm");
    // The history says why without the hand-written text (which may be a chat's webhook URL, a
    // credential): the platform as the metrics name it, and the fix.
    const home = historyDir(gw.home.dir);
    await vi.waitFor(
      () =>
        expect(readHistory(home).filter((r) => r.kind === "delivery" && r.route === "typo")).toMatchObject([
          {
            platform: "(unknown)",
            outcome: "failed",
            error: expect.stringMatching(/deliver names no delivery target — set it to one/),
          },
        ]),
      { timeout: 10_000 },
    );
    expect(JSON.stringify(readHistory(home))).not.toContain("telegarm");
    // A URL is named by its scheme and host, in the message and the target field, at start and per delivery.
    expect((await postJson(gw.url("/webhooks/hook"), { id: 7 })).status).toBe(502);
    expect(gw.logs().map((l) => l.msg)).toContainEqual(
      expect.stringContaining(
        '"https://hooks.slack.com/…" is not a delivery target — set the route\'s deliver to one',
      ),
    );
    expect(JSON.stringify(gw.logs())).not.toContain("HOOKSECRETXYZ");
  });

  it("a failed direct delivery of a sender with no delivery-ID header is in the history under its generated id", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: {
        "webhook_subscriptions.json": subscriptions({
          alerts: { deliver: "chat_2", deliver_only: true, prompt: "alert {id}" },
        }),
      },
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 8 });
    expect(res.status).toBe(502);
    const failed = gw.logs().find((l) => l.level === 50 && typeof l.delivery_id === "string");
    const id = failed?.delivery_id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const home = historyDir(gw.home.dir);
    await vi.waitFor(
      () => {
        const history = readHistory(home);
        expect(history.filter((r) => r.kind === "request").map((r) => r.id)).toEqual([id]);
        expect(history.filter((r) => r.kind === "delivery")).toMatchObject([
          { id, route: "alerts", platform: "discord", outcome: "failed" },
        ]);
      },
      { timeout: 10_000 },
    );
    // Its payload is kept: a failed direct delivery is what one redelivers once the target is fixed.
    expect(readHistory(home).find((r) => r.kind === "request")).toMatchObject({ payload: '{"id":8}' });
    const again = await svc(gw.home, ["webhook", "redeliver", id, "--port", String(gw.gateway.port)]);
    expect(again.stdout).toContain("502 Bad Gateway");
    const listed = await svc(gw.home, ["webhook", "deliveries"]);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toMatch(/discord failed/);
  });

  it("an agent-mode subscription to it accepts the event (202) and logs the failed delivery", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}, {}, { agent: { provider: "echo" } }),
      files: {
        "webhook_subscriptions.json": subscriptions({ alerts: { deliver: "slack", prompt: "alert {id}" } }),
      },
    });
    const res = await postJson(gw.url("/webhooks/alerts"), { id: 7 }, { "X-Request-ID": "ne-2" });
    expect(res).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "ne-2" } });
    const running = gw;
    await vi.waitFor(
      () =>
        expect(
          running.logs().some((l) => l.delivery_id === "ne-2" && l.level === 50 && /slack/.test(l.msg)),
        ).toBe(true),
      { timeout: 10_000 },
    );
    // The run itself worked: the failure is the delivery's, in the log and in the history.
    const home = historyDir(running.home.dir);
    await vi.waitFor(
      () => {
        const history = readHistory(home);
        expect(history.filter((r) => r.kind === "run")).toMatchObject([{ id: "ne-2", outcome: "ok" }]);
        expect(history.filter((r) => r.kind === "delivery")).toMatchObject([
          { id: "ne-2", platform: "slack", outcome: "failed" },
        ]);
      },
      { timeout: 10_000 },
    );
    expect(running.logs().filter((l) => l.msg.includes("agent run failed"))).toEqual([]);
    // svc webhook list shows it served ("yes"), and says why each delivery fails.
    const listed = await svc(running.home, ["webhook", "list"]);
    expect(listed.stdout).toMatch(/^alerts\s.*\syes\s*$/m);
    expect(listed.stderr).toContain(
      "Note: alerts: deliver: slack needs platforms.slack enabled — set platforms.slack.enabled: true with its credentials",
    );
    // So does svc webhook test, whose 202 would otherwise read as a reply on its way to Slack.
    const tested = await svc(running.home, [
      "webhook",
      "test",
      "alerts",
      "--port",
      String(running.gateway.port),
    ]);
    expect(tested.stdout).toContain("202 Accepted");
    expect(tested.stderr).toContain(
      "Note: alerts: deliver: slack needs platforms.slack enabled — set platforms.slack.enabled: true with its credentials",
    );
  });
});
