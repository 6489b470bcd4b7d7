import { afterEach, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Discord channel ids are 19-digit snowflakes, past 2^53: written unquoted in config.yaml (as users copy
 * them), they must reach the platform digit for digit, not rounded to a neighbouring (wrong) channel.
 */

let gw: TestGateway | undefined;
let discord: FakeApi | undefined;
afterEach(async () => {
  await gw?.stop();
  await discord?.close();
  gw = undefined;
  discord = undefined;
});

describe("channel ids written as unquoted YAML integers", () => {
  it("home_channel and deliver_extra.chat_id of 19 digits are delivered to exactly that channel", async () => {
    discord = await startFakeApi((request) =>
      request.path.endsWith("/users/@me") ? { json: { id: "1", username: "svc" } } : { json: { id: "9" } },
    );
    gw = await startTestGateway({
      config: `
platforms:
  discord:
    enabled: true
    token: t0ken
    base_url: ${discord.url}
    home_channel: 1234567890123456789
  webhook:
    enabled: true
    host: 127.0.0.1
    port: 8644
    routes:
      home:
        secret: INSECURE_NO_AUTH
        deliver: chat_2
        deliver_only: true
        prompt: "to home"
      extra:
        secret: INSECURE_NO_AUTH
        deliver: chat_2
        deliver_only: true
        prompt: "to extra"
        deliver_extra:
          chat_id: 987654321098765432
`,
    });
    expect(await postJson(gw.url("/webhooks/home"), {})).toMatchObject({ status: 200 });
    expect(await postJson(gw.url("/webhooks/extra"), {})).toMatchObject({ status: 200 });
    const posts = discord.requests.filter((r) => r.method === "POST").map((r) => r.path);
    expect(posts).toEqual([
      "/api/v10/channels/1234567890123456789/messages",
      "/api/v10/channels/987654321098765432/messages",
    ]);
  });
});
