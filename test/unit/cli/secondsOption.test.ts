import { describe, expect, it } from "vitest";
import { parseSecondsOption } from "../../../src/cli/options.js";
import { MAX_TIMER_SECONDS } from "../../../src/config/timerSeconds.js";

/** `svc mcp list --timeout`, `svc mcp test --all --timeout`, `svc mcp reload --wait`, the gateway's --timeout. */
describe("parseSecondsOption", () => {
  it("a value past the longest Node.js timer counts as that longest (a longer timer fires after 1 ms)", () => {
    expect(parseSecondsOption("3000000")).toBe(MAX_TIMER_SECONDS);
    expect(parseSecondsOption("1e9", "--wait")).toBe(MAX_TIMER_SECONDS);
    expect(parseSecondsOption(String(MAX_TIMER_SECONDS))).toBe(MAX_TIMER_SECONDS);
    expect(parseSecondsOption("2.5")).toBe(2.5);
  });

  it("refuses what is no positive number of seconds, naming the flag", () => {
    expect(() => parseSecondsOption("0")).toThrow(
      '--timeout: expected a number of seconds greater than 0, got "0"',
    );
    expect(() => parseSecondsOption("soon", "--wait")).toThrow(
      '--wait: expected a number of seconds greater than 0, got "soon"',
    );
    // Decimal only, as --port and --limit: Number() would read "0x10" as 16 seconds.
    for (const text of ["0x10", " 5", "5 ", "+5", "0b11", "1_000"])
      expect(() => parseSecondsOption(text)).toThrow(
        `--timeout: expected a number of seconds greater than 0, got "${text}"`,
      );
    expect(parseSecondsOption(".5")).toBe(0.5);
    expect(parseSecondsOption("1e3")).toBe(1000);
  });

  it("a value with a unit (5s, 2m, 1h, 500ms, as other tools take it) gets the number of seconds to write", () => {
    const cases: [string, string][] = [
      ["5s", "5"],
      ["90sec", "90"],
      ["2m", "120"],
      ["2min", "120"],
      ["1.5m", "90"],
      ["1h", "3600"],
      ["500ms", "0.5"],
      ["10 s", "10"],
    ];
    for (const [text, seconds] of cases)
      expect(() => parseSecondsOption(text, "--wait")).toThrow(
        `--wait: expected a number of seconds greater than 0, got "${text}" — write the seconds alone, without a unit: --wait ${seconds}`,
      );
  });

  it("Infinity or 1e400 (no finite number) says to write a finite one, and what a huge one counts as", () => {
    for (const text of ["Infinity", "1e400", "-Infinity"])
      expect(() => parseSecondsOption(text)).toThrow(
        `--timeout: expected a number of seconds greater than 0, got "${text}" — write a finite number of seconds; one above 2147483 (about 24.8 days, the longest a timer holds) counts as 2147483`,
      );
  });
});
