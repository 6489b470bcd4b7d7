import { describe, expect, it } from "vitest";
import { createFixedWindowLimiter } from "../../../src/streams/rateLimiter.js";

const MINUTE = 60_000;

function limiterAt(start: number, limit = 3) {
  let t = start;
  const limiter = createFixedWindowLimiter({ limit, windowMs: MINUTE, now: () => t });
  return {
    limiter,
    set: (ms: number) => {
      t = ms;
    },
  };
}

const take = (n: number, f: () => boolean) => Array.from({ length: n }, f);

describe("fixed-window rate limiter (spec 8: per route, per minute)", () => {
  it("allows `limit` requests per window and refuses the rest", () => {
    const { limiter } = limiterAt(5 * MINUTE + 10);
    expect(take(5, () => limiter.tryAcquire("github"))).toEqual([true, true, true, false, false]);
  });

  it("isSpent tells a spent window from an open or closed one, and counts nothing", () => {
    const { limiter, set } = limiterAt(0, 2);
    expect(limiter.isSpent("r")).toBe(false);
    expect(take(5, () => limiter.isSpent("r"))).toEqual([false, false, false, false, false]);
    expect(take(2, () => limiter.tryAcquire("r"))).toEqual([true, true]);
    expect(limiter.isSpent("r")).toBe(true);
    expect(limiter.isSpent("other")).toBe(false);
    set(MINUTE);
    expect(limiter.isSpent("r")).toBe(false);
    expect(limiter.tryAcquire("r")).toBe(true);
  });

  it("counts each route on its own", () => {
    const { limiter } = limiterAt(0, 1);
    expect(limiter.tryAcquire("a")).toBe(true);
    expect(limiter.tryAcquire("b")).toBe(true);
    expect(limiter.tryAcquire("a")).toBe(false);
  });

  it("a window starts at the route's first request, so a burst across a clock minute gets one budget", () => {
    const { limiter, set } = limiterAt(2 * MINUTE - 1);
    expect(take(2, () => limiter.tryAcquire("r"))).toEqual([true, true]);
    set(2 * MINUTE + 5);
    expect(take(2, () => limiter.tryAcquire("r"))).toEqual([true, false]);
    set(3 * MINUTE - 2);
    expect(limiter.tryAcquire("r")).toBe(false);
    set(3 * MINUTE - 1);
    expect(take(4, () => limiter.tryAcquire("r"))).toEqual([true, true, true, false]);
  });

  it("each route's window starts at its own first request", () => {
    const { limiter, set } = limiterAt(0, 1);
    expect(limiter.tryAcquire("a")).toBe(true);
    set(MINUTE / 2);
    expect(limiter.tryAcquire("b")).toBe(true);
    set(MINUTE);
    expect(limiter.tryAcquire("a")).toBe(true);
    expect(limiter.tryAcquire("b")).toBe(false);
  });

  it("starts a fresh count after a long pause", () => {
    const { limiter, set } = limiterAt(0, 1);
    expect(limiter.tryAcquire("r")).toBe(true);
    set(10 * MINUTE + 5);
    expect(limiter.tryAcquire("r")).toBe(true);
    expect(limiter.tryAcquire("r")).toBe(false);
  });

  it("a limit of 0 refuses everything", () => {
    const { limiter } = limiterAt(0, 0);
    expect(limiter.tryAcquire("r")).toBe(false);
  });
});
