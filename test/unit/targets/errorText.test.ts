import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpCall, platformErrorText, refused } from "../../../src/io/targets/httpJson.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";

const TOKEN = "123456789:AAHsecretSECRETsecretSECRETsecret0123";

/** Text that quotes the token so that it straddles `at`. */
const echoAt = (at: number) => `Cannot POST /${"x".repeat(at - 17)}/bot${TOKEN}/sendMessage`;

describe("platformErrorText", () => {
  it("cuts the credentials out before it cuts the text: no beginning of an echoed token is left", () => {
    for (const text of [echoAt(290), echoAt(260)]) {
      const detail = platformErrorText(undefined, text, [TOKEN]);
      expect(detail.length).toBeLessThanOrEqual(300);
      expect(detail).not.toContain("AAHsecret");
      expect(detail).not.toContain("123456789:");
    }
    const body = { ok: false, description: `Not Found: ${echoAt(280)}` };
    expect(platformErrorText(body, "", [TOKEN])).not.toContain("AAHsecret");
  });

  it("names an HTML page (a CDN's or proxy's 502) by its title and size, on one line", () => {
    const page =
      "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n";
    expect(platformErrorText(undefined, page)).toBe(
      `an HTML page "502 Bad Gateway" (${page.length} characters, not shown)`,
    );
  });

  it("puts a multi-line answer on one line", () => {
    expect(platformErrorText(undefined, "upstream\nconnect error\r\n")).toBe("upstream connect error");
  });
});

describe("refused: a refusal inside a 2xx answer (ok: false, errcode != 0)", () => {
  it("quotes the platform's text as a non-2xx answer's: on one line, cut at 300, no beginning of a token", () => {
    const detail = `request refused\r\nsee logs\n${echoAt(280)}`;
    const error = refused("feishu", "send message", detail, [TOKEN]);
    const quotedText = error.message.slice("feishu: send message: ".length);
    expect(quotedText.startsWith("request refused see logs Cannot POST /")).toBe(true);
    expect(quotedText).not.toMatch(/[\r\n]/);
    expect(quotedText.length).toBeLessThanOrEqual(300);
    expect(quotedText).not.toContain("AAHsecret");
  });
});

describe("httpCall: a 2xx that is not the platform's answer", () => {
  let api: FakeApi;
  beforeAll(async () => {
    api = await startFakeApi(() => ({ headers: { "content-type": "text/plain" }, text: echoAt(62) }));
  });
  afterAll(() => api.close());

  it("quotes its beginning without any part of an echoed token", async () => {
    const err = await httpCall({
      platform: "telegram",
      action: "sendMessage",
      method: "POST",
      url: `${api.url}/x`,
      json: {},
      timeoutMs: 5000,
      secrets: [TOKEN],
    }).catch((e: unknown) => e as Error);
    expect(String((err as Error).message)).toContain("not counted as sent");
    expect(String((err as Error).message)).not.toContain("AAH");
  });
});
