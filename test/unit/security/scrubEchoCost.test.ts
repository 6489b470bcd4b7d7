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
