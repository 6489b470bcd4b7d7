import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scrub, secretEntityReadings, secretForms, secretScrubber } from "../../../src/io/credentials.js";
import { jsonLayers, jsonUnitsView } from "../../../src/io/decodedView.js";
import { refusedRefresh } from "../../helpers/refusedRefresh.js";

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

  it("is cut out however the escaper wrote it: HTML5 names, &apos;, uppercase X, zero-padded, &#34; beside &amp;", () => {
    for (const echoed of [
      "9f8Kx2&sol;Qw7LmZp&plus;3RtYv0aBc&sol;D1eF2g&equals;",
      "9f8Kx2&#X2F;Qw7LmZp&#X2B;3RtYv0aBc&#X2F;D1eF2g&#X3D;",
      "9f8Kx2&#x002f;Qw7LmZp&#x002b;3RtYv0aBc&#x002f;D1eF2g&#x003d;",
      "9f8Kx2&#0047;Qw7LmZp&#00043;3RtYv0aBc/D1eF2g&#61;",
    ])
      expect(scrub(`<p>refresh token ${echoed} revoked</p>`, [refresh])).toBe(
        "<p>refresh token [redacted] revoked</p>",
      );
    // XML's and PHP's ENT_HTML5 &apos;; MarkupSafe (Jinja) writes " as &#34; and & as &amp;.
    expect(scrub("<e>pa&apos;ss&amp;w0rd</e>", ["pa'ss&w0rd"])).toBe("<e>[redacted]</e>");
    expect(scrub("<p>p&#34;w&amp;1234+x</p>", ['p"w&1234+x'])).toBe("<p>[redacted]</p>");
  });

  it("is cut out of an HTML page quoted in JSON: as JSON.stringify, Go's encoding/json (\\u0026) and PHP (\\/) write it", () => {
    const esapi = "9f8Kx2&#x2f;Qw7LmZp&#x2b;3RtYv0aBc&#x2f;D1eF2g&#x3d;";
    const go = "9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g&#61;";
    const quoted = (page: string) => JSON.stringify({ upstream: page });
    expect(scrub(quoted(`<p>${esapi}</p>`), [refresh])).toBe('{"upstream":"<p>[redacted]</p>"}');
    const goJson = (page: string) =>
      quoted(page).replace(/&/g, "\\u0026").replace(/</g, "\\u003c").replace(/>/g, "\\u003e");
    expect(scrub(goJson(`<p>${esapi}</p>`), [refresh])).toBe(
      '{"upstream":"\\u003cp\\u003e[redacted]\\u003c/p\\u003e"}',
    );
    expect(scrub(quoted(`<p>${go}</p>`).replace(/\//g, "\\/"), [refresh])).toBe(
      '{"upstream":"<p>[redacted]<\\/p>"}',
    );
    // Quoted in JSON again: \\u0026 and \\\" read as & and ".
    expect(scrub(JSON.stringify(goJson(`<p>${esapi}</p>`)), [refresh])).toBe(
      JSON.stringify('{"upstream":"\\u003cp\\u003e[redacted]\\u003c/p\\u003e"}'),
    );
  });

  it("hides only the secret: the page's other entities and a lone & stay as written", () => {
    expect(
      scrub(
        "a &amp; b &lt;i&gt;9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g=&lt;/i&gt; &#x43F;&#1088; & &bogus; &#;",
        [refresh],
      ),
    ).toBe("a &amp; b &lt;i&gt;[redacted]&lt;/i&gt; &#x43F;&#1088; & &bogus; &#;");
    // A text without & is given as it is.
    const plain = "<p>no entity here, 9f8Kx2 alone</p>";
    expect(scrub(plain, [refresh])).toBe(plain);
  });

  it("needs no form of its own: the secret's forms hold no entity", () => {
    // Each escaper's way had its form (htmlEntityForms), and those it was not listed for were missed.
    for (const secret of [refresh, `pw&<x>"q'y\`z`])
      expect(secretForms(secret).filter((form) => /&(?:#|amp;|lt;|gt;|quot;)/.test(form))).toEqual([]);
  });

  it("an entity-heavy page with 2,000 secrets has each one it quotes hidden, the rest as it was", () => {
    // Every form of each secret shared &#, #x, 2f with every entity: the pass over the text sampling the
    // forms' pieces compared them at each entity (1.4 ms a text became 72 ms).
    const secrets = Array.from({ length: 2000 }, (_, i) =>
      createHash("sha256").update(`secret ${i}`).digest("base64"),
    );
    const cyrillic = [..."Привет мир, это страница ошибки "]
      .map((c) => (c === " " ? " " : `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`))
      .join("");
    const line = `<p>${cyrillic}</p>\n`;
    const razor = (secret: string) => secret.replace(/\+/g, "&#x2B;");
    const go = (secret: string) => secret.replace(/\+/g, "&#43;").replace(/=/g, "&#61;");
    const planted = [7, 1234, 1999].map((i) => secrets[i] as string);
    const page =
      line.repeat(200) +
      `<p>${razor(planted[0] as string)}</p>` +
      line.repeat(200) +
      `<p>${go(planted[1] as string)} and ${planted[2]}</p>` +
      line.repeat(5);
    const scrubber = secretScrubber(secrets);
    expect(page.length).toBeGreaterThan(75_000);
    expect(scrubber(page)).toBe(
      `${line.repeat(200)}<p>[redacted]</p>${line.repeat(200)}<p>[redacted] and [redacted]</p>${line.repeat(5)}`,
    );
    expect(scrubber(line.repeat(400))).toBe(line.repeat(400));
  });

  for (const [escaper, echoed] of [
    // Go's html/template escapes in text only " & ' + < >: / and = stay.
    ["Go's html/template", "9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g="],
    // ASP.NET Core's HtmlEncoder (Razor) writes + as &#x2B; and leaves / and =.
    ["ASP.NET Core Razor", "9f8Kx2/Qw7LmZp&#x2B;3RtYv0aBc/D1eF2g="],
  ] as const)
    it(`a token endpoint's HTML refusal written by ${escaper} shows the held refresh token [redacted]`, async ({
      onTestFinished,
    }) => {
      // Neither was one of the entity forms listed per escaper: the token was shown whole.
      const { endpoint, message } = await refusedRefresh(
        `<p>Refresh token ${echoed} revoked</p>`,
        [refresh],
        onTestFinished,
      );
      expect(message).toBe(
        `s: token refresh failed — ${endpoint} answered 400: <p>Refresh token [redacted] revoked</p>`,
      );
    });

  it("a token endpoint's HTML refusal quoting the held refresh token escaped shows it [redacted]", async ({
    onTestFinished,
  }) => {
    const page = `<p>Refresh token ${refresh.replace(/\//g, "&#x2f;").replace(/\+/g, "&#x2b;").replace(/=/g, "&#x3d;")} revoked; sent 9f8Kx2/Qw7LmZp&#43;3RtYv0aBc/D1eF2g&#61;</p>`;
    const { endpoint, message } = await refusedRefresh(page, [refresh], onTestFinished);
    expect(message).toBe(
      `s: token refresh failed — ${endpoint} answered 400: <p>Refresh token [redacted] revoked; sent [redacted]</p>`,
    );
  });

  it("a token endpoint's JSON refusal quoting, in an HTML page, a held client secret with a \\ before a t shows it [redacted]", async ({
    onTestFinished,
  }) => {
    // Go's encoding/json of an html/template page: the secret's \ written \\, its + as \u0026#43;. The JSON reading
    // took \\t for \ and a tab, and the secret was shown whole.
    const secret = "Zx9\\tQ+7w/Lm0K";
    const body = String.raw`{"error":"invalid_client","error_description":"<p>client_secret Zx9\\tQ\u0026#43;7w/Lm0K refused</p>"}`;
    expect(JSON.parse(body).error_description).toBe("<p>client_secret Zx9\\tQ&#43;7w/Lm0K refused</p>");
    const { endpoint, message } = await refusedRefresh(
      body,
      [refresh, secret],
      onTestFinished,
      "application/json",
    );
    expect(message).toBe(
      `s: token refresh failed — ${endpoint} answered 400: ${body.replace(String.raw`Zx9\\tQ\u0026#43;7w/Lm0K`, "[redacted]")}`,
    );
  });
});

describe("scrub: a text with entities, secrets inside secrets, and backslashes", () => {
  it("hides a secret written with an entity whole when a shorter secret is part of it", () => {
    // The shorter one was cut first, and the text read for entities after that no longer held the longer one.
    expect(scrub("token: abcd1234&#x2f;xyz56789 end", ["abcd1234", "abcd1234/xyz56789"])).toBe(
      "token: [redacted] end",
    );
    expect(scrub("p=abcd1234&amp;q=xyz56789 next", ["abcd1234", "abcd1234&q=xyz56789"])).toBe(
      "p=[redacted] next",
    );
    expect(scrub("bot 123456:AAH&#x2d;zz9yyXw-qq end", ["123456:AAH-zz9yyXw-qq", "AAH-zz9yyXw-qq"])).toBe(
      "bot [redacted] end",
    );
  });

  it("looks for a secret with a backslash as it is in a JSON text with entities, never for it without the backslash", () => {
    const text = '{"html":"a &amp; b","note":"Sup3rSecret is the demo password","p":"C:\\\\tmp"}';
    expect(scrub(text, ["Sup3r\\Secret"])).toBe(text);
    const url = '{"url":"https:\\/\\/e.com\\/?a=1&amp;b=2","note":"abcd"}';
    expect(scrub(url, ["a\\b\\c\\d"])).toBe(url);
    // Written with an entity and its backslash escaped, as JSON writes it: hidden.
    expect(scrub('{"p":"Sup3r\\\\Sec&#114;et","q":"\\/"}', ["Sup3r\\Secret"])).toBe(
      '{"p":"[redacted]","q":"\\/"}',
    );
    expect(scrub('{"p":"Sup3r\\\\Sec\\u0026#114;et"}', ["Sup3r\\Secret"])).toBe('{"p":"[redacted]"}');
    // A secret starting with / written \/ beside Go's \u0026 entities: its escape hidden with it.
    expect(scrub('{"k":"x\\/xH4\\u0026#x0037;\\u0026#55;0A y"}', ["/xH4770A"])).toBe('{"k":"x[redacted] y"}');
  });

  it("reads no JSON text whose entities stand for no character of a secret, and of one that has such an entity only its string", () => {
    const secrets = ["9f8Kx2/Qw7LmZp+3RtYv0aBc/D1eF2g=", "abcdef0123456789abcdef0123456789"];
    const items = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({
        url: `https://api.example.com/v1/items/${i}?page=${i}&per_page=50`,
        body_html: `<a href="https://example.com/x?a=${i}&amp;b=2">link &amp; more &#x27;q&#x27; &lt;b&gt;</a>`,
        title: `Item ${i} "q" C:\\dir`,
      }).replace(/\//g, "\\/"),
    );
    const text = `[${items.join(",")}]`;
    const go = text.replace(/&/g, "\\u0026");
    const before = secretEntityReadings();
    expect(scrub(text, secrets)).toBe(text);
    expect(scrub(go, secrets)).toBe(go);
    expect(secretEntityReadings()).toBe(before);
    // One string quoting the secret with \u0026#43; (Go's encoding/json of html/template's +): that string alone.
    const quoted = go.replace(
      '"Item 7 ',
      '"Item 7 9f8Kx2\\/Qw7LmZp\\u0026#43;3RtYv0aBc\\/D1eF2g\\u0026#61; ',
    );
    expect(scrub(quoted, secrets)).toBe(go.replace('"Item 7 ', '"Item 7 [redacted] '));
    expect(secretEntityReadings()).toBe(before + 1);
  });
});

describe("scrub: a secret with a backslash in HTML quoted in JSON", () => {
  it("reads a JSON string's backslashes in pairs, as JSON.parse does, each unit mapped to what writes it", () => {
    // A run of backslashes was read as one escape: \\t as a tab, \\\u0026 as &, \\\\ as one \.
    for (const [written, read] of [
      [String.raw`Zx9\\tQ`, "Zx9\\tQ"],
      [String.raw`a\\\u0026b`, "a\\&b"],
      [String.raw`n\\\/x`, "n\\/x"],
      [String.raw`q\\\"r`, 'q\\"r'],
      [String.raw`w\\\\v`, "w\\\\v"],
      [String.raw`c\u00e9\n\\\\n`, "cé\n\\\\n"],
      // No escape of JSON's: the backslash as it is.
      ["odd \\d, end \\", "odd \\d, end \\"],
    ] as const) {
      const view = jsonUnitsView(written);
      expect(view.text).toBe(read);
      // Each unit maps back to what writes it, the whole escape or itself, one after the other.
      let rebuilt = "";
      for (let at = 0; at < read.length; at++) {
        const [from, to] = view.spanOf(at, at + 1);
        expect(from).toBe(rebuilt.length);
        rebuilt += written.slice(from, to);
      }
      expect(rebuilt).toBe(written);
    }
    expect(jsonUnitsView(String.raw`Zx9\\tQ`).text).toBe(JSON.parse(String.raw`"Zx9\\tQ"`));
  });

  it("reads JSON quoted in JSON a layer at a time, each reading mapped back to the text", () => {
    const inner = JSON.stringify({ e: "<p>Zx9\\tQ&#43;7w</p>" }).replace(/&/g, "\\u0026");
    const outer = JSON.stringify(inner).slice(1, -1);
    const layers = jsonLayers(outer);
    // The second reading holds the secret's \t as it is; only a third takes it for a tab.
    expect(layers.map((layer) => layer.text)).toEqual([
      inner,
      '{"e":"<p>Zx9\\tQ&#43;7w</p>"}',
      '{"e":"<p>Zx9\tQ&#43;7w</p>"}',
    ]);
    const last = layers[1] as (typeof layers)[number];
    const at = last.text.indexOf("&#43;");
    const [from, to] = last.spanOf(at, at + "&#43;".length);
    expect(outer.slice(from, to)).toBe(String.raw`\\u0026#43;`);
    // Nothing to read: no reading.
    expect(jsonLayers("no escape")).toEqual([]);
    expect(jsonLayers("C:\\dir")).toEqual([]);
  });

  it("hides the secrets a review found shown: Go's \\u0026 beside \\\\, and & as it is beside \\\\t", () => {
    for (const [secret, text, shown] of [
      [
        "Zx9\\tQ+7w/Lm0K",
        String.raw`{"e":"<p>client_secret Zx9\\tQ\u0026#43;7w/Lm0K refused</p>"}`,
        '{"e":"<p>client_secret [redacted] refused</p>"}',
      ],
      [
        "Pw\\&Rd9/+xq2",
        String.raw`{"e":"<p>Pw\\\u0026amp;Rd9/\u0026#43;xq2</p>"}`,
        '{"e":"<p>[redacted]</p>"}',
      ],
      ['q"r\\tz+9Ab', String.raw`{"e":"<p>q&#34;r\\tz&#43;9Ab</p>"}`, '{"e":"<p>[redacted]</p>"}'],
    ] as const)
      expect(scrub(text, [secret])).toBe(shown);
  });

  /**
   * Secrets with a backslash (before t, n, u, ", /, &, b, x or another backslash) an HTML page quotes as an escaper
   * may (& < > " ' always as entities, other characters now and then: decimal, hex of either case, zero-padded, or
   * named), the page as it is, in JSON, in Go's encoding/json (& < > as \u escapes), in PHP's json_encode (\/), and
   * in JSON quoted in JSON (plain and Go's): each hidden whole, everything around it kept.
   */
  it("hides every secret with a backslash an HTML page quotes, in each JSON wrapper, the rest kept (seeded)", () => {
    const alphabet = [..."abXZ09+/=-_.~&<>\"'`!#$%;:?@[]{|}ntubfr\\"];
    const named: Readonly<Record<string, string>> = {
      "&": "amp",
      "<": "lt",
      ">": "gt",
      '"': "quot",
      "'": "apos",
      "/": "sol",
      "+": "plus",
      "=": "equals",
      "\\": "bsol",
    };
    const entity = (c: string, style: number): string => {
      const code = c.codePointAt(0) as number;
      if (style === 1) return `&#x${code.toString(16)};`;
      if (style === 2) return `&#X${code.toString(16).toUpperCase()};`;
      if (style === 3) return `&#x00${code.toString(16)};`;
      if (style === 4 && named[c] !== undefined) return `&${named[c]};`;
      return `&#${code};`;
    };
    const wrappers: Readonly<Record<string, (page: string) => string>> = {
      html: (page) => page,
      json: (page) => JSON.stringify({ e: page }),
      go: (page) =>
        JSON.stringify({ e: page })
          .replace(/&/g, "\\u0026")
          .replace(/</g, "\\u003c")
          .replace(/>/g, "\\u003e"),
      php: (page) => JSON.stringify({ e: page }).replace(/\//g, "\\/"),
      jsonInJson: (page) => JSON.stringify(JSON.stringify({ e: page })),
      goInJson: (page) => JSON.stringify(JSON.stringify({ e: page }).replace(/&/g, "\\u0026")),
    };
    const quoted = fc.record({
      units: fc.array(fc.tuple(fc.constantFrom(...alphabet), fc.nat(9)), { minLength: 5, maxLength: 14 }),
      backslashAt: fc.nat(),
      before: fc.constantFrom(...'tnu"/&\\bx'),
      wrapper: fc.constantFrom(...Object.keys(wrappers)),
    });
    let checked = 0;
    fc.assert(
      fc.property(quoted, ({ units, backslashAt, before, wrapper }) => {
        const at = backslashAt % (units.length + 1);
        const all: ReadonlyArray<readonly [string, number]> = [
          ["Q", 9],
          ["7", 9],
          ...units.slice(0, at),
          ["\\", 9],
          [before, 9],
          ...units.slice(at),
        ];
        const secret = all.map(([c]) => c).join("");
        // Styles 0 to 4 an entity, 5 to 9 the character as it is (never for & < > " ').
        const echoed = all
          .map(([c, style]) => ("&<>\"'".includes(c) || style < 5 ? entity(c, style) : c))
          .join("");
        const wrap = wrappers[wrapper] as (page: string) => string;
        expect(scrub(wrap(`<p>PRE ${echoed} POST</p>`), [secret])).toBe(wrap("<p>PRE [redacted] POST</p>"));
        checked++;
      }),
      { seed: 20261207, numRuns: 1500 },
    );
    expect(checked).toBe(1500);
  });
});
