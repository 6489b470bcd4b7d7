import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { directNoteConfig, fakeClock, startTestGateway } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { message, recordedRetries, registryFor } from "./support.js";

/**
 * WeCom's `gettoken` and Weixin's `stable_token` answer "system busy" (errcode -1) and their per-minute
 * limits (WeCom 45009, Weixin 45011) as their message APIs do: nothing was wrong with the app's secret, so
 * an agent-mode delivery whose token fetch drew one waits and tries again, as it does when the message
 * API answers them. A refused secret stays final, and names the keys to check.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeApi((r) =>
    r.path === "/cgi-bin/gettoken" || r.path === "/cgi-bin/stable_token"
      ? { json: { errcode: 0, access_token: "ACCESS", expires_in: 7200 } }
      : { json: { errcode: 0, errmsg: "ok" } },
  );
});
afterAll(() => fake.close());

const platforms = {
  wecom: { enabled: true, corp_id: "ww1", corp_secret: "WC-SECRET", agent_id: 1000002, base_url: "" },
  weixin: { enabled: true, app_id: "wx1", app_secret: "WX-SECRET", base_url: "" },
};
const target = (name: "wecom" | "weixin") =>
  registryFor({ [name]: { ...platforms[name], base_url: fake.url } }).get(name);
const sends = () => fake.requests.filter((r) => r.path.includes("/message/")).length;

describe("wecom / weixin: a busy token endpoint is retried", () => {
  for (const [name, busy, waitMs] of [
    ["wecom", { errcode: -1, errmsg: "system busy" }, 1000],
    ["wecom", { errcode: 45009, errmsg: "api freq out of limit" }, 60_000],
    ["weixin", { errcode: -1, errmsg: "system busy" }, 1000],
    [
      "weixin",
      { errcode: 45011, errmsg: "api minute-quota reach limit mustslower retry next minute" },
      60_000,
    ],
  ] as const) {
    it(`${name}: ${busy.errcode} from the token endpoint, then a token: sent after one wait`, async () => {
      fake.requests.length = 0;
      fake.enqueue({ json: busy });
      const { waits, runStep } = recordedRetries();
      await expect(
        target(name)?.send(message("hi", { chat_id: "u1" }), undefined, { runStep }),
      ).resolves.toMatchObject({
        parts: 1,
      });
      expect(waits).toEqual([waitMs]);
      expect(sends()).toBe(1);
    });
  }

  it("a refused secret (40001) is final and names the keys to check", async () => {
    fake.requests.length = 0;
    fake.enqueue({ json: { errcode: 40001, errmsg: "invalid credential" } });
    const { waits, runStep } = recordedRetries();
    const error = await target("wecom")
      ?.send(message("hi", { chat_id: "u1" }), undefined, { runStep })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      "wecom: access_token: 40001 invalid credential — the platform refused the credentials: check platforms.wecom.corp_id and platforms.wecom.corp_secret",
    );
    expect(waits).toEqual([]);
    expect(sends()).toBe(0);
  });
});

describe("wecom: the cached access token", () => {
  it("is fetched again once its lifetime has passed on the gateway's clock", async () => {
    fake.requests.length = 0;
    const clock = fakeClock(0);
    const gw = await startTestGateway({
      clock,
      config: directNoteConfig("wecom", { chat_id: "u1" }, { ...platforms.wecom, base_url: fake.url }),
    });
    try {
      const fetches = () => fake.requests.filter((r) => r.path.startsWith("/cgi-bin/gettoken")).length;
      const deliver = async () =>
        expect((await postJson(gw.url("/webhooks/note"), { text: "hi" })).status).toBe(200);
      // The start's credentials check fetches the token; the deliveries use it.
      await vi.waitFor(() => expect(fetches()).toBe(1), { timeout: 5000, interval: 5 });
      await deliver();
      await deliver();
      expect(fetches()).toBe(1);
      // expires_in 7200: refreshed 300 s before it expires, by the clock the gateway is given.
      clock.advance(6_899_000);
      await deliver();
      expect(fetches()).toBe(1);
      clock.advance(1000);
      await deliver();
      expect(fetches()).toBe(2);
    } finally {
      await gw.stop();
    }
  });
});
