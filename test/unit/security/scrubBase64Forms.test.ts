import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64Forms, MIN_BASE64_FORM } from "../../../src/io/base64Forms.js";
import { scrub, secretForms } from "../../../src/io/credentials.js";

const b64 = (bytes: string | Uint8Array) => Buffer.from(bytes).toString("base64");
const b64url = (bytes: string | Uint8Array) => Buffer.from(bytes).toString("base64url");

/**
 * A process that prints its token in base64 (a stdio MCP server's debug output, a CLI echoing the Basic
 * credentials it sent, a model quoting the encoded key) showed it as it was: only the verbatim, URL-, form- and
 * JSON-encoded forms were cut out.
 */
describe("scrub: a secret written in base64", () => {
  const TOKEN = "ATATT3xFfGF0-jiraTOKEN-1234567890";

  it("alone, padded or not, in base64 and base64url, is [redacted] whole", () => {
    // 33 bytes: no padding; 34 bytes: "==" after the last character.
    for (const secret of [TOKEN, `${TOKEN}x`, `${TOKEN}xy`, "key>>>~~~?>?>?>?>?>~~"]) {
      const padded = b64(secret);
      for (const written of [
        padded,
        padded.replace(/=+$/, ""),
        b64url(secret),
        `${b64url(secret)}==`.slice(0, padded.length),
      ])
        expect(scrub(`token (b64): ${written} end`, [secret])).toBe("token (b64): [redacted] end");
    }
  });

  it("base64url, where base64 has + and /, is a form of its own", () => {
    const secret = "key>>>~~~?>?>?>?>?>~~";
    expect(b64(secret)).toMatch(/[+/]/);
    expect(secretForms(secret)).toContain(b64url(secret));
  });

  it("inside a longer run (Basic me@example.com:<token>), at each offset mod 3, every character made of the secret's bits alone is hidden", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (before, after) => {
        const bytes = Buffer.concat([before, Buffer.from(TOKEN), after]);
        for (const encoded of [b64(bytes), b64url(bytes)]) {
          const out = scrub(`Basic ${encoded}`, [TOKEN]).slice("Basic ".length);
          const at = out.indexOf("[redacted]");
          expect(at).toBeGreaterThanOrEqual(0);
          // What is left before and after holds a bit of the secret only where it shares a character with a neighbour.
          expect(at).toBeLessThanOrEqual(Math.ceil((8 * before.length) / 6));
          const left = out.length - at - "[redacted]".length;
          expect(left).toBeLessThanOrEqual(
            encoded.length - Math.floor((8 * (before.length + TOKEN.length)) / 6),
          );
        }
      }),
    );
    expect(scrub(b64(`me@example.com:${TOKEN}`), [TOKEN])).not.toContain(b64(TOKEN).slice(2, 30));
  });

  it(`only forms of ${MIN_BASE64_FORM} characters or more: a short secret's base64 is not looked for`, () => {
    // 8 bytes: 12 characters alone, a core of 10 inside a run.
    expect(base64Forms("pw-12345")).toEqual([]);
    expect(scrub(`cHctMTIzNDU= pw-12345`, ["pw-12345"])).toBe("cHctMTIzNDU= [redacted]");
    // 12 bytes: its 16 characters alone, and the core at offset 0; not the two of 15 characters.
    expect(base64Forms("bench-secret")).toEqual([b64("bench-secret")]);
    for (const form of base64Forms(TOKEN)) expect(form.length).toBeGreaterThanOrEqual(MIN_BASE64_FORM);
  });

  it("leaves ordinary text and other base64 as they are", () => {
    const text = `the quick brown fox ${b64("an unrelated payload, an image, a hash ".repeat(20))} {"ref":"main"}`;
    expect(scrub(text, [TOKEN, "bench-secret", "sk-proj-Abc123def456GHI789jkl012"])).toBe(text);
  });
});
