import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BASE64, canonicalBase64 } from "../../../src/streams/signatureChecks.js";

describe("canonicalBase64 (RFC 4648 §3.5: pad bits are zero)", () => {
  it("holds exactly when the bytes encode back to the same text", () => {
    const text = fc.uint8Array({ minLength: 1, maxLength: 70 }).chain((bytes) =>
      fc.nat({ max: 15 }).map((bits) => {
        const encoded = Buffer.from(bytes).toString("base64");
        const pad = encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0;
        if (pad === 0) return encoded;
        // Sets some of the last data character's low bits (the ones past the final byte when padded).
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const at = encoded.length - pad - 1;
        const value = alphabet.indexOf(encoded[at] as string) | (bits & (pad === 1 ? 0b11 : 0b1111));
        return `${encoded.slice(0, at)}${alphabet[value]}${encoded.slice(at + 1)}`;
      }),
    );
    fc.assert(
      fc.property(text, (encoded) => {
        expect(BASE64.test(encoded)).toBe(true);
        expect(canonicalBase64(encoded)).toBe(Buffer.from(encoded, "base64").toString("base64") === encoded);
      }),
    );
  });

  it("reads every character of the alphabet at the last place", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const oneOver = [...alphabet].filter((c) => canonicalBase64(`AAAAAA${c}=`));
    const twoOver = [...alphabet].filter((c) => canonicalBase64(`AAAAA${c}==`));
    expect(oneOver.join("")).toBe("AEIMQUYcgkosw048");
    expect(twoOver.join("")).toBe("AQgw");
  });
});
