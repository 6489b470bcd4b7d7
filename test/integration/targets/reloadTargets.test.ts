import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
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
});
