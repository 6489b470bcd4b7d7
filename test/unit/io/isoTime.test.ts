import { describe, expect, it, vi } from "vitest";
import { isoTime } from "../../../src/io/isoTime.js";

describe("isoTime", () => {
  it("gives Date's toISOString text, formatting a whole time at most once per second of consecutive stamps", () => {
    const toIso = vi.spyOn(Date.prototype, "toISOString");
    const start = Date.UTC(2026, 11, 4, 18, 40, 59, 0);
    const got: string[] = [];
    try {
      // Two seconds of stamps a millisecond apart, each several times (lines of one millisecond).
      for (let ms = start; ms < start + 2000; ms += 1) for (let i = 0; i < 3; i += 1) got.push(isoTime(ms));
      expect(toIso.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      toIso.mockRestore();
    }
    const want: string[] = [];
    for (let ms = start; ms < start + 2000; ms += 1)
      for (let i = 0; i < 3; i += 1) want.push(new Date(ms).toISOString());
    expect(got).toEqual(want);
  });

  it("is the same text for any time Date takes, in any order, and refuses what Date refuses", () => {
    const max = 8.64e15;
    const times = [
      0,
      1,
      999,
      1000,
      -1,
      -999,
      -1000,
      -1001,
      1.5,
      1.999,
      -1.5,
      999.9,
      1000.2,
      max,
      max - 1,
      -max,
      -max + 1,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      Date.UTC(-1, 0, 1, 0, 0, 0, 5),
      Date.UTC(1969, 11, 31, 23, 59, 59, 500),
      Date.UTC(2026, 11, 4, 18, 40, 59, 998),
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 2000; i += 1) {
      const base = times[Math.floor(random() * times.length)] as number;
      times.push(Math.max(-max, Math.min(max, base + Math.floor((random() - 0.5) * 4000))));
    }
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    for (const bad of [Number.NaN, max + 1, -max - 1, Number.POSITIVE_INFINITY]) {
      isoTime(max);
      expect(() => isoTime(bad)).toThrow(RangeError);
    }
  });
});
