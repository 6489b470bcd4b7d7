import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let fake: FakeApi;
let gw: TestGateway | undefined;
beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(() => fake.close());
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const OPEN = "INSECURE_NO_AUTH";
const alerts = (chat: string) => ({
  alerts: {
    secret: OPEN,
    prompt: "alert {n}",
    deliver: "telegram",
    deliver_only: true,
    deliver_extra: { chat_id: chat },
  },
});
const telegram = (token: string) => ({
  platforms: { telegram: { enabled: true, token, base_url: fake.url } },
});

describe("SIGHUP reload applies delivery platform settings (platforms.<name>)", () => {
  it("a platform enabled by the reload delivers at once; a changed token is the one used next", async () => {
    gw = await startTestGateway({ config: webhookConfig({ logged: { secret: OPEN } }) });
    const running = gw;
    running.home.write("config.yaml", stringify(webhookConfig(alerts("5"), {}, telegram("1:first"))));
    running.gateway.reload();
    const first = await postJson(running.url("/webhooks/alerts"), { n: 1 });
    expect(first).toMatchObject({ status: 200, body: { status: "delivered", target: "telegram" } });

    running.home.write("config.yaml", stringify(webhookConfig(alerts("5"), {}, telegram("2:second"))));
    running.gateway.reload();
    expect((await postJson(running.url("/webhooks/alerts"), { n: 2 })).status).toBe(200);
    const sends = fake.requests.filter((r) => r.path.endsWith("/sendMessage"));
    expect(sends.map((r) => r.path)).toEqual(["/bot1:first/sendMessage", "/bot2:second/sendMessage"]);
    expect(sentTexts(fake)).toEqual(["alert 1", "alert 2"]);
  });

  it("a credentials check of settings a later reload replaced does not report after it: the log's last word on the platform is the one in use", async () => {
    gw = await startTestGateway({ config: webhookConfig(alerts("5"), {}, telegram("1:good")) });
    const running = gw;
    const checks = () => fake.requests.filter((r) => r.path.endsWith("/getMe")).length;
    const lines = () => running.logs().filter((l) => l.msg.startsWith("[delivery] telegram:"));
    await vi.waitFor(() => expect(lines()).toHaveLength(1));
    const before = checks();
    // A mistyped token whose check is slow to fail (a platform slow to answer), then the fix.
    fake.enqueue({
      status: 401,
      json: { ok: false, error_code: 401, description: "Unauthorized" },
      delayMs: 300,
    });
    running.home.write("config.yaml", stringify(webhookConfig(alerts("5"), {}, telegram("1:typo"))));
    running.gateway.reload();
    await vi.waitFor(() => expect(checks()).toBe(before + 1));
    running.home.write("config.yaml", stringify(webhookConfig(alerts("5"), {}, telegram("1:good"))));
    running.gateway.reload();
    // Said at DEBUG only, as what it is: its settings are not the ones deliveries use.
    await vi.waitFor(() =>
      expect(lines().at(-1)).toMatchObject({
        level: 20,
        msg: expect.stringMatching(
          /^\[delivery\] telegram: credentials check of settings a reload has since replaced \(not in use\): failed — .*HTTP 401/,
        ),
      }),
    );
    const said = lines().filter((l) => l.level >= 30);
    expect(said.map((l) => l.msg)).toEqual([
      "[delivery] telegram: connected as @svc_test_bot",
      "[delivery] telegram: connected as @svc_test_bot",
    ]);
  });
});
