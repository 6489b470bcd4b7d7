import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { secretForms, secretScrubber } from "../../../src/io/credentials.js";

const hex = (seed: string, length: number) =>
  createHash("sha256").update(seed).digest("hex").repeat(2).slice(0, length);

/**
 * The text with each `%XX` (or UTF-8 run of them) decoded, as `decodeURIComponent` reads it, and where each of its
 * units is written in the text; with `plusIsSpace`, each `+` read as a space, as a form's reader does.
 */
function percentDecoded(text: string, plusIsSpace = false): { read: string; from: number[]; to: number[] } {
  let read = "";
  const from: number[] = [];
  const to: number[] = [];
  for (let at = 0; at < text.length; ) {
    let unit = plusIsSpace && text[at] === "+" ? " " : (text[at] as string);
    let end = at + 1;
    for (let bytes = 1; bytes <= 4; bytes++) {
      const escapes = text.slice(at, at + 3 * bytes);
      if (!/^(?:%[0-9a-fA-F]{2})+$/.test(escapes) || escapes.length < 3 * bytes) break;
      try {
        unit = decodeURIComponent(escapes);
        end = at + 3 * bytes;
        break;
      } catch {
        // not one character yet: one more byte
      }
    }
    for (let k = 0; k < unit.length; k++) {
      from.push(at);
      to.push(end);
    }
    read += unit;
    at = end;
  }
  return { read, from, to };
}

/**
 * What a search for each form, longest first, finds: every place each form is written (one after the other, as
 * a search goes on past a find), and each secret in the text read with its `%XX` decoded (however the encoder wrote
 * them: lowercase, some characters as they are; a secret with a space also with each `+` a space), a find
 * overlapping another hidden with it as one `[redacted]` (so
 * no part of a secret overlapping another is left showing).
 */
function eachFormFound(text: string, secrets: readonly string[]): string {
  const kept = secrets.filter((s) => s.length >= 4);
  const forms = [...new Set(kept.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  const spans: [number, number][] = [];
  for (const form of forms)
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + form.length))
      spans.push([at, at + form.length]);
  // A secret with a space is also looked for in the form's reading, each + a space.
  for (const [decoded, searched] of [
    [percentDecoded(text), kept],
    [percentDecoded(text, true), kept.filter((secret) => secret.includes(" "))],
  ] as const)
    for (const secret of new Set(searched))
      for (
        let at = decoded.read.indexOf(secret);
        at >= 0;
        at = decoded.read.indexOf(secret, at + secret.length)
      )
        spans.push([decoded.from[at] as number, decoded.to[at + secret.length - 1] as number]);
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let from = 0;
  for (const [start, end] of spans) {
    if (end <= from) continue;
    if (start >= from) out += `${text.slice(from, start)}[redacted]`;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * A scrubber first checks a text for any of its forms in one pass (six for a 40-hex token with its base64) and
 * skips the JSON-escape match when the text has no escape that could hide a secret: what it redacts is what a
 * search for each form redacted, and a search of the text read with its `%XX` decoded for each secret.
 */
describe("scrub: one pass over the text for all forms", () => {
  const alphabet = [..."aZ09+/=-_:é€ "];
  const secret = fc.string({ unit: fc.constantFrom(...alphabet), minLength: 4, maxLength: 48 });

  it("redacts exactly what a search for each form finds, overlapping finds as one, with every form of every secret planted", () => {
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 9 }),
        fc.array(fc.tuple(fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 30 }), fc.nat()), {
          maxLength: 12,
        }),
        (secrets, parts) => {
          const forms = secrets.flatMap(secretForms);
          const text = parts.map(([filler, pick]) => `${filler}${forms[pick % forms.length]}`).join(" ");
          expect(secretScrubber(secrets)(text)).toBe(eachFormFound(text, secrets));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("with eight 40-hex credentials: a 23 KB text without them is the same string, and one's base64 inside it is [redacted]", () => {
    const credentials = Array.from({ length: 8 }, (_, i) => hex(`credential ${i}`, 40));
    const scrubbed = secretScrubber(credentials);
    const commits = Array.from({ length: 170 }, (_, i) => ({
      id: hex(`commit ${i}`, 40),
      message: `Fix the retry in worker ${i}\n\nSigned-off-by: Dev <dev@example.com>`,
    }));
    const text = JSON.stringify({ ref: "refs/heads/main", commits });
    expect(text.length).toBeGreaterThan(20_000);
    expect(scrubbed(text)).toBe(text);
    const encoded = Buffer.from(`me:${credentials[5]}`).toString("base64");
    const cut = text.length >> 1;
    const out = scrubbed(`${text.slice(0, cut)}Basic ${encoded}${text.slice(cut)}`);
    expect(out).toContain("Basic ");
    expect(out).toContain("[redacted]");
    expect(out).not.toContain(
      Buffer.from(credentials[5] as string)
        .toString("base64")
        .slice(4, 30),
    );
  });

  it("a secret \\u-escaped in a text whose other backslashes are \\n is [redacted]; only \\n leaves the text as it is", () => {
    const key = hex("key", 64);
    const escaped = [...key].map((c) => `\\u00${c.charCodeAt(0).toString(16)}`).join("");
    const scrubbed = secretScrubber([key]);
    expect(scrubbed(`{"log":"line\\nkey ${escaped}\\n"}`)).toBe('{"log":"line\\nkey [redacted]\\n"}');
    expect(scrubbed('{"log":"line\\nno key\\n"}')).toBe('{"log":"line\\nno key\\n"}');
  });
});
