import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type FakeApi, type FakeReply, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * QQ's token endpoint (`getAppAccessToken`) answers a wrong AppID or AppSecret with its own codes
 * (100007 "appid invalid", 100016 "invalid appid or secret") and a call over its rate with 100001
 * "Too many requests": the refusal names the keys to check, and the rate limit is tried again.
 */
let api: FakeApi;
let tokenAnswer: FakeReply;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.path === "/app/getAppAccessToken" ? tokenAnswer : { json: { id: "m1" } },
  );
});
afterAll(() => api.close());

const qqbot = () =>
  registryFor({
    qqbot: {
      enabled: true,
      app_id: "102000000",
      client_secret: "QQ-SECRET-1",
      base_url: api.url,
      token_url: `${api.url}/app/getAppAccessToken`,
      home_channel: "group:G1",
    },
  });

describe("qqbot: the token endpoint's refusals", () => {
  it.each([
    [100016, "invalid appid or secret"],
    [100007, "appid invalid"],
  ])(
    "code %i names platforms.qqbot.app_id and client_secret, not retried, nothing sent",
    async (code, text) => {
      tokenAnswer = { json: { code, message: text } };
      api.requests.length = 0;
      const err = await sendError(qqbot(), "qqbot", message("hi"));
      expect(err).toBeInstanceOf(DeliveryError);
      expect((err as DeliveryError).message).toBe(
        `qqbot: getAppAccessToken: ${text} — the platform refused the credentials: check platforms.qqbot.app_id and platforms.qqbot.client_secret`,
      );
      expect((err as DeliveryError).transient).toBe(false);
      expect(api.requests.map((r) => r.path)).toEqual(["/app/getAppAccessToken"]);
    },
  );

  it("code 100001 (too many requests) is transient: an agent-mode delivery tries again", async () => {
    tokenAnswer = { json: { code: 100001, message: "Too many requests" } };
    const err = await sendError(qqbot(), "qqbot", message("hi"));
    expect((err as DeliveryError).message).toMatch(/^qqbot: getAppAccessToken: Too many requests/);
    expect((err as DeliveryError).transient).toBe(true);
  });
});

/**
 * Feishu's `tenant_access_token/internal` answers HTTP 200 with `code` 10014 ("app secret invalid", "app id not
 * exists") or 10003 ("invalid param": a malformed or empty app_id) when the app's keys are wrong.
 */
const feishu = () =>
  registryFor({
    feishu: {
      enabled: true,
      app_id: "cli_a1",
      app_secret: "FS-SECRET-1",
      base_url: api.url,
      home_channel: "oc_1",
    },
  });

/** Feishu's token endpoint answers `answer` (HTTP 200); its message endpoint takes any message. */
const feishuTokenAnswers = (answer: unknown) =>
  api.setHandler((r) =>
    r.path === "/open-apis/auth/v3/tenant_access_token/internal"
      ? { json: answer }
      : { json: { code: 0, data: { message_id: "m" } } },
  );

describe("feishu: the token endpoint's refusal of the app's keys", () => {
  it.each([
    [10014, "app secret invalid"],
    [10003, "invalid param"],
  ])(
    "code %i names platforms.feishu.app_id and app_secret, not retried, nothing sent",
    async (code, text) => {
      feishuTokenAnswers({ code, msg: text });
      api.requests.length = 0;
      const err = await sendError(feishu(), "feishu", message("hi"));
      expect((err as DeliveryError).message).toBe(
        `feishu: tenant_access_token: ${code} ${text} — the platform refused the credentials: check platforms.feishu.app_id and platforms.feishu.app_secret`,
      );
      expect((err as DeliveryError).transient).toBe(false);
      expect(api.requests.map((r) => r.path)).toEqual(["/open-apis/auth/v3/tenant_access_token/internal"]);
    },
  );
});

describe("feishu: a token answer without Feishu's code (a proxy's, an API gateway's)", () => {
  it.each([
    [{}, "feishu: tenant_access_token: {}"],
    [{ code: 99991663 }, "feishu: tenant_access_token: 99991663"],
  ])("%j is quoted as it came, not as undefined", async (answer, expected) => {
    feishuTokenAnswers(answer);
    const err = await sendError(feishu(), "feishu", message("hi"));
    expect((err as DeliveryError).message).toBe(expected);
  });
});
