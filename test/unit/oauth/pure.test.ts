import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { tokenEndpointError } from "../../../src/actors/oauth/tokenErrors.js";
import { pinnedRedirectUris } from "../../../src/io/oauth/callbackServer.js";
import { clientMetadataUrlProblem, isUnreachable } from "../../../src/io/oauth/cimd.js";
import {
  cleartextUnderHttps,
  DEVICE_GRANT,
  fallbackIssuerMatches,
  issuerMatches,
  unsupportedReason,
} from "../../../src/io/oauth/discovery.js";
import { oauthFetches } from "../../../src/io/oauth/fetch.js";
import { redactedExcerpt } from "../../../src/io/oauth/redact.js";
import { oauthEntryOf } from "../../../src/io/oauth/settings.js";
import { bearerParams, parseChallenges } from "../../../src/io/oauth/wwwAuthenticate.js";
import { refusedTokenRequest } from "../../helpers/refusedRefresh.js";

describe("client metadata document URL rules (spec 5.8)", () => {
  it.each([
    ["https://app.example.com/oauth/client.json", undefined],
    ["http://app.example.com/client.json", "must use https"],
    ["https://app.example.com", "must have a path"],
    ["https://app.example.com/", "must have a path"],
    ["https://app.example.com/client.json#x", "must not contain a fragment"],
    ["https://user:pw@app.example.com/client.json", "must not contain userinfo"],
    ["https://app.example.com/a/../client.json", "must not contain . or .. segments"],
    ["https://app.example.com/./client.json", "must not contain . or .. segments"],
    ["https://app.example.com/%2e%2e/client.json", "must not contain . or .. segments"],
    // The URL parser (and so fetch) reads `\` as `/` and drops tabs, line breaks and the spaces around the
    // URL: these are the URLs above as fetched (docs\..\client.json is fetched as /client.json).
    ["https://app.example.com/docs\\..\\client.json", "must not contain . or .. segments"],
    ["https://app.example.com/docs/.\\client.json", "must not contain . or .. segments"],
    ["https://app.example.com/docs/.\t./client.json", "must not contain . or .. segments"],
    ["https://app.example.com/client.json/..\n", "must not contain . or .. segments"],
    ["https://app.example.com/client.json/.. ", "must not contain . or .. segments"],
    ["https://app.example.com\\oauth\\client.json", undefined],
    ["https://app.example.com\\", "must have a path"],
    ["https://app.example.com/client.json\t#x", "must not contain a fragment"],
    // The parser takes any number of slashes after `https:`: these are fetched as https://app.example.com/.
    ["https:app.example.com", "must have a path"],
    ["https:/app.example.com", "must have a path"],
    ["https:///app.example.com", "must have a path"],
    ["https:app.example.com/oauth/client.json", undefined],
    ["https:@app.example.com/client.json", "must not contain userinfo"],
    ["https:///@app.example.com/client.json", "must not contain userinfo"],
  ])("%s → %s", (url, problem) => {
    expect(clientMetadataUrlProblem(url)).toBe(problem);
  });

  it("lists exactly the ten loopback callbacks", () => {
    const uris = pinnedRedirectUris();
    expect(uris).toHaveLength(10);
    expect(uris).toContain("http://127.0.0.1:27890/callback");
    expect(uris).toContain("http://localhost:27894/callback");
  });
});

describe("issuer check (spec 5.4)", () => {
  it("accepts an exact match, ignoring one trailing slash", () => {
    expect(issuerMatches("https://as.test", "https://as.test/")).toBe(true);
    expect(issuerMatches("https://as.test/tenant", "https://as.test/tenant")).toBe(true);
  });
  it("accepts the path-scoped well-known advertisement and nothing else", () => {
    expect(
      issuerMatches(
        "https://as.test/.well-known/oauth-authorization-server/tenant",
        "https://as.test/tenant",
      ),
    ).toBe(true);
    expect(
      issuerMatches("https://as.test/tenant/.well-known/openid-configuration", "https://as.test/tenant"),
    ).toBe(true);
    expect(
      issuerMatches(
        "https://as.test/tenant/.well-known/oauth-authorization-server",
        "https://as.test/tenant",
      ),
    ).toBe(true);
    expect(issuerMatches("https://as.test/other", "https://as.test/tenant")).toBe(false);
    expect(issuerMatches("https://evil.test", "https://as.test")).toBe(false);
    expect(issuerMatches("https://as.test", "https://as.test/tenant")).toBe(false);
    expect(issuerMatches("https://as.test", undefined)).toBe(false);
  });
});

describe("flow requirements", () => {
  const base = {
    issuer: "https://as.test",
    authorization_endpoint: "https://as.test/a",
    token_endpoint: "https://as.test/t",
    response_types_supported: ["code"],
  };
  it("refuses a browser login without S256", () => {
    expect(unsupportedReason({ ...base, code_challenge_methods_supported: ["plain"] }, "browser")).toMatch(
      /S256/,
    );
    expect(
      unsupportedReason({ ...base, code_challenge_methods_supported: ["S256"] }, "browser"),
    ).toBeUndefined();
  });
  it("requires the device endpoint and grant for the device flow", () => {
    expect(unsupportedReason(base, "device")).toMatch(/device_authorization_endpoint/);
    expect(
      unsupportedReason(
        {
          ...base,
          device_authorization_endpoint: "https://as.test/d",
          grant_types_supported: ["authorization_code", "refresh_token"],
        } as never,
        "device",
      ),
    ).toMatch(/does not list urn:ietf:params:oauth:grant-type:device_code in grant_types_supported/);
    expect(
      unsupportedReason(
        {
          ...base,
          device_authorization_endpoint: "https://as.test/d",
          grant_types_supported: [DEVICE_GRANT],
        } as never,
        "device",
      ),
    ).toBeUndefined();
  });
  it("takes the device endpoint alone as the offer when no grant_types_supported is listed (RFC 8628 section 4: Microsoft Entra ID, Auth0)", () => {
    expect(
      unsupportedReason({ ...base, device_authorization_endpoint: "https://as.test/d" } as never, "device"),
    ).toBeUndefined();
  });
});

describe("an https MCP server's authorization server in clear text", () => {
  const server = "https://mcp.example.com/mcp";
  it.each([
    "http://localhost:8080",
    "http://LOCALHOST:8080/realms/x",
    "http://auth.localhost",
    "http://127.0.0.1:9000",
    "http://127.3.4.5",
    "http://[::1]:8080",
    "https://auth.example.com",
  ])("%s is used: loopback, or https", (as) => {
    expect(cleartextUnderHttps(server, { "": as })).toBeUndefined();
  });
  it.each([
    "http://auth.example.com",
    "http://192.168.1.5:8080",
    "http://localhost.example.com",
    "http://127.0.0.1.nip.io",
    "HTTP://10.0.0.1",
  ])("%s is refused", (as) => {
    expect(cleartextUnderHttps(server, { "": as })).toBe(
      "it is plain http although the MCP server https://mcp.example.com/mcp is https (codes and tokens would travel in clear text) — the server's operator must serve it over https",
    );
  });
  it("names the first metadata URL in clear text, without its query", () => {
    expect(
      cleartextUnderHttps(server, {
        issuer: "http://localhost:8080",
        token_endpoint: "http://keycloak:8080/token?k=secret",
      }),
    ).toMatch(/^its token_endpoint http:\/\/keycloak:8080\/token\?… is plain http although/);
  });
  it("an http MCP server's (a local or docker network) is used as the server's own traffic is", () => {
    expect(cleartextUnderHttps("http://mcp:3000/mcp", { "": "http://keycloak:8080" })).toBeUndefined();
  });
});

/** The error of a token exchange a real token endpoint on loopback refused with a 400 answering `body`. */
const refusalOf = (
  body: string,
  onTestFinished: (fn: () => Promise<void>) => void,
  type = "application/json",
) => refusedTokenRequest(body, onTestFinished, { type, grant: "token exchange" });

describe("redacted excerpts (spec 7)", () => {
  it("removes tokens, codes and secrets from JSON and form bodies", () => {
    const body = JSON.stringify({
      error: "invalid_grant",
      error_description: "bad",
      refresh_token: "r-123",
      code: "c-9",
      client_secret: "s3cr3t",
    });
    const out = redactedExcerpt(body);
    expect(out).toContain("invalid_grant");
    for (const secret of ["r-123", "c-9", "s3cr3t"]) expect(out).not.toContain(secret);
    expect(redactedExcerpt("error=x&code=abc&access_token=zzz")).toBe(
      "error=x&code=[redacted]&access_token=[redacted]",
    );
    expect(redactedExcerpt("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig leaked")).not.toContain("eyJ");
    expect(redactedExcerpt("y".repeat(500)).length).toBeLessThanOrEqual(201);
  });
  it("removes short values under other credential names an authorization server may echo", () => {
    const out = redactedExcerpt(
      'bad code for client secret=sk-abcdef12 api_key=k-77 {"apikey":"k-88","private_key":"pk-1"} client_assertion=ca-2',
    );
    for (const secret of ["sk-abcdef12", "k-77", "k-88", "pk-1", "ca-2"]) expect(out).not.toContain(secret);
    expect(out).toContain("bad code for client secret=[redacted]");
  });
  it("hides the token after Bearer up to what ends it, keeping the rest of the body", () => {
    // The token ends at the JSON string's quote: the closing "} and the fields after it stay.
    expect(
      redactedExcerpt(
        '{"error":"invalid_grant","error_description":"code expired Bearer abcdefghijklmnop1234"}',
      ),
    ).toBe('{"error":"invalid_grant","error_description":"code expired Bearer [redacted]"}');
    expect(redactedExcerpt('{"error_description":"Bearer abc123","error":"invalid_grant"}')).toBe(
      '{"error_description":"Bearer [redacted]","error":"invalid_grant"}',
    );
    for (const [body, shown] of [
      // An & is a token's (an HTML entity's in one, &#x2f;): in a form body the fields after it go with it.
      ["error_description=Bearer abc123&error=invalid_token", "error_description=Bearer [redacted]"],
      ["sent 'Bearer abc123', refused", "sent 'Bearer [redacted]', refused"],
      ["{Bearer abc123}", "{Bearer [redacted]}"],
      // What it hid before: a token68 whole (its = padding too), up to the space after it.
      ["Authorization: Bearer ab.c-d_e~f+g/h== was refused", "Authorization: Bearer [redacted] was refused"],
      ["bearer\tabc123", "bearer [redacted]"],
    ])
      expect(redactedExcerpt(body as string)).toBe(shown);
  });
  it("hides a quoted token after Bearer up to its closing quote, the quotes and the rest kept", () => {
    // A quote opening the token could not start the token's match: the token was shown whole.
    const single = '{"error":"invalid_request","error_description":"bad header: Bearer \'abcd1234secret\'"}';
    expect(redactedExcerpt(single)).toBe(
      '{"error":"invalid_request","error_description":"bad header: Bearer \'[redacted]\'"}',
    );
    // In JSON, a " is written \": the token was shown, and [redacted] put before it.
    const escaped = JSON.stringify({
      error: "invalid_request",
      error_description: 'bad header: Bearer "abcd1234secret"',
    });
    const out = redactedExcerpt(escaped);
    expect(out).toBe('{"error":"invalid_request","error_description":"bad header: Bearer \\"[redacted]\\""}');
    expect(JSON.parse(out)).toEqual({
      error: "invalid_request",
      error_description: 'bad header: Bearer "[redacted]"',
    });
    for (const [body, shown] of [
      // Inside its quotes, a , } or & is the token's.
      ["refused Bearer 'ab,cd}e&f' here", "refused Bearer '[redacted]' here"],
      ['refused Bearer "abcd1234secret", try again', 'refused Bearer "[redacted]", try again'],
      // A quote that nothing closes: the token up to what ends an unquoted one.
      ["refused Bearer 'abcd1234secret", "refused Bearer '[redacted]"],
      // Form bodies: a space written + or %20, a quote %27 or %22.
      [
        "error=invalid_request&error_description=Bearer+abcd1234secret&state=s1",
        "error=invalid_request&error_description=Bearer+[redacted]",
      ],
      [
        "error_description=bad+header%3A+Bearer%20%27abcd1234secret%27&error=invalid_request",
        "error_description=bad+header%3A+Bearer%20%27[redacted]%27&error=invalid_request",
      ],
      [
        "error_description=Bearer+%22abcd1234secret%22&error=invalid_request",
        "error_description=Bearer+%22[redacted]%22&error=invalid_request",
      ],
    ])
      expect(redactedExcerpt(body as string)).toBe(shown);
  });
  it("a token endpoint's refusal quoting a Bearer token is printed whole but the token", async ({
    onTestFinished,
  }) => {
    const body = '{"error":"invalid_grant","error_description":"code expired Bearer abcdefghijklmnop1234"}';
    const { endpoint, message } = await refusalOf(body, onTestFinished);
    expect(message).toBe(
      `s: token exchange failed — ${endpoint} answered 400: {"error":"invalid_grant","error_description":"code expired Bearer [redacted]"}`,
    );
  });
  it("hides a Bearer token a JSON encoder escaped: PHP's \\/ and Gson's \\u escapes, its \\u0027 and \\u0022 quotes", () => {
    // The token ended at the first backslash: all after PHP's \/ was shown, and Gson's \u0027 opened no quote.
    for (const [body, shown] of [
      [
        '{"error":"invalid_grant","error_description":"revoked: Bearer 9f8Kx2\\/Qw7LmZp+3RtYv0aBcD1eF2g=="}',
        '{"error":"invalid_grant","error_description":"revoked: Bearer [redacted]"}',
      ],
      [
        '{"error":"invalid_grant","error_description":"bad header: Bearer \\u0027abcd1234secret\\u0027"}',
        '{"error":"invalid_grant","error_description":"bad header: Bearer \\u0027[redacted]\\u0027"}',
      ],
      [
        '{"error_description":"bad header: Bearer \\u0022abcd1234secret\\u0022","error":"invalid_token"}',
        '{"error_description":"bad header: Bearer \\u0022[redacted]\\u0022","error":"invalid_token"}',
      ],
      // Gson's = and + (\u003d, \u002b), their hex digits in either case.
      [
        '{"error_description":"Bearer 9f8Kx2Qw7LmZ\\u002Bp\\u003D\\u003d","error":"invalid_token"}',
        '{"error_description":"Bearer [redacted]","error":"invalid_token"}',
      ],
      // A quote Gson nothing closes: the token up to what ends it.
      ["refused Bearer \\u0027abcd1234secret rejected", "refused Bearer \\u0027[redacted] rejected"],
      // An escaped quote ends the token, as the quote would; an escaped line break, as whitespace does.
      [
        '{"error_description":"got Bearer abcd1234\\u0027s token, \\u0026 refused"}',
        '{"error_description":"got Bearer [redacted]\\u0027s token, \\u0026 refused"}',
      ],
      // An escaped & is a token's, as an & is.
      [
        '{"error_description":"got Bearer abcd1234\\u0026state=x"}',
        '{"error_description":"got Bearer [redacted]"}',
      ],
      [
        '{"error_description":"got Bearer abcd1234\\nnext line"}',
        '{"error_description":"got Bearer [redacted]\\nnext line"}',
      ],
    ])
      expect(redactedExcerpt(body as string)).toBe(shown);
  });
  for (const [encoder, body, shown] of [
    [
      "PHP",
      '{"error":"invalid_grant","error_description":"revoked: Bearer 9f8Kx2\\/Qw7LmZp+3RtYv0aBcD1eF2g=="}',
      '{"error":"invalid_grant","error_description":"revoked: Bearer [redacted]"}',
    ],
    [
      "Gson",
      '{"error":"invalid_grant","error_description":"bad header: Bearer \\u0027abcd1234secret\\u0027"}',
      '{"error":"invalid_grant","error_description":"bad header: Bearer \\u0027[redacted]\\u0027"}',
    ],
  ] as const)
    it(`a token endpoint's refusal in ${encoder}'s JSON quoting a Bearer token is printed whole but the token`, async ({
      onTestFinished,
    }) => {
      const { endpoint, message } = await refusalOf(body, onTestFinished);
      expect(message).toBe(`s: token exchange failed — ${endpoint} answered 400: ${shown}`);
      expect(message).not.toMatch(/Qw7LmZp|abcd1234secret/);
    });
  it("a quote after Bearer with no token in it opens none: the fields after it stay", async ({
    onTestFinished,
  }) => {
    // The quote ending the JSON string was taken for one opening a token, hidden up to the next field's.
    const body =
      '{"error":"invalid_token","error_description":"missing token after Bearer ","error_uri":"https://x/doc"}';
    const { endpoint, message } = await refusalOf(body, onTestFinished);
    expect(message).toBe(`s: token exchange failed — ${endpoint} answered 400: ${body}`);
    for (const unchanged of [
      '{"error_description":"missing Bearer \\"","error_uri":"https://x/doc"}',
      '{"error_description":"missing Bearer \\u0022","error_uri":"https://x/doc"}',
      '{"error_description":"Bearer \\"\\"","error_uri":"https://x/doc"}',
      "{Bearer '}",
      "refused Bearer '",
      'refused Bearer ""',
    ])
      expect(redactedExcerpt(unchanged)).toBe(unchanged);
    // A token in them is hidden, a , } or & inside its quotes too.
    expect(redactedExcerpt('{"error_description":"Bearer \\"a,b}\\"","error_uri":"https://x/doc"}')).toBe(
      '{"error_description":"Bearer \\"[redacted]\\"","error_uri":"https://x/doc"}',
    );
  });
  for (const [what, type, body, shown] of [
    [
      "an HTML page's &quot;",
      "text/html",
      "<html><body><h1>400</h1><p>Invalid Authorization header: Bearer &quot;abcd1234secret&quot;</p></body></html>",
      "<html><body><h1>400</h1><p>Invalid Authorization header: Bearer &quot;[redacted]&quot;</p></body></html>",
    ],
    [
      "an HTML page's &#39;",
      "text/html",
      "<p>Invalid Authorization header: Bearer &#39;abcd1234secret&#39;</p>",
      "<p>Invalid Authorization header: Bearer &#39;[redacted]&#39;</p>",
    ],
    [
      "an HTML page's entities of /, + and = (OWASP ESAPI's)",
      "text/html",
      "<p>Token revoked: Bearer 9f8Kx2&#x2f;Qw7LmZp&#x2b;3RtYv&#x3d;&#x3d;</p>",
      "<p>Token revoked: Bearer [redacted]</p>",
    ],
    [
      'JSON quoted in JSON (\\\\\\")',
      "application/json",
      String.raw`{"error":"invalid_grant","error_description":"upstream said {\"detail\":\"bad header: Bearer \\\"abcd1234secret\\\"\"}"}`,
      String.raw`{"error":"invalid_grant","error_description":"upstream said {\"detail\":\"bad header: Bearer \\\"[redacted]\\\"\"}"}`,
    ],
  ] as const)
    it(`a token endpoint's refusal quoting a Bearer token in ${what} is printed whole but the token`, async ({
      onTestFinished,
    }) => {
      // The token ended at the & of an entity, or was not taken for quoted: it was shown, whole or after the &.
      const { endpoint, message } = await refusalOf(body, onTestFinished, type);
      expect(message).toBe(`s: token exchange failed — ${endpoint} answered 400: ${shown}`);
      expect(message).not.toMatch(/abcd1234secret|Qw7LmZp|3RtYv/);
    });
  it("a token endpoint's refusal naming the Bearer scheme in quotes, or with no token after it, is printed as it came", async ({
    onTestFinished,
  }) => {
    // The quote closing 'Bearer ' (or the string after Bearer) was taken for one opening a token, hidden up to
    // the next quote of its kind, and a ] was a token's.
    for (const body of [
      `{"error":"invalid_request","error_description":"Authorization header must start with 'Bearer '.","hint":"it's case-sensitive"}`,
      String.raw`{"error":"invalid_request","error_description":"Authorization header must start with \"Bearer \".","error_uri":"https://x/doc"}`,
      '{"error":"invalid_request","errors":["missing token after Bearer "],"error_uri":"https://x/doc"}',
      '{"error":"invalid_request","errors":["missing token after Bearer "]}',
    ]) {
      const { endpoint, message } = await refusalOf(body, onTestFinished);
      expect(message).toBe(`s: token exchange failed — ${endpoint} answered 400: ${body}`);
    }
  });
  it("a token after Bearer ends only at whitespace or a closer: an entity's & and ;, a % or a \\ escape are its", () => {
    for (const [body, shown] of [
      // Go's html/template writes + as &#43; and = as &#61;.
      ["<p>revoked: Bearer 9f8Kx2/Qw7LmZp&#43;3RtYv&#61;</p>", "<p>revoked: Bearer [redacted]</p>"],
      ["Bearer ab&cd;ef#gh%2Fij\\u002Bkl\\/mn rest", "Bearer [redacted] rest"],
      [
        "(Bearer abc123) [Bearer abc123] <b>Bearer abc123</b>",
        "(Bearer [redacted]) [Bearer [redacted]] <b>Bearer [redacted]</b>",
      ],
      // Quotes in each form end it, and open a token when a token's character follows them.
      [
        "Bearer abc%22 x Bearer abc%27 x Bearer abc&#x27; x",
        "Bearer [redacted]%22 x Bearer [redacted]%27 x Bearer [redacted]&#x27; x",
      ],
      [
        "Bearer &#X27;abc&#X27; Bearer &#x22;abc&#x22; Bearer &#039;abc&#039;",
        "Bearer &#X27;[redacted]&#X27; Bearer &#x22;[redacted]&#x22; Bearer &#039;[redacted]&#039;",
      ],
      ['Bearer &quot;&#x2f;abc&quot; Bearer "%2Fabc"', 'Bearer &quot;[redacted]&quot; Bearer "[redacted]"'],
      // A quote nothing closes: the token up to whitespace or the end.
      ["Bearer &quot;abc,def}x y", "Bearer &quot;[redacted] y"],
      // Inside \" quotes, a " alone is the token's, and the other way round.
      [
        String.raw`Bearer \"ab"c\" x Bearer "ab\"c" x`,
        String.raw`Bearer \"[redacted]\" x Bearer "[redacted]" x`,
      ],
      // A quote before and after it closes the phrase in any form: &quot;Bearer &quot;.
      ["say &quot;Bearer &quot;abc then", "say &quot;Bearer &quot;abc then"],
      // A bare word may be a token: hidden.
      ["Invalid Bearer token", "Invalid Bearer [redacted]"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });
  it("a token after Bearer wrapped in an inline tag or a lone <…> is hidden up to the closing <, the markup kept", () => {
    // < ends a token: one right after Bearer ended it before it began, and the token was shown.
    for (const [body, shown] of [
      ["<p>Bearer <code>abcd1234secret</code></p>", "<p>Bearer <code>[redacted]</code></p>"],
      ["<p>Bearer <b>abcd1234secret</b></p>", "<p>Bearer <b>[redacted]</b></p>"],
      [
        "<p>Bearer <tt>abcd1234secret</tt> or <kbd>x</kbd></p>",
        "<p>Bearer <tt>[redacted]</tt> or <kbd>x</kbd></p>",
      ],
      [
        '<p>Bearer <span class="tok">abcd1234secret</span></p>',
        '<p>Bearer <span class="tok">[redacted]</span></p>',
      ],
      ["<p>Bearer <b><CODE>abcd1234secret</CODE></b></p>", "<p>Bearer <b><CODE>[redacted]</CODE></b></p>"],
      ["Bearer <abcd1234secret> rejected", "Bearer <[redacted]> rejected"],
      ["Bearer <abc>", "Bearer <[redacted]>"],
      ['Bearer <code>"abcd1234secret"</code>', 'Bearer <code>"[redacted]"</code>'],
      // Escaped markup alike.
      [
        "&lt;p&gt;Bearer &lt;code&gt;abcd1234secret&lt;/code&gt;&lt;/p&gt;",
        "&lt;p&gt;Bearer &lt;code&gt;[redacted]&lt;/code&gt;&lt;/p&gt;",
      ],
      ["Bearer &lt;abcd1234secret&gt; rejected", "Bearer &lt;[redacted]&gt; rejected"],
      // A tag of another kind, its attributes after a space, wraps no token; nor does an empty tag.
      ['see Bearer <a href="/doc">the docs</a>', 'see Bearer <a href="/doc">the docs</a>'],
      ["Bearer <code></code> missing", "Bearer <code></code> missing"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });
  it("a token after Bearer in a tag of another kind is hidden, the tag never taken for the token", () => {
    // Such a tag was read as a lone <…>: "Bearer <[redacted]>abcd1234secret</u>", the token shown.
    for (const [body, shown] of [
      [
        "<p>Invalid header: Bearer <u>abcd1234secret</u></p>",
        "<p>Invalid header: Bearer <u>[redacted]</u></p>",
      ],
      ["<p>Bearer <small>abcd1234secret</small></p>", "<p>Bearer <small>[redacted]</small></p>"],
      ["<p>Bearer <pre>abcd1234secret</pre></p>", "<p>Bearer <pre>[redacted]</pre></p>"],
      ["Bearer <br>abcd1234secret next", "Bearer <br>[redacted] next"],
      ["Bearer <a>abcd1234secret</a>", "Bearer <a>[redacted]</a>"],
      ['Bearer <font color="red">abcd1234secret</font>', 'Bearer <font color="red">[redacted]</font>'],
      ["Bearer <u><b>abcd1234secret</b></u>", "Bearer <u><b>[redacted]</b></u>"],
      ["Bearer &lt;u&gt;abcd1234secret&lt;/u&gt;", "Bearer &lt;u&gt;[redacted]&lt;/u&gt;"],
      // An element's name in <…> before whitespace is a tag, no token; a closing tag is none either.
      ["Bearer <pre>\n</pre> missing", "Bearer <pre> </pre> missing"],
      ["Bearer <code></code> missing", "Bearer <code></code> missing"],
      // A lone <…> wraps a token when its characters end at the >, whatever follows it.
      ["Bearer <abcd1234secret>, next", "Bearer <[redacted]>, next"],
      ['see Bearer <a href="/doc">the docs</a>', 'see Bearer <a href="/doc">the docs</a>'],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("a lone <…> after Bearer hides its token whatever follows the >: punctuation, an entity, a line break", () => {
    // Only whitespace, a closer or the end after the > made it a token's: "Bearer <abcd1234secret>." was shown.
    for (const after of [".", ";", ":", "!", "?", "...", "—", "|", "/", "&amp;x=1", ".\n"])
      for (const [open, close] of [
        ["<", ">"],
        ["&lt;", "&gt;"],
        ["&#60;", "&#x3E;"],
      ])
        expect(
          redactedExcerpt(`Invalid header: Bearer ${open}abcd1234secret${close}${after} next`, 10_000),
        ).toBe(
          // The excerpt is one line: the line break and the space after it read as one space.
          `Invalid header: Bearer ${open}[redacted]${close}${after.trimEnd()} next`,
        );
    for (const [body, shown] of [
      ["Bearer <ab12cd34>.\n", "Bearer <[redacted]>."],
      ["<p>Bearer <b><abcd1234secret>.</b></p>", "<p>Bearer <b><[redacted]>.</b></p>"],
      // A placeholder of a name no HTML element has reads as a token in <…>: hidden, the . after it kept
      // (it was taken for a tag and the . for the token: "Bearer <token>[redacted]").
      ["expected Bearer <token>.", "expected Bearer <[redacted]>."],
      ["expected Bearer &lt;token&gt;.", "expected Bearer &lt;[redacted]&gt;."],
      ["expected Bearer <token/>!", "expected Bearer <[redacted]>!"],
      // Such a tag before a letter or a digit is a tag, the token after it: as before.
      ["Bearer <mytag>abcd1234secret</mytag>", "Bearer <mytag>[redacted]</mytag>"],
      // An element's name is never the token: <pre> before a . or a line break, <br/>.
      ["Bearer <pre>\n</pre>.", "Bearer <pre> </pre>."],
      ["Bearer <br/> next", "Bearer <br/> next"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("a tag before a token starting with - _ . or ~ is skipped, and a sentence's . after a tag kept", () => {
    // A tag of no element's name was skipped only before a letter or a digit: "Bearer <mytag>-abcd1234secret"
    // gave "Bearer <[redacted]>-abcd1234secret" (base64url tokens start with - or _), and "<br/>." hid the dot.
    for (const [body, shown] of [
      ["Bearer <mytag>-abcd1234secret</mytag>", "Bearer <mytag>[redacted]</mytag>"],
      ["Bearer <mytag>_abcd1234secret</mytag>", "Bearer <mytag>[redacted]</mytag>"],
      ["Bearer <token>.abcd1234secret", "Bearer <token>[redacted]"],
      ["Bearer <token>~abcd1234secret next", "Bearer <token>[redacted] next"],
      ['{"error":"Bearer <tok>_Zm9vYmFyYmF6cXV4"}', '{"error":"Bearer <tok>[redacted]"}'],
      ["Bearer &lt;mytag&gt;-abcd1234secret&lt;/mytag&gt;", "Bearer &lt;mytag&gt;[redacted]&lt;/mytag&gt;"],
      ["Bearer <u>-abcd1234secret</u>", "Bearer <u>[redacted]</u>"],
      // Punctuation alone before whitespace, a closer or the end is the sentence's.
      ["expected Bearer <token>... next", "expected Bearer <[redacted]>... next"],
      ["expected Bearer <token>.</p>", "expected Bearer <[redacted]>.</p>"],
      ["send Bearer <br/>.", "send Bearer <br/>."],
      ["send Bearer <br/>. next", "send Bearer <br/>. next"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("prose after a placeholder (<token>-style, <token>.json, <token>.—see) is kept, the placeholder hidden", () => {
    // tokenGoesOn stepped over any character, not only a token's, and took a word after - or . for a token:
    // "Use Bearer <token>-style authentication" gave "Bearer <token>[redacted] authentication".
    for (const [body, shown] of [
      ["Use Bearer <token>-style authentication; no", "Use Bearer <[redacted]>-style authentication; no"],
      ["Use a Bearer <token>-based header", "Use a Bearer <[redacted]>-based header"],
      ["use Bearer <token>.json for JSON", "use Bearer <[redacted]>.json for JSON"],
      ["Bearer <token>.—see docs", "Bearer <[redacted]>.—see docs"],
      ["Bearer <token>.&nbsp;More", "Bearer <[redacted]>.&nbsp;More"],
      ["Missing Bearer <token>.Check your config", "Missing Bearer <[redacted]>.Check your config"],
      // A token after the tag, digits in it, is still one.
      ["Bearer <br/>-abcd1234secret", "Bearer <br/>[redacted]"],
      ["Bearer <mytag>-abcd1234secret</mytag>", "Bearer <mytag>[redacted]</mytag>"],
      ["Bearer <token>.abcd1234secret", "Bearer <token>[redacted]"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("a token after an element's tag (<br>, <u>) is hidden even when it reads as a word; prose ends at punctuation too", () => {
    // 051f06f5 read a - or . and a word of letters after any tag as prose, <br> and <u> too, and stopped at a
    // character no token holds: these tokens were shown whole.
    for (const [body, shown] of [
      ["Bearer <br/>-abcdefghijklmnopqrstuvwxyz more", "Bearer <br/>[redacted] more"],
      ["Bearer <u>-abcdefghijklmnopqrstuvwxyz more", "Bearer <u>[redacted] more"],
      ["Bearer <br>-correct-horse-battery-staple more", "Bearer <br>[redacted] more"],
      ["Bearer <br>-Abcdefghijklmnopqrstuv more", "Bearer <br>[redacted] more"],
      ["Bearer <u>.abc-defghij-klmnopqrstuv\tmore", "Bearer <u>[redacted] more"],
      ["Bearer &lt;br/&gt;-abcdefghijklmnopqrstuv more", "Bearer &lt;br/&gt;[redacted] more"],
      ["Bearer <br/>.\u00e9abcdef123secret more", "Bearer <br/>[redacted] more"],
      // A word longer than prose's after a placeholder is a token.
      ["Bearer <mytag>-abcdefghijklmnopqrstuvwxyz more", "Bearer <mytag>[redacted] more"],
      // Prose ending at a sentence's punctuation, a quote, an escaped line break or the end.
      ["Use Bearer <token>-style, please", "Use Bearer <[redacted]>-style, please"],
      ["Use Bearer <token>-style.", "Use Bearer <[redacted]>-style."],
      ["Use Bearer <token>-style: see docs", "Use Bearer <[redacted]>-style: see docs"],
      ["send Bearer <token>.json", "send Bearer <[redacted]>.json"],
      ["send Bearer <token>.JSON for JSON", "send Bearer <[redacted]>.JSON for JSON"],
      [
        '{"error_description":"expected Bearer <token>-style"}',
        '{"error_description":"expected Bearer <[redacted]>-style"}',
      ],
      [
        '{"error_description":"expected Bearer <token>-style\\nauth"}',
        '{"error_description":"expected Bearer <[redacted]>-style\\nauth"}',
      ],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("an XHTML tag closed by /> with no space (<br/>) after Bearer is skipped as <br> is", () => {
    // ANY_TAG wanted a space before its /: <br/> was neither a tag nor a lone <…>, and the token was shown.
    for (const [body, shown] of [
      ["Bearer <br/>abcd1234secret next", "Bearer <br/>[redacted] next"],
      ["Bearer &lt;br/&gt;abcd1234secret next", "Bearer &lt;br/&gt;[redacted] next"],
      ["Bearer <hr/><code>abcd1234secret</code>", "Bearer <hr/><code>[redacted]</code>"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("a lone <…> or &lt;…&gt; inside an inline tag after Bearer is unwrapped too", () => {
    for (const [body, shown] of [
      [
        "<p>Invalid header: Bearer <code>&lt;abcd1234secret&gt;</code></p>",
        "<p>Invalid header: Bearer <code>&lt;[redacted]&gt;</code></p>",
      ],
      [
        "<p>Invalid header: Bearer <b><abcd1234secret></b></p>",
        "<p>Invalid header: Bearer <b><[redacted]></b></p>",
      ],
      ["Bearer <u><abcd1234secret></u>", "Bearer <u><[redacted]></u>"],
      ["Bearer <b>&#60;abcd1234secret&#62;</b> x", "Bearer <b>&#60;[redacted]&#62;</b> x"],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });

  it("HTML's &lt; and &gt; (&#60;, &#x3E;, zero-padded) end a token: the escaped markup after it stays", () => {
    // Every other character was the token's: &lt;/error&gt; went with it.
    for (const [body, shown] of [
      [
        "&lt;error&gt;Bearer abcd1234secret&lt;/error&gt; more text",
        "&lt;error&gt;Bearer [redacted]&lt;/error&gt; more text",
      ],
      ["Bearer abcd1234secret&#60;/e&#62; x", "Bearer [redacted]&#60;/e&#62; x"],
      ["Bearer abcd1234secret&#x3C;/e&#x3e; x", "Bearer [redacted]&#x3C;/e&#x3e; x"],
      [
        "Bearer abcd1234secret&#0060;/e x Bearer abc&#x003e; y",
        "Bearer [redacted]&#0060;/e x Bearer [redacted]&#x003e; y",
      ],
    ])
      expect(redactedExcerpt(body as string, 10_000)).toBe(shown);
  });
  for (const [body, shown] of [
    [
      "<p>Invalid authorization header: Bearer <code>abcd1234secret</code></p>",
      "<p>Invalid authorization header: Bearer <code>[redacted]</code></p>",
    ],
    [
      "<p>Invalid Authorization header: Bearer <abcd1234secret>.</p>",
      "<p>Invalid Authorization header: Bearer <[redacted]>.</p>",
    ],
    [
      "&lt;error&gt;Bearer abcd1234secret&lt;/error&gt; &lt;hint&gt;re-login&lt;/hint&gt;",
      "&lt;error&gt;Bearer [redacted]&lt;/error&gt; &lt;hint&gt;re-login&lt;/hint&gt;",
    ],
  ] as const)
    it(`a token endpoint's HTML refusal ${body.slice(0, 20)}… shows the Bearer token [redacted], the markup kept`, async ({
      onTestFinished,
    }) => {
      const { endpoint, message } = await refusalOf(body, onTestFinished, "text/html");
      expect(message).toBe(`s: token exchange failed — ${endpoint} answered 400: ${shown}`);
    });
  it("a WWW-Authenticate challenge's auth-params after Bearer are kept: no token68 is followed by =\"", () => {
    // realm= was taken for a token and hidden, its value left after [redacted].
    for (const challenge of [
      'Bearer realm="x", error="invalid_token"',
      String.raw`{"www_authenticate":"Bearer realm=\"mcp\", error=\"invalid_token\""}`,
      "Bearer error=&quot;invalid_token&quot;",
      'Bearer resource_metadata="https://mcp.example.com/prm"',
    ])
      expect(redactedExcerpt(challenge, 10_000)).toBe(challenge);
    // A token with = padding at a JSON string's end is still one.
    expect(redactedExcerpt('{"e":"Bearer YWJjZA==","f":1}')).toBe('{"e":"Bearer [redacted]","f":1}');
  });
  it("reads adversarial bodies of 200 KB in one pass (no backtracking blows up)", () => {
    // Each is read in milliseconds (see the commit); what it returns shows it was read through to its end.
    const size = 200_000;
    // `piece` repeated to 200 KB; `shown` as many times, as the excerpt ends (no trailing space).
    const many = (piece: string, shown = piece) => shown.repeat(Math.ceil(size / piece.length)).trimEnd();
    for (const [body, shown] of [
      // Each quote closes the phrase the one before Bearer opened.
      [`'${many("Bearer '")}`, `'${many("Bearer '")}`],
      [`\\"${many('Bearer \\"')}`, `\\"${many('Bearer \\"')}`],
      // The first opens a token, up to the space after it: the rest are phrases as above.
      [many("Bearer '"), `Bearer '[redacted] '${many("Bearer '").slice("Bearer 'Bearer '".length)}`],
      [`Bearer ${many("&#")}`, "Bearer [redacted]"],
      [`Bearer '${many("a&#\\")}`, "Bearer '[redacted]"],
      [`Bearer ${"\\".repeat(size)}"]`, `Bearer ${"\\".repeat(size)}"]`],
      [`Bearer ${"\\".repeat(size)}x`, "Bearer [redacted]"],
      [`Bearer ${many("\\")}"a${many("\\")}'`, `Bearer ${many("\\")}"[redacted]`],
      [many("Bearer &quot;a "), many("Bearer &quot;a ", "Bearer &quot;[redacted] ")],
      [many("Bearer &#000 "), many("Bearer &#000 ", "Bearer [redacted] ")],
      [`Bearer &quot;a${many("&#000")}`, "Bearer &quot;[redacted]"],
      [many("Bearer <abc>. "), many("Bearer <abc>. ", "Bearer <[redacted]>. ")],
      [many("Bearer &lt;token&gt;. "), many("Bearer &lt;token&gt;. ", "Bearer &lt;[redacted]&gt;. ")],
      // A sentence's . then the next Bearer, a word before a space: prose after a placeholder, each hidden.
      [
        many("Bearer <abc>.Bearer <abc>."),
        many("Bearer <abc>.Bearer <abc>.", "Bearer <[redacted]>.Bearer <[redacted]>."),
      ],
      // Punctuation alone after a tag, read once to its end.
      [`Bearer <abc>${"-".repeat(size)}`, `Bearer <[redacted]>${"-".repeat(size)}`],
      [`Bearer <abc>${many("-.")} x`, `Bearer <[redacted]>${many("-.")} x`],
    ] as const)
      expect(redactedExcerpt(body, 2 * size)).toBe(shown);
  });
  it("a token endpoint error with no answer recorded has the held credentials redacted from the library's message", () => {
    const fetches = oauthFetches(undefined, undefined, undefined, () => ["at-HELD_1234", undefined]);
    const err = tokenEndpointError(
      "s",
      "token refresh",
      fetches,
      "http://127.0.0.1:9/token",
      new Error("unexpected answer for at-HELD_1234"),
    );
    expect(err.message).toBe("s: token refresh failed — unexpected answer for [redacted]");
  });
});

describe("oauth settings", () => {
  it("reads the oauth mapping and drops empty user_agent", () => {
    const e = oauthEntryOf("s", {
      url: "https://m.test/mcp",
      auth: "oauth",
      oauth: { flow: "device", user_agent: "", scope: ["a", "b"], cimd: false },
    });
    expect(e.oauth).toEqual({ flow: "device", scope: "a b", cimd: false });
    expect(() => oauthEntryOf("s", { command: "x" })).toThrow(/mcp_servers\.s\.url/);
  });

  it("takes a scope of spaces alone (a list of them, a variable rendered so) as unset, as an empty one is", () => {
    for (const scope of ["", "  ", [" "], [], ["", " "]]) {
      const e = oauthEntryOf("s", { url: "https://m.test/mcp", auth: "oauth", oauth: { scope } });
      expect(e.oauth?.scope, JSON.stringify(scope)).toBeUndefined();
    }
  });

  it("refuses a rendered user_agent no HTTP header can carry (a variable from .env), naming the key", () => {
    const entry = { url: "https://m.test/mcp", auth: "oauth", oauth: { user_agent: "Agent\u2713" } };
    expect(() => oauthEntryOf("s", entry)).toThrow(
      /^mcp_servers\.s\.oauth\.user_agent: contains "\u2713" \(U\+2713\), a character outside Latin-1/,
    );
  });
});

describe("$BROWSER", () => {
  it("runs the first colon-separated entry without a shell, with %s or the URL appended", async () => {
    const { browserCommand } = await import("../../../src/io/oauth/browser.js");
    const url = "https://as.test/authorize?a=1&b=$(rm -rf /)";
    expect(browserCommand(url, { BROWSER: "firefox --new-window:chromium" })).toEqual([
      "firefox",
      "--new-window",
      url,
    ]);
    expect(browserCommand(url, { BROWSER: "w3m %s" })).toEqual(["w3m", url]);
    expect(browserCommand(url, {})).toBeUndefined();
    expect(browserCommand(url, { BROWSER: "" })).toBeUndefined();
  });

  it("opens only http(s) URLs: a file: or custom-scheme authorization_endpoint is never handed to a program", async () => {
    const { openInBrowser } = await import("../../../src/io/oauth/browser.js");
    const dir = mkdtempSync(join(tmpdir(), "svc-browser-"));
    const opener = join(dir, "opener.sh");
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> "${dir}/opened"\n`, { mode: 0o755 });
    const env = { PATH: process.env.PATH, BROWSER: `${opener} %s` };
    try {
      for (const url of ["file:///etc/passwd", "ms-officecmd:x", "smb://host/share", "//as.test/authorize"]) {
        await expect(openInBrowser(url, env)).rejects.toThrow("a login URL must be http or https");
      }
      await openInBrowser("https://as.test/authorize?x=1", env);
      await vi.waitFor(
        () => expect(readFileSync(join(dir, "opened"), "utf8")).toBe("https://as.test/authorize?x=1\n"),
        { timeout: 10_000 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("opening the login URL", () => {
  it.skipIf(process.platform !== "linux")(
    "without $BROWSER, a system opener (xdg-open) that finds no browser is reported; one that opens the URL is not",
    async () => {
      const { openInBrowser } = await import("../../../src/io/oauth/browser.js");
      const dir = mkdtempSync(join(tmpdir(), "svc-browser-"));
      // xdg-open on a host without a desktop tries these text browsers in turn: each one here is ours.
      const browsers = ["www-browser", "links2", "elinks", "links", "lynx", "w3m"];
      const touched = [
        "PATH",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "BROWSER",
        "XDG_CURRENT_DESKTOP",
        "DESKTOP_SESSION",
      ];
      const saved = Object.fromEntries(touched.map((name) => [name, process.env[name]]));
      try {
        for (const name of touched.slice(1)) delete process.env[name];
        process.env.PATH = `${dir}:${saved.PATH ?? ""}`;
        for (const name of browsers) writeFileSync(join(dir, name), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
        await expect(openInBrowser("https://as.test/authorize", process.env)).rejects.toThrow(
          /xdg-open found no browser to open it \(exit status \d+\)/,
        );
        writeFileSync(join(dir, "www-browser"), `#!/bin/sh\nprintf '%s\\n' "$1" > "${dir}/opened"\n`, {
          mode: 0o755,
        });
        await openInBrowser("https://as.test/authorize?y=2", process.env);
        expect(readFileSync(join(dir, "opened"), "utf8")).toBe("https://as.test/authorize?y=2\n");
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("a $BROWSER that cannot be started is reported (the login then says to use the printed URL)", async () => {
    const { openInBrowser } = await import("../../../src/io/oauth/browser.js");
    const dir = mkdtempSync(join(tmpdir(), "svc-browser-"));
    try {
      const env = { PATH: process.env.PATH, BROWSER: join(dir, "no-such-browser") };
      await expect(openInBrowser("https://as.test/authorize", env)).rejects.toThrow(
        /\$BROWSER .*no-such-browser could not be started \(ENOENT\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("WWW-Authenticate challenges (RFC 9110 11.6.1)", () => {
  it("splits several challenges, with token68, quoted strings and escapes, names case-insensitive", () => {
    expect(
      parseChallenges(
        'Basic abc+/d==, DPoP algs="ES256", BEARER Realm=mcp, error="invalid_token", error_description="say \\"hi\\", ok"',
      ),
    ).toEqual([
      { scheme: "basic", params: {} },
      { scheme: "dpop", params: { algs: "ES256" } },
      {
        scheme: "bearer",
        params: { realm: "mcp", error: "invalid_token", error_description: 'say "hi", ok' },
      },
    ]);
  });

  it("reads the Bearer challenge's parameters wherever it stands", () => {
    const h = new Headers({
      "www-authenticate": 'DPoP algs="ES256", Bearer resource_metadata="https://x/prm", scope="a b"',
    });
    expect(bearerParams(h)).toEqual({ resource_metadata: "https://x/prm", scope: "a b" });
    expect(bearerParams(new Headers({ "www-authenticate": 'Basic realm="x"' }))).toBeUndefined();
    expect(bearerParams(new Headers())).toBeUndefined();
    expect(
      bearerParams(
        new Headers({ "www-authenticate": "Bearer resource_metadata=https://x/.well-known/prm, scope=a" }),
      ),
    ).toEqual({ resource_metadata: "https://x/.well-known/prm", scope: "a" });
  });
});

describe("issuer check of the MCP 2025-03-26 fallback (no protected-resource metadata)", () => {
  it("accepts an issuer on the server's origin (RFC 8414 3.3 against the URL used), refuses another origin", () => {
    expect(fallbackIssuerMatches("http://localhost:4000", "http://localhost:4000/oauth")).toBe(true);
    expect(fallbackIssuerMatches("https://mcp.test", "https://mcp.test")).toBe(true);
    expect(fallbackIssuerMatches("https://mcp.test", "https://evil.test/oauth")).toBe(false);
    expect(fallbackIssuerMatches("https://mcp.test", "http://mcp.test")).toBe(false);
    expect(fallbackIssuerMatches("https://mcp.test", undefined)).toBe(false);
    expect(fallbackIssuerMatches("https://mcp.test", "not a url")).toBe(false);
  });
});

describe("isUnreachable: a client metadata document fetch that never reached its host", () => {
  const failed = (cause: unknown) => Object.assign(new TypeError("fetch failed"), { cause });
  it.each([
    [
      "name not resolved",
      failed(Object.assign(new Error("getaddrinfo ENOTFOUND x.local"), { code: "ENOTFOUND" })),
    ],
    ["refused", failed(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))],
    [
      "refused on every address",
      failed(
        Object.assign(new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })]), {}),
      ),
    ],
    [
      "connect timeout",
      failed(Object.assign(new Error("Connect Timeout Error"), { code: "UND_ERR_CONNECT_TIMEOUT" })),
    ],
    ["request timeout", new DOMException("The operation was aborted due to timeout", "TimeoutError")],
  ])("%s: unreachable", (_what, err) => {
    expect(isUnreachable(err)).toBe(true);
  });
  it.each([
    [
      "certificate not trusted",
      failed(Object.assign(new Error("self-signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" })),
    ],
    ["cancelled", new DOMException("This operation was aborted", "AbortError")],
    ["not an error", "boom"],
  ])("%s: not unreachable (the document stays unverified, the login fails)", (_what, err) => {
    expect(isUnreachable(err)).toBe(false);
  });
});
