import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { httpCall } from "../../../src/io/targets/httpJson.js";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A target's base_url written as `http://user:password@host`: fetch cannot send a request to it and
 * refuses it with an error that quotes the whole URL, password included. It was accepted by the config
 * check, every delivery then failed, and the URL reached the log (a password under 4 characters was not
 * even redacted).
 */

let home: TempHome | undefined;
let fake: FakeApi | undefined;
afterEach(async () => {
  home?.cleanup();
  home = undefined;
  await fake?.close();
  fake = undefined;
});

function loadError(yaml: string): unknown {
  home = tempHome();
  home.write("config.yaml", yaml);
  try {
    loadConfig({ home: home.dir, env: {} });
  } catch (err) {
    return err;
  }
  throw new Error("the config loaded");
}

describe("base_url with user:password@", () => {
  it("is refused at config load, naming the file and key and what to do, without the password", () => {
    const error = loadError(
      "platforms:\n" +
        "  chat_4: {enabled: true, number: '+4412345678', base_url: 'http://admin:pw1@127.0.0.1:9'}\n" +
        "  matrix: {enabled: true, token: MXSECRET, base_url: 'http://bot:abc@127.0.0.1:9'}\n" +
        "  mattermost: {enabled: true, token: t, base_url: 'https://:xyz@mm.example.com'}\n" +
        "  qqbot: {enabled: true, app_id: '1', client_secret: s, token_url: 'https://app@bots.qq.com/x'}\n",
    );
    const message = (error as Error).message;
    const problem =
      "holds a user name or password (user:password@) — remove it: svc cannot send credentials written in a URL; put them in the platform's own keys (token, password, ...)";
    for (const key of [
      "platforms.chat_4.base_url",
      "platforms.matrix.base_url",
      "platforms.mattermost.base_url",
      "platforms.qqbot.token_url",
    ])
      expect(message).toContain(`config.yaml: ${key}: ${problem}`);
    for (const secret of ["pw1", "abc", "xyz", "admin:"]) expect(message).not.toContain(secret);
  });

  it("a query string or fragment is refused too: the API's paths would be appended inside it", () => {
    const error = loadError(
      "platforms:\n" +
        "  mattermost: {enabled: true, token: t, base_url: 'https://mm.example.com/?access_token=qs-secret-1'}\n" +
        "  telegram: {enabled: true, token: '1:x', base_url: 'https://tg.example.com/#top'}\n",
    );
    const message = (error as Error).message;
    const problem =
      "holds a query string or fragment (?… or #…) — remove it: svc adds the platform API's paths after the whole base_url, so every request would go to a wrong URL";
    for (const key of ["platforms.mattermost.base_url", "platforms.telegram.base_url"])
      expect(message).toContain(`config.yaml: ${key}: ${problem}`);
    expect(message).not.toContain("qs-secret-1");
  });

  it("a request to such a URL fails without sending and without quoting the URL (short passwords too)", async () => {
    fake = await startFakeApi();
    const url = fake.url.replace("http://", "http://admin:pw1@");
    const error = await httpCall({
      platform: "signal",
      action: "send",
      method: "POST",
      url: `${url}/v2/send`,
      json: { message: "hi" },
      timeoutMs: 5000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).message).toBe(
      "signal: send: base_url holds a user name or password (user:password@) — remove it; the platform's credentials go in its own keys",
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("base_url without http:// or https://", () => {
  it("a host and port without a scheme (an IPv6 literal in brackets too) or another scheme is refused at load, naming the URL to write", () => {
    const error = loadError(
      "platforms:\n" +
        "  chat_4: {enabled: true, number: '+4412345678', base_url: 'localhost:8080'}\n" +
        "  mattermost: {enabled: true, token: t, base_url: '[::1]:8065/'}\n" +
        "  matrix: {enabled: true, token: t, base_url: 'ftp://127.0.0.1:9'}\n",
    );
    const message = (error as Error).message;
    expect(message).toContain(
      "config.yaml: platforms.chat_4.base_url: no scheme — write http://localhost:8080 (or https://)",
    );
    expect(message).toContain(
      "config.yaml: platforms.mattermost.base_url: no scheme — write http://[::1]:8065/ (or https://)",
    );
    expect(message).toContain(
      "config.yaml: platforms.matrix.base_url: ftp is not supported — the platform's API is reached at an http:// or https:// URL",
    );
  });
});
