import { describe, expect, it } from "vitest";
import { scrub } from "../../../src/io/credentials.js";

/**
 * A secret beginning with `\` was looked for as `(?:\\\\)+` from every place in a run of backslashes, each way of
 * sharing the run out among its units tried in turn: `\abcd1` on 3,200 backslashes took 12 s, `\\ab` on 800 15 s (on
 * 50,000, it did not finish in minutes): these cases took minutes in all, past the test's timeout.
 */
describe("scrub: a secret beginning with \\ on a long run of backslashes", () => {
  it("is looked for in a pass or two over the run, and the forms the run holds are hidden as before", () => {
    for (const [secret, run] of [
      ["\\abcd1", 3_200],
      ["\\\\ab", 800],
      ["\\\\ab", 1_600],
    ] as const) {
      const text = `x${"\\".repeat(run)}`;
      expect(scrub(text, [secret])).toBe(text);
      // Such a run with the rest of the secret after it: an echo of it at the run's end.
      expect(scrub(`${text}${secret.replaceAll("\\", "")} y`, [secret])).toMatch(/^x\\*\[redacted\] y$/);
    }
    // Its JSON forms: a \u005c for its \, an escaped letter after it (also escaped twice).
    expect(scrub('{"k":"\\\\abcd1"}', ["\\abcd1"])).toBe('{"k":"[redacted]"}');
    expect(scrub('{"k":"\\u005cabcd1"}', ["\\abcd1"])).toBe('{"k":"[redacted]"}');
    expect(scrub('{"k":"\\\\\\u0061bcd1"}', ["\\abcd1"])).toBe('{"k":"[redacted]"}');
    expect(scrub('"{\\"k\\":\\"\\\\\\\\\\\\u0061bcd1\\"}"', ["\\abcd1"])).toBe(
      '"{\\"k\\":\\"[redacted]\\"}"',
    );
    expect(scrub('{"k":"\\\\\\\\ab"}', ["\\\\ab"])).toBe('{"k":"[redacted]"}');
    expect(scrub('{"k":"\\\\\\u005cab"}', ["\\\\ab"])).toBe('{"k":"[redacted]"}');
  });
});

/**
 * A text with a find and a `\` is also looked through as given for escaped echoes holding a find; each echo was
 * checked against every find, and a secret's echo matches each place it is written as it is too, so a line of
 * 111,000 of them took 73 s (a gateway's webhook body of 100,000 froze it for 70 s). Each case here took longer
 * than the test's timeout so.
 */
describe("scrub: a text of many finds and a backslash", () => {
  it("costs a pass over it: 111,000 finds on a 1 MB line, 100,000 in a webhook body, 50 secrets on 1 MB", () => {
    const line = `${"abcd1234,".repeat(111_000)}\\`;
    expect(line.length).toBe(999_001);
    expect(scrub(line, ["abcd1234"])).toBe(`${"[redacted],".repeat(111_000)}\\`);
    const body = `{"note":"C:\\\\tmp","x":"${"abcd1234,".repeat(100_000)}"}`;
    expect(scrub(body, ["abcd1234"])).toBe(`{"note":"C:\\\\tmp","x":"${"[redacted],".repeat(100_000)}"}`);
    // Fifty secrets, each written as it is and, one time in ten, with its first letter \u-escaped.
    const secrets = Array.from({ length: 50 }, (_, i) => `s${i}cr3t-${(i * 7919).toString(36)}-k3y`);
    const parts: string[] = [];
    for (let i = 0; parts.length * 24 < 1_000_000; i++) {
      const secret = secrets[i % 50] as string;
      parts.push(i % 10 === 0 ? `\\u0073${secret.slice(1)} \\u00e9` : `${secret} \\u00e9`);
    }
    expect(scrub(parts.join(" "), secrets)).toBe(parts.map(() => "[redacted] \\u00e9").join(" "));
  });
});
