import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { scrub, secretPercentReadings, secretScrubber } from "../../../src/io/credentials.js";
import { percentView } from "../../../src/io/decodedView.js";
import { refusedRefresh } from "../../helpers/refusedRefresh.js";

/**
 * A server quoting a secret back URL-encoded writes it as its encoder does: .NET's `HttpUtility.UrlEncode` with
 * lowercase hex (`%2f`), Python's `urllib.parse.quote` with `/` as it is. Only `encodeURIComponent`'s form (uppercase,
 * every reserved character) and the form-encoded one were cut out, so both were shown whole.
 */
describe("scrub: a secret quoted back percent-encoded however the encoder wrote it", () => {
  const refresh = "9f8Kx2/Qw7LmZp+3RtYv0aBc/D1eF2g=";
  // .NET's HttpUtility.UrlEncode: lowercase hex.
  const dotNet = "9f8Kx2%2fQw7LmZp%2b3RtYv0aBc%2fD1eF2g%3d";
  // Python's urllib.parse.quote: / kept.
  const python = "9f8Kx2/Qw7LmZp%2B3RtYv0aBc/D1eF2g%3D";

  it("is cut out with lowercase hex, only some characters encoded, or hex of both cases, the rest kept", () => {
    for (const echoed of [
      dotNet,
      python,
      "9f8Kx2%2FQw7LmZp%2b3RtYv0aBc/D1eF2g%3d",
      "9f8Kx2/Qw7LmZp+3RtYv0aBc%2fD1eF2g=",
    ])
      expect(scrub(`GET /cb?t=${echoed}&next=%2Fhome%20page 400`, [refresh])).toBe(
        "GET /cb?t=[redacted]&next=%2Fhome%20page 400",
      );
    // A secret past ASCII: its UTF-8 in lowercase hex.
    expect(scrub("pw=p%c3%a4ss-w%c3%b6rd-1234; retry", ["päss-wörd-1234"])).toBe("pw=[redacted]; retry");
  });

  it("hides the escapes whole: each %XX is hidden with the secret it ends or starts", () => {
    expect(scrub("a%2fb%2bc9f8K%2f end", ["/b+c9f8K/"])).toBe("a[redacted] end");
    expect(scrub(`[${dotNet}][${python}]`, [refresh])).toBe("[[redacted]][[redacted]]");
  });

  it("reads each %XX, in either case, as the character it writes, mapped back to its three characters", () => {
    const text = "a%2fb%2Bc%e2%82%ACd%zz%4 %c3(%80x";
    const view = percentView(text);
    // An invalid escape, a lone or cut-short UTF-8 byte, stays as written.
    expect(view.text).toBe("a/b+c€d%zz%4 %c3(%80x");
    expect(view.spanOf(1, 2)).toEqual([1, 4]);
    expect(view.spanOf(3, 4)).toEqual([5, 8]);
    expect(view.spanOf(5, 6)).toEqual([9, 18]);
    expect(view.spanOf(1, 6)).toEqual([1, 18]);
    expect(view.spanOf(6, 7)).toEqual([18, 19]);
    expect(text.slice(...view.spanOf(7, view.text.length))).toBe("%zz%4 %c3(%80x");
    // Only the escapes of the characters asked for are read: the others stay as written.
    expect(percentView("a%2fb%20c", (c) => c === 0x2f).text).toBe("a/b%20c");
    // A form's reading: each + a space, mapped back to itself.
    const form = percentView("a+b%2Bc+", () => true, true);
    expect(form.text).toBe("a b+c ");
    expect(form.spanOf(1, 4)).toEqual([1, 6]);
    expect(form.spanOf(5, 6)).toEqual([7, 8]);
  });

  it("reads no text without an escape of a secret's character: a URL's %20, a % before no hex, no %", () => {
    const scrubbed = secretScrubber([refresh, "abcdef0123456789abcdef0123456789"]);
    const urls = Array.from(
      { length: 500 },
      (_, i) => `GET /search?q=a%20b%20${i}&p=50%25 ${i}% done %zz %4`,
    ).join("\n");
    const before = secretPercentReadings();
    expect(scrubbed(urls)).toBe(urls);
    expect(scrubbed("no escape at all")).toBe("no escape at all");
    expect(secretPercentReadings()).toBe(before);
    // With one escape of a secret's character (/, + or =): read once, and the secret hidden.
    expect(scrubbed(`${urls}\nPOST /token refresh_token=${dotNet}`)).toBe(
      `${urls}\nPOST /token refresh_token=[redacted]`,
    );
    expect(secretPercentReadings()).toBe(before + 1);
  });

  it("a secret with a space form-encoded, its space as +, beside lowercase or partial %XX, is cut out", () => {
    // The reading kept + as it is: .NET's HttpUtility.UrlEncode and Python's urlencode were shown whole.
    expect(scrub("pw=correct+horse%2bbattery%2fstaple next", ["correct horse+battery/staple"])).toBe(
      "pw=[redacted] next",
    );
    expect(scrub("password=pass+word~12&x=1", ["pass word~12"])).toBe("password=[redacted]&x=1");
    // The + of a secret with no space is still its own, and the reading with + kept still holds the others.
    expect(scrub("a=b+c9f8K%2f1 x=y+z pw=pass%20word~12", ["b+c9f8K/1", "pass word~12"])).toBe(
      "a=[redacted] x=y+z pw=[redacted]",
    );
    // The + is read as a space only for a secret with a space: no reading of a text with + for the others.
    const scrubbed = secretScrubber([refresh]);
    const before = secretPercentReadings();
    expect(scrubbed("a+b c+d")).toBe("a+b c+d");
    expect(secretPercentReadings()).toBe(before);
    const spaced = secretScrubber(["pass word~12"]);
    expect(spaced("a+b c+d")).toBe("a+b c+d");
    expect(secretPercentReadings()).toBe(before + 1);
  });

  it("a secret JSON-escaped then percent-encoded (a form's payload=) is hidden with its escape whole", () => {
    // Its own percent-encoded form, inside that of its JSON escape, was hidden alone: half the escape was left
    // (%5C[redacted]%22, [redacted]%5C%22), and the payload's JSON broken.
    const payload = (secret: string) =>
      `payload=${encodeURIComponent(JSON.stringify({ secret, ref: "main" }))}`;
    for (const secret of ["abcd/ef12\\", '"xb/bx2//', "\\abc/def1"]) {
      const out = scrub(payload(secret), [secret]);
      expect(out).toBe(payload("S").replace("S", "[redacted]"));
      expect(JSON.parse(decodeURIComponent(out.slice("payload=".length)))).toEqual({
        secret: "[redacted]",
        ref: "main",
      });
    }
  });

  it("a find ending in a literal \\ is hidden with the JSON escape it begins, in the percent and the form readings", () => {
    // The form reading dropped a find holding a \ (the secret shown whole), and the percent reading hid it up to
    // its first \, leaving the second: {"url":"/cb?t=[redacted]\"} is no JSON.
    for (const [text, secret] of [
      ['{"url":"/cb?t=ab+cd\\\\"}', "ab cd\\"],
      ['{"url":"/cb?t=ab%2Fcd\\\\"}', "ab/cd\\"],
      ['{"url":"/cb?t=ab%2fcd\\\\","n":1}', "ab/cd\\"],
    ] as const) {
      const out = scrub(text, [secret]);
      expect(out).toBe(text.replace(/ab[^\\]*\\\\/, "[redacted]"));
      expect(JSON.parse(out).url).toBe("/cb?t=[redacted]");
    }
    // A \uXXXX escape begun by the find is taken whole too.
    expect(scrub("/cb?t=ab%2fcd\\u005c next", ["ab/cd\\"])).toBe("/cb?t=[redacted] next");
  });

  it("a form reading's find ending in \\ beside another secret's escaped echo sharing that \\ hides both whole", () => {
    // The find took the second \ of \\u005c as its escape's rest, and the echoes were looked for in the text left:
    // u005cs3cr3t was no echo of \s3cr3t any more, and it was shown.
    expect(scrub('{"a":"ab+cd\\\\u005cs3cr3t"}', ["ab cd\\", "\\s3cr3t"])).toBe('{"a":"[redacted]"}');
    expect(scrub(String.raw`u+u\\u005c\\u0075\\u0075\\u0075 end`, ["u u\\", "\\uuu"])).toBe("[redacted] end");
    // The echo of \s3cr3t9 (its \ escaped twice, four backslashes) overlaps the find's \\: hidden with it as one.
    expect(scrub('{"a":"ab+cd\\\\\\\\s3cr3t9"}', ["ab cd\\", "\\s3cr3t9"])).toBe('{"a":"[redacted]"}');
    // With more secrets than one expression of their echoes is made of, alike.
    const many = Array.from({ length: 40 }, (_, i) => createHash("sha256").update(`many ${i}`).digest("hex"));
    expect(scrub('{"a":"ab+cd\\\\u005cs3cr3t"}', ["ab cd\\", "\\s3cr3t", ...many])).toBe(
      '{"a":"[redacted]"}',
    );
  });

  it("a find starting right after the \\ of a JSON escape is hidden with that \\, the JSON whole", () => {
    // The find started at the / of \/ or the " of \": {"n":"\[redacted]"}, \[ no JSON escape, is no JSON.
    for (const [text, secret, hidden] of [
      ['{"n":"\\/ab%2Bcd1"}', "/ab+cd1", '{"n":"[redacted]"}'],
      ['{"q":"\\"+Za"}', '" Za', '{"q":"[redacted]"}'],
      [
        '{"next":"https:\\/\\/h\\/cb?t=\\/my+pass1"}',
        "/my pass1",
        '{"next":"https:\\/\\/h\\/cb?t=[redacted]"}',
      ],
      // After an escaped \ (an even run), the find starts where it did.
      ['{"n":"\\\\/ab%2Bcd1"}', "/ab+cd1", '{"n":"\\\\[redacted]"}'],
    ] as const) {
      expect(scrub(text, [secret])).toBe(hidden);
      expect(() => JSON.parse(hidden)).not.toThrow();
    }
  });

  it("with 2,000 secrets a text of many escapes has the three it quotes hidden, the rest as it was", () => {
    const secrets = Array.from({ length: 2000 }, (_, i) =>
      createHash("sha256").update(`secret ${i}`).digest("base64"),
    );
    const line = "next=%2Fo%2Fr%2Fpull%2F7&sig=ab%2Bcd%3D%3D%20x\n";
    const lower = (secret: string) =>
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
    const quoted = (secret: string) => secret.replace(/\+/g, "%2B").replace(/=/g, "%3D");
    const [a, b, c] = [7, 1234, 1999].map((i) => secrets[i] as string);
    const text = `${line.repeat(300)}t=${lower(a as string)}\n${line.repeat(300)}${quoted(b as string)} ${encodeURIComponent(c as string)}\n`;
    expect(secretScrubber(secrets)(text)).toBe(
      `${line.repeat(300)}t=[redacted]\n${line.repeat(300)}[redacted] [redacted]\n`,
    );
  });

  it("a token endpoint's HTML refusal quoting the held refresh token as .NET and Python encode it shows it [redacted]", async ({
    onTestFinished,
  }) => {
    const { endpoint, message } = await refusedRefresh(
      `<p>unknown grant ${dotNet}; see /grants?id=${python}</p>`,
      [refresh],
      onTestFinished,
    );
    expect(message).toBe(
      `s: token refresh failed — ${endpoint} answered 400: <p>unknown grant [redacted]; see /grants?id=[redacted]</p>`,
    );
  });
});
