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

  it("the forms it had are still cut out", () => {
    const secret = "a b/c&d";
    expect(scrub(`raw ${secret} path a%20b%2Fc%26d form a+b%2Fc%26d`, [secret])).toBe(
      "raw [redacted] path [redacted] form [redacted]",
    );
  });
});
