import { describe, expect, it } from "vitest";
import { withoutSecret } from "../../../src/gateway/payloadSecret.js";
import { scrub } from "../../../src/io/credentials.js";

/** Go's url.QueryEscape of Go's JSON, as Gogs writes a form's `payload=`. */
const goForm = (value: unknown) =>
  `payload=${encodeURIComponent(
    JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
  )
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%20", "+")}`;

/**
 * The percent reading decodes only the escapes of a secret's characters; the others stay as three characters,
 * whose `%` or hex digits were read as characters of their own, so a "secret" was found across one and half an
 * escape replaced.
 */
describe("a secret is not found across an escape the percent reading kept as written", () => {
  it("a Gogs body holding no secret is kept byte for byte, its %2F whole", () => {
    const body = goForm({ path: "/dead&beef1" });
    expect(body).toContain("%22%2Fdead%5Cu0026beef1%22");
    expect(withoutSecret(Buffer.from(body), "Fdead&beef1").toString()).toBe(body);
  });

  it("nor is a secret ending in the % of an escape taken (%2C read as %, 2, C)", () => {
    const body = goForm({ a: ">~", b: "x" });
    expect(body).toContain("%5Cu003e~%22%2C");
    expect(withoutSecret(Buffer.from(body), '>~"%').toString()).toBe(body);
  });

  it("the secret itself beside such an escape is still hidden, the escape whole", () => {
    const body = goForm({ path: "/dead&beef1", secret: "dead&beef1" });
    expect(withoutSecret(Buffer.from(body), "dead&beef1").toString()).toBe(
      goForm({ path: "/@", secret: "@" }).replaceAll("%40", "[redacted]"),
    );
  });

  it("a secret holding a space is hidden where Gogs writes its space as + and keeps its ~; one without a space is kept", () => {
    const body = goForm({ path: "/a b", secret: "ab cd~ef12" });
    expect(body).toContain("%22ab+cd~ef12%22");
    expect(withoutSecret(Buffer.from(body), "ab cd~ef12").toString()).toBe(
      goForm({ path: "/a b", secret: "@" }).replace("%40", "[redacted]"),
    );
    // Looked for after the space-holding secret above (its forms are remembered per secret).
    expect(withoutSecret(Buffer.from(body), "abcd~ef12").toString()).toBe(body);
  });

  it("a form-encoded body whose %2F is followed by the secret's own form less its first character is kept", () => {
    // GitHub's form payload: encodeURIComponent of its JSON, & as %26, the form Fdead%26beef1 after %2.
    const body = `payload=${encodeURIComponent(JSON.stringify({ path: "/dead&beef1" }))}`;
    expect(withoutSecret(Buffer.from(body), "Fdead&beef1").toString()).toBe(body);
    const kept = `payload=${encodeURIComponent(JSON.stringify({ secret: "Fdead&beef1" }))}`;
    expect(withoutSecret(Buffer.from(kept), "Fdead&beef1").toString()).toBe(
      `payload=${encodeURIComponent(JSON.stringify({ secret: "@" })).replace("%40", "[redacted]")}`,
    );
  });

  it("scrub leaves a reply's URL whole where only half an escape would be the secret", () => {
    expect(scrub("GET /cb?next=%2Fdead%26beef1 400", ["Fdead&beef1"])).toBe(
      "GET /cb?next=%2Fdead%26beef1 400",
    );
    expect(scrub("GET /cb?next=%2Fdead%26beef1 400", ["dead&beef1"])).toBe("GET /cb?next=%2F[redacted] 400");
    // Read with its %XX decoded (lowercase hex: no form of the secret's): %2F is no part of it.
    expect(scrub("GET /cb?next=%2Fdead%2bbeef1 400", ["Fdead+beef1"])).toBe(
      "GET /cb?next=%2Fdead%2bbeef1 400",
    );
    expect(scrub("GET /cb?next=%2Fdead%2bbeef1 400", ["dead+beef1"])).toBe("GET /cb?next=%2F[redacted] 400");
  });
});

/** PHP's json_encode with JSON_UNESCAPED_UNICODE: `/` as `\/`, non-ASCII as it is. */
describe("withoutSecret: a payload as PHP writes it with its non-ASCII unescaped", () => {
  it("hides the secret with its \\/ escapes, the rest of the body kept", () => {
    const php = (value: unknown) => JSON.stringify(value).replaceAll("/", "\\/");
    for (const secret of ["café/s3cret", "/*+é\\+"]) {
      const body = php({ secret, ref: "main" });
      expect(body).toContain("\\/");
      const kept = withoutSecret(Buffer.from(body), secret).toString();
      expect(kept).toBe('{"secret":"[redacted]","ref":"main"}');
      expect(JSON.parse(kept).secret).toBe("[redacted]");
      expect(scrub(body, [secret])).toBe(kept);
    }
  });
});

/**
 * A `\` escaped as `\\` right before the secret: the form `\/…` (as PHP writes `/`) is there from the pair's second
 * `\`, and was taken from it, leaving the pair's first `\` alone (`C:\[redacted]`), no JSON.
 */
describe("a secret after an escaped backslash: the \\\\ pair is kept whole", () => {
  for (const secret of ["/cafépw1", "/abcd"]) {
    it(`scrub and withoutSecret hide ${secret} after C:\\\\, the JSON still read`, () => {
      const text = JSON.stringify({ dir: `C:\\${secret}` });
      expect(text).toContain(`C:\\\\${secret}`);
      const scrubbed = scrub(text, [secret]);
      expect(scrubbed).toBe('{"dir":"C:\\\\[redacted]"}');
      expect(JSON.parse(scrubbed).dir).toBe("C:\\[redacted]");

      const body = JSON.stringify({ secret, dir: `C:\\${secret}` });
      const kept = withoutSecret(Buffer.from(body), secret).toString();
      expect(kept).toBe('{"secret":"[redacted]","dir":"C:\\\\[redacted]"}');
      expect(JSON.parse(kept)).toEqual({ secret: "[redacted]", dir: "C:\\[redacted]" });
      expect(kept).not.toContain(secret);
    });
  }

  it("the form \\/… after an escaped backslash and a \\ of its own is hidden with its \\", () => {
    // C:\\\/abcd: the pair, then the secret's own \/ escape.
    const text = JSON.stringify({ dir: "C:\\/abcd" }).replace("\\\\/", "\\\\\\/");
    expect(JSON.parse(text).dir).toBe("C:\\/abcd");
    expect(scrub(text, ["/abcd"])).toBe('{"dir":"C:\\\\[redacted]"}');
    expect(withoutSecret(Buffer.from(text), "/abcd").toString()).toBe('{"dir":"C:\\\\[redacted]"}');
  });
});

/**
 * A shorter secret's form inside a longer one's escaped echo: the echoes were looked for only in the text left once
 * the forms were hidden, where the find had cut the longer echo, and the rest of the longer secret was shown.
 */
describe("scrub: a longer secret's escaped echo holding a shorter one's form is hidden whole", () => {
  it("b0B/até\\/ for b0B/até/ and até/ (até\\/, PHP's form of até/, inside it)", () => {
    const text = '{"v":"b0B/até\\/"}';
    expect(JSON.parse(text).v).toBe("b0B/até/");
    expect(scrub(text, ["b0B/até/", "até/"])).toBe('{"v":"[redacted]"}');
    // Each alone as before: the shorter one's form, and the longer one's echo.
    expect(scrub(text, ["até/"])).toBe('{"v":"b0B/[redacted]"}');
    expect(scrub(text, ["b0B/até/"])).toBe('{"v":"[redacted]"}');
    // An echo adding only backslashes to the find (\\/até/, read as / escaped twice) is not hidden with it: the pair is kept.
    expect(scrub('{"v":"C:\\\\/até/"}', ["/até/"])).toBe('{"v":"C:\\\\[redacted]"}');
  });
});

/**
 * A shorter secret overlapping a longer one's escaped echo (not wholly inside it), and two secrets whose escaped
 * echoes overlap: the echo was taken only holding a find whole, and the echoes were searched past each match's
 * end, so part of the longer one was shown.
 */
describe("scrub: overlapping secrets, one written escaped, are hidden as one", () => {
  it("an echo overlapping a find, two echoes overlapping each other", () => {
    expect(scrub('{"v":"ab\\u002Bcdef1wxyz"}', ["ab+cdef1", "def1wxyz"])).toBe('{"v":"[redacted]"}');
    expect(scrub('{"v":"wxyzab\\u002Bcdef1"}', ["ab+cdef1", "wxyzab+c"])).toBe('{"v":"[redacted]"}');
    const inJson = JSON.stringify(JSON.stringify({ v: 'ab"cdef1wxyz' }));
    expect(scrub(inJson, ['ab"cdef1', "def1wxyz"])).toBe('"{\\"v\\":\\"[redacted]\\"}"');
    expect(scrub('{"v":"b0B/até\\/xyz1"}', ["b0B/até/", "até/xyz1"])).toBe('{"v":"[redacted]"}');
    // Apart, each as before; and an echo adding only backslashes to a find still leaves them.
    expect(scrub('{"v":"ab\\u002Bcdef1 def1wxyz"}', ["ab+cdef1", "def1wxyz"])).toBe(
      '{"v":"[redacted] [redacted]"}',
    );
    expect(scrub('{"v":"C:\\\\/até/xyz1"}', ["/até/xyz1"])).toBe('{"v":"C:\\\\[redacted]"}');
  });
});

/**
 * A JSON form or escaped echo found from the letter of a short escape (`\t`, `\n`) was hidden, leaving the escape's
 * `\` alone: no JSON any more, and a secret hidden that the text does not hold.
 */
describe("scrub: nothing is taken from inside an escape", () => {
  it("tab\\there\\/k3y holds here/k3y, not there/k3y; line1\\nabc\\/de12 holds no nabc/de12", () => {
    const tab = '{"m":"tab\\there\\/k3y"}';
    expect(JSON.parse(tab).m).toBe("tab\there/k3y");
    expect(scrub(tab, ["there/k3y", "here/k3y"])).toBe('{"m":"tab\\t[redacted]"}');
    expect(scrub(tab, ["there/k3y"])).toBe(tab);
    const line = '{"m":"line1\\nabc\\/de12"}';
    expect(scrub(line, ["nabc/de12"])).toBe(line);
    expect(scrub('{"m":"tab\\there\\u002Fk3y"}', ["there/k3y"])).toBe('{"m":"tab\\there\\u002Fk3y"}');
    // After an escaped \\, the letter is the text's own.
    expect(scrub('{"m":"C:\\\\there\\/k3y"}', ["there/k3y"])).toBe('{"m":"C:\\\\[redacted]"}');
  });
});
