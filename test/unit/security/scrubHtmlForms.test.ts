import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { tokenEndpointError } from "../../../src/actors/oauth/tokenErrors.js";
import { scrub, secretForms } from "../../../src/io/credentials.js";
import { oauthFetches } from "../../../src/io/oauth/fetch.js";

/**
 * An authorization server's or a proxy's HTML error page quotes what it was sent with HTML's escapes: a held
 * refresh token with `/`, `+` or `=` in it (base64) was shown whole, written `&#x2f;` (OWASP ESAPI) or `&#43;`
 * (Go's html/template), since only its verbatim, URL-encoded, JSON-escaped and base64 forms were cut out.
 */
describe("scrub: a secret quoted back HTML-escaped", () => {
  const refresh = "9f8Kx2/Qw7LmZp+3RtYv0aBc/D1eF2g=";

  it("is cut out with /, + and = as hex or decimal entities, in either case", () => {
    for (const echoed of [
      "9f8Kx2&#x2f;Qw7LmZp&#x2b;3RtYv0aBc&#x2f;D1eF2g&#x3d;",
      "9f8Kx2&#x2F;Qw7LmZp&#x2B;3RtYv0aBc&#x2F;D1eF2g&#x3D;",
      "9f8Kx2&#47;Qw7LmZp&#43;3RtYv0aBc&#47;D1eF2g&#61;",
      // Go's html/template: + and = escaped, / as it is.
      "9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g&#61;",
    ])
      expect(scrub(`<p>refresh token ${echoed} revoked</p>`, [refresh])).toBe(
        "<p>refresh token [redacted] revoked</p>",
      );
  });

  it("is cut out with &, <, >, quotes and a backtick as the escapers write them", () => {
    const secret = `pw&<x>"q'y\`z`;
    for (const echoed of [
      "pw&amp;&lt;x&gt;&quot;q&#39;y`z",
      "pw&amp;&lt;x&gt;&quot;q&#x27;y`z",
      "pw&amp;&lt;x&gt;&quot;q&#039;y`z",
      "pw&amp;&lt;x&gt;&#34;q&#39;y&#96;z",
      "pw&#38;&#60;x&#62;&#34;q&#39;y&#96;z",
      "pw&#x26;&#x3c;x&#x3e;&#x22;q&#x27;y&#x60;z",
      "pw&#x26;&#x3C;x&#x3E;&#x22;q&#x27;y&#x60;z",
      "pw&amp;&lt;x&gt;&quot;q&#x27;y&#x60;z",
    ])
      expect(scrub(`<td>${echoed}</td>`, [secret])).toBe("<td>[redacted]</td>");
  });

  it("costs no form more for a secret without such a character", () => {
    const plain = "at-0123456789abcdefABCDEF";
    expect(secretForms(plain).filter((form) => form.includes("&#"))).toEqual([]);
    expect(secretForms(refresh)).toContain("9f8Kx2&#x2f;Qw7LmZp&#x2b;3RtYv0aBc&#x2f;D1eF2g&#x3d;");
  });

  it("a token endpoint's HTML refusal quoting the held refresh token escaped shows it [redacted]", async ({
    onTestFinished,
  }) => {
    const page = `<p>Refresh token ${refresh.replace(/\//g, "&#x2f;").replace(/\+/g, "&#x2b;").replace(/=/g, "&#x3d;")} revoked; sent 9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g&#61;</p>`;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(400, { "content-type": "text/html" }).end(page));
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    onTestFinished(() => new Promise<void>((closed) => server.close(() => closed())));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    const fetches = oauthFetches(undefined, undefined, undefined, () => [refresh]);
    await fetches.token(endpoint, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh }).toString(),
    });
    const { message } = tokenEndpointError(
      "s",
      "token refresh",
      fetches,
      endpoint,
      new Error("invalid_grant"),
    );
    expect(message).toBe(
      `s: token refresh failed — ${endpoint} answered 400: <p>Refresh token [redacted] revoked; sent [redacted]</p>`,
    );
  });
});
