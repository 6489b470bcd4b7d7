import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../../src/io/stores/cronStore.js";

function refusal(text: string): string {
  try {
    parseSchedule(text);
  } catch (err) {
    return (err as Error).message;
  }
  return "accepted";
}

describe("a cron field the parser refuses is said with what to write, not the parser's words", () => {
  it("W, which svc does not read, is named as the nearest-weekday extension", () => {
    // Before: `day-of-month field "15W": Invalid characters, got value: 15W`.
    expect(refusal("0 0 15W * *")).toBe(
      'schedule "0 0 15W * *": not a valid cron expression (day-of-month field "15W": W (the weekday nearest a day, as Quartz writes it) is not read — write the days themselves ("15", "1-5"))',
    );
    expect(refusal("0 0 LW * *")).toContain('day-of-month field "LW": W (the weekday nearest a day');
  });

  it("a # occurrence out of 1-5, without its weekday, in another field or combined is said as such", () => {
    // Before: `Constraint error, invalid dayOfWeek occurrence number (#)`.
    for (const schedule of ["0 0 * * 1#6", "0 0 * * 1#0", "0 0 * * 1#", "0 0 * * #2"]) {
      expect(refusal(schedule)).toContain(
        `(day-of-week field "${schedule.split(" ")[4]}": "#" joins a weekday and which of its occurrences in the month it is, 1-5 ("1#2": the second Monday))`,
      );
    }
    expect(refusal("0 0 1#2 * *")).toContain('day-of-month field "1#2": "#" (the month\'s Nth weekday');
    expect(refusal("0 0 * * 1#2,3")).toContain("stands alone in its field, without a list, range, step or L");
    expect(refusal("0 0 * * 1-5#2")).toContain("stands alone in its field");
  });

  it("an L in the wrong place says where L goes", () => {
    expect(refusal("0 0 * * L")).toContain(
      '(day-of-week field "L": L alone is the month\'s last day and goes in the day-of-month field ("0 0 L * *")',
    );
    expect(refusal("0 0 * * 8L")).toContain(
      `(day-of-week field "8L": L follows a weekday's number, 0-7 ("5L"`,
    );
    expect(refusal("0 0 15L * *")).toContain(
      '(day-of-month field "15L": L stands alone in the day-of-month field',
    );
    expect(refusal("0 L * * *")).toContain(
      '(hour field "L": L (the month\'s last day) goes in the day-of-month field',
    );
  });

  it("a doubled wildcard is named, and the extensions svc reads stay accepted", () => {
    expect(refusal("0 0 ** * *")).toContain(
      '(day-of-month field "**": "*" stands alone, or before a step ("*/5"))',
    );
    for (const schedule of ["0 0 L * *", "0 0 * * 5L", "0 0 * * 1#2", "0 0 * * wed", "0 0 ? * *"]) {
      expect(refusal(schedule)).toBe("accepted");
    }
  });

  it("a value, list, range or step the parser cannot read says how that field is written", () => {
    // Before: `Invalid characters, got value: x`, `Invalid list value format`, `Invalid repeat: 1/2/3`.
    expect(refusal("x 9 * * *")).toBe(
      'schedule "x 9 * * *": not a valid cron expression (minute field "x": write a number 0-59, a range ("1-5"), a list ("1,15"), a step ("*/15") or *)',
    );
    expect(refusal("0 9 * * 1.5")).toContain(
      '(day-of-week field "1.5": write a number 0-7 (or sun-sat), a range',
    );
    expect(refusal("0 9 * * 1,2,")).toContain(
      '(day-of-week field "1,2,": a list is values separated by single commas, none at its start or end ("1,15"))',
    );
    expect(refusal("0 9 1/2/3 * *")).toContain(
      '(day-of-month field "1/2/3": a step is one "/" and a whole number',
    );
    // Before: read as the range 1-2 written high to low, "write that range as 1-31,1-2".
    expect(refusal("0 9 1-2-3 * *")).toContain(
      '(day-of-month field "1-2-3": a range is two values and one "-" ("1-5")',
    );
  });
});
