import { describe, expect, it } from "vitest";
import { scrub } from "../../../src/io/credentials.js";

/**
 * An API answering a refused request with JSON that quotes what it was sent (its headers, the form fields)
 * escapes the credential as a JSON string: a token or password holding `"` or `\` was then logged in that
 * escaped form, since only the verbatim, percent- and form-encoded forms were cut out.
 */
describe("scrub: a secret quoted back inside a JSON answer", () => {
  it('is cut out when JSON escapes its " and \\', () => {
    const token = 'MM"TOK\\Z2';
    const body = JSON.stringify({ headers: { authorization: `Bearer ${token}` }, password: token });
    expect(body).not.toContain(token);
    const out = scrub(`HTTP 400 — ${body}`, [token]);
    expect(out).toBe('HTTP 400 — {"headers":{"authorization":"Bearer [redacted]"},"password":"[redacted]"}');
  });

  it("and when <, >, & and non-ASCII are \\u escapes (Go's encoding/json, Python's json.dumps)", () => {
    const secret = "pw<&>é1";
    expect(scrub('{"error":"bad password pw\\u003c\\u0026\\u003e\\u00e91"}', [secret])).toBe(
      '{"error":"bad password [redacted]"}',
    );
  });

  it("and when only <, >, & (Go) or only non-ASCII (Python) are \\u escapes", () => {
    const secret = "pw<&>é1";
    expect(scrub('{"error":"bad password pw\\u003c\\u0026\\u003eé1"}', [secret])).toBe(
      '{"error":"bad password [redacted]"}',
    );
    expect(scrub('{"error":"bad password pw<&>\\u00e91"}', [secret])).toBe(
      '{"error":"bad password [redacted]"}',
    );
  });

  it("and when / is written \\/ (PHP's json_encode escapes it by default, non-ASCII as \\u escapes)", () => {
    const key = "sk-gw/Ab+c9=";
    expect(scrub('{"error":"invalid key sk-gw\\/Ab+c9="}', [key])).toBe('{"error":"invalid key [redacted]"}');
    expect(scrub('{"error":"bad password p\\/w\\u00e91"}', ["p/wé1"])).toBe(
      '{"error":"bad password [redacted]"}',
    );
  });

  it("and when any other unit is a \\u escape, its hex in either case (.NET's System.Text.Json escapes +)", () => {
    const key = "sk-fake/ab&cd+ef1234567890XYZ";
    for (const echoed of [
      "sk-fake/ab&cd\\u002bef1234567890XYZ",
      "sk-fake/ab&cd\\u002Bef1234567890XYZ",
      "sk-fake\\/ab\\u0026cd+ef1234567890XY\\u005a",
      [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
    ])
      expect(scrub(`{"error":{"message":"key ${echoed} refused"}}`, [key])).toBe(
        '{"error":{"message":"key [redacted] refused"}}',
      );
    // Not a text that only starts like it.
    expect(scrub('{"m":"sk-fake/ab&cd\\u002bef1234567890XY"}', [key])).toBe(
      '{"m":"sk-fake/ab&cd\\u002bef1234567890XY"}',
    );
  });

  it("and when the answer is quoted inside another JSON string (a proxy's), each escape escaped again", () => {
    const key = "sk-ant/abc+def/1234567890XYZ";
    // The upstream's answer as PHP's json_encode writes it (/ as \/), quoted in a proxy's own JSON string
    // (LiteLLM's `AnthropicException - {...}`): \\/ in the text svc reads.
    const inner = `{"error":"invalid key ${key.replaceAll("/", "\\/")}"}`;
    const outer = JSON.stringify({ error: `AnthropicException - ${inner}` });
    expect(outer).toContain("sk-ant\\\\/abc");
    expect(scrub(outer, [key])).toBe(
      JSON.stringify({ error: 'AnthropicException - {"error":"invalid key [redacted]"}' }),
    );
    const unicode = JSON.stringify({ error: '{"k":"sk-\\u0061nt/abc+def/1234567890XYZ"}' });
    expect(unicode).toContain("sk-\\\\u0061nt");
    expect(scrub(unicode, [key])).not.toContain("1234567890XYZ");
  });

  it("and when a line break or tab is its short escape (\\n, \\t) beside other escapes, or escaped again", () => {
    // A PEM key, as a multi-line .env value holds it, and .NET's System.Text.Json writes it: `\n`, `+` as `\u002B`.
    const body = Array.from(
      { length: 6 },
      (_, i) => `MIIEvQIBADANBgkqhkiG9w0BAQEFAASC+${i}kcwggSjAgEAAoIBAQC/x`,
    ).join("\n");
    const pem = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`;
    const dotnet = JSON.stringify(pem).slice(1, -1).replaceAll("+", "\\u002B");
    expect(dotnet).toContain("\\n");
    expect(scrub(`{"error":"bad key","key":"${dotnet}"}`, [pem])).toBe(
      '{"error":"bad key","key":"[redacted]"}',
    );
    // The same quoted again by a proxy (`\\n`, `\\u002B`), and JSON.stringify's form quoted again (`\\n`, `\"`).
    const twice = JSON.stringify(dotnet).slice(1, -1);
    expect(scrub(`{"upstream":"{\\"key\\":\\"${twice}\\"}"}`, [pem])).toBe(
      '{"upstream":"{\\"key\\":\\"[redacted]\\"}"}',
    );
    const quoted = JSON.stringify(JSON.stringify({ key: pem }));
    expect(scrub(quoted, [pem])).toBe('"{\\"key\\":\\"[redacted]\\"}"');
    // A tab written `\t` beside a `-` written `\u002d`.
    expect(scrub('{"password":"abc\\tdef\\u002d123456"}', ["abc\tdef-123456"])).toBe(
      '{"password":"[redacted]"}',
    );
    // With more secrets than one expression of all escaped echoes is made of: the text's units are read first.
    const many = Array.from({ length: 20 }, (_, i) => `credential-${i}-0123456789abcdef`);
    expect(scrub(`{"key":"${dotnet}"}`, [pem, ...many])).toBe('{"key":"[redacted]"}');
    expect(scrub(quoted, [pem, ...many])).toBe('"{\\"key\\":\\"[redacted]\\"}"');
    expect(scrub('{"password":"abc\\tdef\\u002d123456"}', ["abc\tdef-123456", ...many])).toBe(
      '{"password":"[redacted]"}',
    );
  });

  it("and when it ends in \\ written as its \\u005c escape, also escaped again: the whole escape is cut out, and nothing after it", () => {
    const secret = "pw-1234567890ab\\";
    const many = Array.from({ length: 20 }, (_, i) => `credential-${i}-0123456789abcdef`);
    for (const secrets of [[secret], [secret, ...many]]) {
      expect(scrub('{"e":"bad pw-1234567890ab\\u005c"}', secrets)).toBe('{"e":"bad [redacted]"}');
      expect(scrub('{"e":"bad pw-1234567890ab\\u005C"}', secrets)).toBe('{"e":"bad [redacted]"}');
      // Quoted again by a proxy (`\\u005c`), and beside another escape (`\\u002d`), which only its escaped
      // echoes match.
      expect(scrub('{"e":"bad pw-1234567890ab\\\\u005c"}', secrets)).toBe('{"e":"bad [redacted]"}');
      expect(scrub('{"e":"bad pw\\\\u002d1234567890ab\\\\u005c"}', secrets)).toBe('{"e":"bad [redacted]"}');
      // What follows it keeps its escape: a `"`, and a `\` (whose `\\` the secret's form does not take).
      expect(scrub(JSON.stringify({ e: `bad ${secret}\\dir` }), secrets)).toBe(
        JSON.stringify({ e: "bad [redacted]\\dir" }),
      );
      expect(scrub(JSON.stringify({ e: `bad ${secret}"` }), secrets)).toBe(
        JSON.stringify({ e: 'bad [redacted]"' }),
      );
    }
  });

  it("and when it ends in \\ in JSON quoted in JSON: half its last backslashes are left, wherever it stands (docs/agent.md)", () => {
    // Its form as JSON quoted once matches the first half of the four backslashes: the same text is that form
    // followed by an escaped \\ in JSON quoted once, so the rest is left as it is, there as here.
    const secret = "pw-1234567890ab\\";
    const twice = (e: string) => JSON.stringify(JSON.stringify({ e }));
    expect(scrub(twice(secret), [secret])).toBe('"{\\"e\\":\\"[redacted]\\\\\\"}"');
    // Mid-string: before a character that begins no escape (a d, a digit, a space) the JSON quoted inside no
    // longer parses; before one that does, it parses with another value: \n of "name" a line break, \t of "tmp"
    // a tab, \/ a /; a line break after it reads \ and n.
    expect(scrub(twice(`${secret}dir`), [secret])).toBe('"{\\"e\\":\\"[redacted]\\\\dir\\"}"');
    for (const after of ["dir", "1x", " x"])
      expect(() => JSON.parse(JSON.parse(scrub(twice(`${secret}${after}`), [secret])))).toThrow();
    for (const [after, read] of [
      ["name", "\name"],
      ["tmp", "\tmp"],
      ["/x", "/x"],
      ["u00e9x", "éx"],
    ])
      expect(JSON.parse(JSON.parse(scrub(twice(`${secret}${after}`), [secret])))).toEqual({
        e: `[redacted]${read}`,
      });
    expect(scrub(twice(`${secret}name`), [secret])).toBe('"{\\"e\\":\\"[redacted]\\\\name\\"}"');
    const newline = scrub(twice(`${secret}\n`), [secret]);
    expect(newline).toBe('"{\\"e\\":\\"[redacted]\\\\\\\\n\\"}"');
    expect(JSON.parse(JSON.parse(newline))).toEqual({ e: "[redacted]\\n" });
  });

  it("the forms it had are still cut out", () => {
    const secret = "a b/c&d";
    expect(scrub(`raw ${secret} path a%20b%2Fc%26d form a+b%2Fc%26d`, [secret])).toBe(
      "raw [redacted] path [redacted] form [redacted]",
    );
  });
});
