import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  scrub,
  secretForms,
  secretScrubber,
  secretTextsReadAsUnits,
  WITHHELD,
} from "../../../src/io/credentials.js";

const hex = (seed: string, length = 64) =>
  createHash("sha256")
    .update(seed)
    .digest("hex")
    .repeat(Math.ceil(length / 64))
    .slice(0, length);

/** `unit` as a `\u` escape, its hex digits in `upper` case, after `backslashes` backslashes. */
const escaped = (unit: string, upper = false, backslashes = 1) => {
  const digits = unit.charCodeAt(0).toString(16).padStart(4, "0");
  return `${"\\".repeat(backslashes)}u${upper ? digits.toUpperCase() : digits}`;
};

/** Every stored subscription's secret, as thousands of subscriptions give them (64 hex characters each). */
const subscriptions = Object.freeze(Array.from({ length: 2500 }, (_, i) => hex(`subscription ${i}`)));

/** Where `text` ends a find at `to` in a `\` that begins a JSON escape (an odd run of them): past that escape. */
function pastEscape(text: string, to: number): number {
  if (text[to - 1] !== "\\") return to;
  let run = to - 1;
  while (run > 0 && text[run - 1] === "\\") run--;
  if ((to - run) % 2 === 0) return to;
  if (/^u[0-9a-fA-F]{4}/.test(text.slice(to, to + 5))) return to + 5;
  return /^[\\"/bfnrt]/.test(text.slice(to, to + 1)) ? to + 1 : to;
}

/**
 * Where `text` writes a secret holding a space as a form encoder may (`found`): each space as `+`, a `+` as `%2B`,
 * a `\` before its end as `%5C`, each other character as it is or `%XX`; and what is hidden of it (`spans`): an
 * ending `\` with the escape it begins (`pastEscape`), a find right after the `\` of an escape with that `\`.
 */
function formReadings(text: string, secrets: readonly string[]): { found: Span[]; spans: Span[] } {
  const found: Span[] = [];
  const spans: Span[] = [];
  for (const secret of secrets.filter((s) => s.includes(" "))) {
    const units = [...secret];
    const source = units
      .map((c, i) => {
        const percent = [...Buffer.from(c)]
          .map(
            (b) =>
              `%${b
                .toString(16)
                .toUpperCase()
                .padStart(2, "0")
                .replace(/[A-F]/g, (h) => `[${h}${h.toLowerCase()}]`)}`,
          )
          .join("");
        if (c === " ") return "\\+";
        if (c === "+" || (c === "\\" && i < units.length - 1)) return percent;
        return `(?:${c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}|${percent})`;
      })
      .join("");
    const at = new RegExp(source, "y");
    for (let from = 0; from < text.length; from++) {
      at.lastIndex = from;
      const read = at.exec(text);
      if (read === null) continue;
      found.push([from, from + read[0].length]);
      // A find right after the `\` of an escape (an odd run of them) with that `\`.
      let run = from;
      while (run > 0 && text[run - 1] === "\\") run--;
      spans.push([(from - run) % 2 === 1 ? from - 1 : from, pastEscape(text, from + read[0].length)]);
    }
  }
  return { found, spans };
}

type Span = [number, number];

/**
 * `text` with each of `spans` replaced by `[redacted]`, overlapping ones as one, and for each `[redacted]` where it
 * stands in the text given back and what of `text` it hides.
 */
function replacedAt(text: string, spans: readonly Span[]): { out: string; hidden: [number, Span][] } {
  let out = "";
  let from = 0;
  const hidden: [number, Span][] = [];
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0] || b[1] - a[1])) {
    if (end <= from) continue;
    if (start >= from) {
      out += text.slice(from, start);
      hidden.push([out.length, [start, end]]);
      out += "[redacted]";
    } else (hidden.at(-1) as [number, Span])[1][1] = end;
    from = end;
  }
  return { out: out + text.slice(from), hidden };
}

const replaced = (text: string, spans: readonly Span[]) => replacedAt(text, spans).out;

/** A span of `replacedAt`'s text as the span of the text given it that it covers. */
function spanIn(hidden: readonly [number, Span][], [from, to]: Span): Span {
  const place = (at: number, end: boolean) => {
    let shift = 0;
    for (const [outAt, [start, stop]] of hidden) {
      if (at <= outAt) break;
      if (at < outAt + 10) return end ? stop : start;
      shift += 10 - (stop - start);
    }
    return at - shift;
  };
  return [place(from, false), place(to, true)];
}

/**
 * What scrubbing did when one regular expression held every secret's escaped echo, unit by unit (compiling it
 * cost seconds for a thousand secrets and failed for two thousand): the reference for a few secrets. The forms and
 * form readings (`formReadings`) are found in the text as given, the escaped echoes in the text left once those
 * are hidden as found (and, holding a find and more than backslashes besides, in the text as given), and all
 * hidden at once in the text as given; a form beginning with an escape's `\` not from
 * the second `\` of an escaped pair. A form ending in `\` takes the rest of the `\u005c` escape it begins (`u005c`, nothing after
 * it), and a `\` unit's `\u005c` is tried before its backslashes, so no escape's tail is left behind; a secret's
 * first unit written with a `\` is not looked for from inside a run of backslashes.
 */
function oneExpression(text: string, secrets: readonly string[]): string {
  const kept = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  const forms = [...new Set(kept.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  const literal = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const { found, spans } = formReadings(text, kept);
  // A form beginning with an escape's `\` (not the secret as it is) is not there from the second `\` of a pair.
  const pairs = (form: string, at: number) => {
    if (!form.startsWith("\\") || kept.includes(form)) return false;
    let run = at;
    while (run > 0 && text[run - 1] === "\\") run--;
    return (at - run) % 2 === 1;
  };
  for (const form of forms)
    for (const at of text.matchAll(
      new RegExp(`${literal(form)}${form.endsWith("\\") ? "(?:u005[cC])?" : ""}`, "g"),
    )) {
      if (pairs(form, at.index)) continue;
      spans.push([at.index, at.index + at[0].length]);
      found.push([at.index, at.index + at[0].length]);
    }
  if (!text.includes("\\")) return replaced(text, spans);
  const left = replacedAt(text, found);
  // A secret's first unit written with a `\` is not looked for from inside a run of backslashes.
  const unit = (u: string, i: number) => {
    const begun = i === 0 ? "(?<!\\\\)" : "";
    const itself = u === '"' ? `${begun}\\\\+"` : u === "\\" ? `${begun}(?:\\\\\\\\)+` : literal(u);
    const digits = u
      .charCodeAt(0)
      .toString(16)
      .padStart(4, "0")
      .replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`);
    const uEscape = `${begun}\\\\+u${digits}`;
    const slash = u === "/" ? `|${begun}\\\\+/` : "";
    return `(?:${u === "\\" ? `${uEscape}|${itself}` : `${itself}|${uEscape}`}${slash})`;
  };
  const echoes = new RegExp(kept.map((s) => [...s].map(unit).join("")).join("|"), "g");
  // A longer secret's escaped echo holding a find, looked for in the text as given: hidden whole, unless it adds
  // only backslashes to the find.
  const more = (t: string) => /[^\\]/.test(t);
  if (left.out !== text)
    for (const at of text.matchAll(echoes)) {
      const [from, to] = [at.index, at.index + at[0].length];
      if (
        found.some(([s, e]) => from <= s && e <= to && (more(text.slice(from, s)) || more(text.slice(e, to))))
      )
        spans.push([from, to]);
    }
  if (!left.out.includes("\\")) return replaced(text, spans);
  for (const at of left.out.matchAll(echoes))
    spans.push(spanIn(left.hidden, [at.index, at.index + at[0].length]));
  return replaced(text, spans);
}

/** Whether `secret`, as it is, is in `text` starting or ending inside one of its escapes (past its `\\`). */
function asItIsInsideAnEscape(text: string, secret: string): boolean {
  const inside = new Set<number>();
  for (let i = 0; i < text.length; i++)
    if (text[i] === "\\") {
      const length = text[i + 1] === "u" ? 6 : 2;
      for (let k = i + 1; k < i + length; k++) inside.add(k);
      i += length - 1;
    }
  for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1))
    if (inside.has(at) || inside.has(at + secret.length)) return true;
  return false;
}

/**
 * A gateway holds every stored subscription's secret for redaction; a text with `\u` in it (a JSON log line of
 * `café`, a Windows path's `\users`) is looked through for their escaped echoes. Only the few secrets whose
 * units the text holds are matched as escaped echoes, so thousands of them neither throw nor stall it.
 */
describe("scrub: escaped echoes with thousands of secrets", () => {
  it("a text with \\u and none of 2,500 secrets is given as it is; each escaped echo of one is [redacted]", () => {
    const scrubbed = secretScrubber(subscriptions);
    for (const text of [
      'payload {"msg":"caf\\u00e9 deployed"}',
      "C:\\users\\ci\\app.log \\u2713 done",
      '{"level":"info","msg":"starting caf\\u00e9 server"}',
      // A secret's start after an escape, its units escaped later on: not one of them.
      `{"m":"\\u00${hex("subscription 7").slice(0, 40)}\\u0030"}`,
    ])
      expect(scrubbed(text)).toBe(text);

    const secret = subscriptions[1717] as string;
    const other = subscriptions[4] as string;
    const every = [...secret].map((c) => escaped(c)).join("");
    const someUpper = [...secret].map((c, i) => (i % 3 === 0 ? escaped(c, true) : c)).join("");
    const twice = [...secret].map((c, i) => (i % 2 === 0 ? escaped(c, false, 2) : c)).join("");
    // Its first units read inside an escape before it: \u00 + its first two hex digits.
    const insideAnEscape = `\\u00${secret.slice(0, 2)}${secret.slice(2, 60)}${escaped(secret[60] as string)}${secret.slice(61)}`;
    expect(scrubbed(`caf\\u00e9 ${every} end`)).toBe("caf\\u00e9 [redacted] end");
    expect(scrubbed(`C:\\users ${someUpper} and ${twice}`)).toBe("C:\\users [redacted] and [redacted]");
    expect(scrubbed(`k ${insideAnEscape} k`)).toBe("k \\u00[redacted] k");
    expect(
      scrubbed(`${every}|${other}|${other.slice(0, 10)}${escaped(other[10] as string)}${other.slice(11)}`),
    ).toBe("[redacted]|[redacted]|[redacted]");
    expect(scrub(`line \\u2713 ${every}`, subscriptions)).toBe("line \\u2713 [redacted]");
  });

  it("with the 2,500 secrets beside a few of other shapes, what it redacts is what one expression of them all did", () => {
    // Pure hex secrets, with `"`, `\`, `/`, non-ASCII or `\u` in them, among the many.
    const few = ['pw"q\\z-7/é8', "s\\u0041b/cd1", "ab12", "deadbeef/x"];
    const secrets = Object.freeze([...few, ...subscriptions]);
    const scrubbed = secretScrubber(secrets);
    const planted = [
      secretForms(few[0] as string)[2],
      'pw\\\\"q\\\\\\\\z-7\\\\/\\u00E98',
      "s\\\\u0041\\u0062\\/cd1",
      `\\u0061b\\u00312 ${escaped("d")}eadbeef\\/x`,
      [...(subscriptions[99] as string)].map((c, i) => (i === 30 ? escaped(c) : c)).join(""),
    ].join(" | ");
    // The reference is compiled with the few and the secret planted, as one with all 2,500 cannot be.
    expect(scrubbed(planted)).toBe(oneExpression(planted, [...few, subscriptions[99] as string]));
    expect(scrubbed(planted)).not.toMatch(/deadbeef|0041b/);
  });

  it("redacts the same with a few secrets and with more, each unit escaped or not at random, no secret left as it is", () => {
    const alphabet = [...'u0aF9Z+/"\\é€ '];
    const secret = fc.string({ unit: fc.constantFrom(...alphabet), minLength: 4, maxLength: 24 });
    // One unit as an encoder (or a proxy quoting it again) may write it in a JSON string.
    const written = (u: string, how: number) => {
      const quoted = u === '"' || u === "\\" ? `\\${u}` : u;
      if (how % 4 === 0) return quoted;
      if (how % 4 === 3 && u === "/") return "\\/".padStart(2 + (how % 3), "\\");
      return escaped(u, how % 2 === 0, 1 + (how % 3));
    };
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 6 }),
        fc.array(
          fc.tuple(
            fc.string({ unit: fc.constantFrom(...alphabet, "\\u00", "\\\\"), maxLength: 12 }),
            fc.nat(),
          ),
          { maxLength: 6 },
        ),
        fc.array(fc.nat(), { minLength: 24, maxLength: 24 }),
        (secrets, parts, hows) => {
          const text = parts
            .map(([filler, pick]) => {
              const chosen = secrets[pick % secrets.length] as string;
              return `${filler}${[...chosen].map((u, i) => written(u, (hows[i] as number) + pick)).join("")}`;
            })
            .join(" ");
          // Past 16 secrets, the text's units are read first and only the secrets found there matched: the same.
          // What is hidden is checked against the text read as JSON, independently of the scrubber's rules (below).
          const scrubbed = secretScrubber(secrets)(text);
          expect(secretScrubber([...secrets, ...subscriptions.slice(0, 16)])(text)).toBe(scrubbed);
          for (const s of secrets.filter((s) => s.length >= 4)) expect(scrubbed).not.toContain(s);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("leaves none of a few secrets in any string of a JSON document, and the document JSON, each unit escaped or not at random, quoted once or twice", () => {
    // Read as JSON, independently of how the scrubber finds them: no string of the scrubbed document holds a secret.
    const alphabet = [...'u0aF9Z+/"\\é€ tn\n\t'];
    const secret = fc.string({ unit: fc.constantFrom(...alphabet), minLength: 4, maxLength: 12 });
    const filler = fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 6 });
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(filler, fc.nat(), filler), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        fc.boolean(),
        (secrets, parts, hows, twice) => {
          // Each unit as an encoder may write it: as JSON.stringify does, as a \u escape, / as \/.
          const write = (value: string, seed: number) =>
            [...value]
              .map((u, i) => {
                const how = ((hows[i % 12] as number) + seed) % 3;
                if (how === 1) return escaped(u, i % 2 === 0);
                // Not quoted twice: `\\/` is read as an escaped `\` before a `/` (docs/agent.md).
                if (how === 2 && u === "/" && !twice) return "\\/";
                return JSON.stringify(u).slice(1, -1);
              })
              .join("");
          const values = parts.map(
            ([before, pick, after]) => `${before}${secrets[pick % secrets.length] as string}${after}`,
          );
          const document = `{${values.map((v, k) => `"k${k}":"${write(v, k)}"`).join(",")}}`;
          const text = twice ? JSON.stringify(document) : document;
          // A secret written as it is is hidden even where it starts or ends inside an escape, and one ending in
          // `\\` quoted twice leaves half its last backslashes (docs/agent.md): not here.
          fc.pre(!secrets.some((s) => asItIsInsideAnEscape(text, s) || (twice && s.endsWith("\\"))));
          const scrubbed = secretScrubber(secrets)(text);
          expect(secretScrubber([...secrets, ...subscriptions.slice(0, 16)])(text)).toBe(scrubbed);
          const read = JSON.parse(twice ? JSON.parse(scrubbed) : scrubbed) as Record<string, string>;
          for (const value of Object.values(read))
            for (const s of secrets)
              expect(value.includes(s), `${JSON.stringify(s)} in ${scrubbed}`).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("a key of 8,000 characters: a text with \\u that does not hold it is given as it is, one that holds it escaped is redacted", () => {
    // A service account's key in a credential-named .env value, base64 with `+` and `/` in it.
    const key = Buffer.from(hex("service account", 12_000), "hex").toString("base64").slice(0, 8000);
    const scrubbed = secretScrubber([key]);
    const webhook = '{"number": 7, "pull_request": {"title": "Fix the parser \\u2713 caf\\u00e9"}}';
    expect(scrubbed(webhook)).toBe(webhook);
    expect(scrubbed(webhook)).toBe(webhook);
    // As .NET writes it (`+` escaped), as PHP does (`/` as `\/`), a few letters escaped, some again.
    const echoed = JSON.stringify(key)
      .slice(1, -1)
      .replaceAll("+", "\\u002B")
      .replaceAll("/", "\\/")
      .replaceAll("Q", "\\\\u0051");
    expect(echoed).toContain("\\u002B");
    expect(scrubbed(`{"a":"caf\\u00e9","key":"${echoed}"} ${echoed}`)).toBe(
      '{"a":"caf\\u00e9","key":"[redacted]"} [redacted]',
    );
    // With a few short secrets beside it, the same.
    const beside = secretScrubber([key, "smtp-pass-2024", hex("token", 40)]);
    expect(beside(webhook)).toBe(webhook);
    expect(beside(`x ${echoed} smtp\\u002dpass-2024`)).toBe("x [redacted] [redacted]");
    // A text holding most of it but not all is not redacted: it is no echo of the key.
    const most = `"${echoed.slice(0, 7000)}" \\u00e9`;
    expect(scrubbed(most)).toBe(most);
  });

  it("a key longer than one expression may spell out is matched piece by piece, as one expression of it would be", () => {
    // Keys of 1,000 to 3,000 characters with `"`, `\\`, `/` and non-ASCII in them, matched piece by piece.
    for (const length of [1_030, 2_500]) {
      const key = [...hex(`piecewise ${length}`, length)]
        .map((c, i) =>
          i % 97 === 0 ? '"' : i % 89 === 0 ? "\\" : i % 83 === 0 ? "/" : i % 79 === 0 ? "é" : c,
        )
        .join("");
      const echoed = [...JSON.stringify(key).slice(1, -1)]
        .map((c, i) => (i % 7 === 0 && c !== "\\" && c !== '"' ? escaped(c, i % 2 === 0) : c))
        .join("");
      const text = `\\u00e9 ${echoed} | ${JSON.stringify(key).slice(1, -1).replaceAll("\\", "\\\\")}`;
      expect(secretScrubber([key])(text)).toBe(oneExpression(text, [key]));
      expect(secretScrubber([key])(text)).toBe("\\u00e9 [redacted] | [redacted]");
    }
  });

  it("one OAuth token of 600 to 1,200 characters, or a few of 300 beside a 40-hex key: a text of many \\u is matched against one expression of their escaped echoes, its units not read", () => {
    // A base64url token as an OAuth server or a JWT gives it.
    const token = (seed: string, length: number) =>
      Buffer.from(hex(seed, length * 2), "hex")
        .toString("base64url")
        .slice(0, length);
    const russian = "Очередь опустела до подтверждения.".replace(/[^ .]/g, (c) => escaped(c));
    const payload = Array.from({ length: 40 }, (_, i) => `{"message":"Fix ${i}\\n\\n${russian}"}`).join(",");
    for (const secrets of [
      [token("oauth 600", 600)],
      [token("oauth 1200", 1200)],
      [hex("key", 40), token("a", 300), token("b", 300)],
    ]) {
      const scrubbed = secretScrubber(secrets);
      const before = secretTextsReadAsUnits();
      expect(scrubbed(payload)).toBe(payload);
      const echoed = [...(secrets[0] as string)]
        .map((c, i) => (i % 5 === 0 ? escaped(c, i % 2 === 0) : c))
        .join("");
      const text = `${payload} ${echoed}`;
      expect(scrubbed(text)).toBe(oneExpression(text, secrets));
      expect(scrubbed(text)).toBe(`${payload} [redacted]`);
      expect(secretTextsReadAsUnits()).toBe(before);
    }
    // Past some 1,400 units (V8 leaves a longer expression unoptimized, tens of µs a text), the units are read.
    const long = secretScrubber([token("oauth 3000", 3000)]);
    const before = secretTextsReadAsUnits();
    expect(long(payload)).toBe(payload);
    expect(secretTextsReadAsUnits()).toBe(before + 1);
  });

  it("never throws: a secret whose escaped echo cannot be matched withholds the text, naming none of it", () => {
    // Its escaped echo is too large a regular expression to compile.
    const huge = hex("huge", 20_000);
    const text = `x ${huge.replaceAll("a", "\\u0061")} y`;
    expect(() => scrub(text, [huge])).not.toThrow();
    expect(scrub(text, [huge])).toBe(WITHHELD);
    // A secret that is not well-formed UTF-16 has no percent-encoded form.
    expect(scrub("a text", ["lone \ud800 surrogate"])).toBe(WITHHELD);
    // The other texts are redacted as before.
    expect(scrub(`x ${huge} y`, [huge])).toBe("x [redacted] y");
  });
});
