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

// `L`, `#` and `W` in the day fields are said by cronFieldHints.ts (test/unit/machines/cronScheduler.test.ts);
// here, what the parser refuses elsewhere, in its own words before.
describe("a cron field the parser refuses is said with what to write, not the parser's words", () => {
  it("W, # or L outside the day fields says where it goes", () => {
    // Before: `Invalid characters, got value: 15W` and the like.
    expect(refusal("0 15W * * *")).toContain(
      '(hour field "15W": W (the weekday nearest a day, as Quartz writes it) would go in the day-of-month field, the third, where svc does not read it either — write a number 0-23 here',
    );
    expect(refusal("15W * * * *")).toContain('(minute field "15W": W (the weekday nearest a day');
    expect(refusal("15W * * * *")).toContain("— write a number 0-59 here");
    expect(refusal("0 1#2 * * *")).toContain(
      '(hour field "1#2": "#" (the month\'s Nth weekday, "1#2": its second Monday) goes in the day-of-week field, the fifth)',
    );
    // In the month field too, where a word is read as a month's name first.
    for (const month of ["L", "5L"])
      expect(refusal(`0 0 * ${month} *`)).toContain(
        `(month field "${month}": L (the month's last day) goes in the day-of-month field ("0 0 L * *"), or after a weekday in the day-of-week field ("5L"))`,
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

  it("a value, list or step the parser cannot read says how that field is written", () => {
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
    expect(refusal("0 9 1-2-3 * *")).toContain('(day-of-month field "1-2-3": a range has two ends');
  });
});
