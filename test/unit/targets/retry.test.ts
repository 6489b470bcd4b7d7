import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../../src/io/targets/httpJson.js";
import { DEFAULT_RETRY, retryDelayMs, retryingSteps } from "../../../src/io/targets/retry.js";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { tokenCache } from "../../../src/io/targets/tokenCache.js";

const transient = new DeliveryError("503", true);

describe("retry policy", () => {
  it("doubles from 1 s and caps at 30 s", () => {
    const policy = { ...DEFAULT_RETRY, retries: 10 };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(policy, n, transient))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });

  it("stops after the configured retries and never retries permanent or foreign errors", () => {
    expect(retryDelayMs(DEFAULT_RETRY, 3, transient)).toBeUndefined();
    expect(retryDelayMs(DEFAULT_RETRY, 0, new DeliveryError("400", false))).toBeUndefined();
    expect(retryDelayMs(DEFAULT_RETRY, 0, new Error("bug"))).toBeUndefined();
  });

  it("waits the platform's Retry-After, unless it is longer than 5 minutes", () => {
    expect(retryDelayMs(DEFAULT_RETRY, 0, new DeliveryError("429", true, 12.5))).toBe(12500);
    expect(retryDelayMs(DEFAULT_RETRY, 0, new DeliveryError("429", true, 3600))).toBeUndefined();
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-22T20:00:00Z");
    expect(parseRetryAfter("5", now)).toBe(5);
    expect(parseRetryAfter("Sun, 22 Nov 2026 20:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter(" 2.5 ", now)).toBe(2.5);
    expect(parseRetryAfter("Sun, 22 Nov 2026 19:59:00 GMT", now)).toBe(0);
  });

  it("reads a Retry-After that is neither seconds nor an HTTP date as no wait (the backoff applies)", () => {
    const now = Date.parse("2026-11-22T20:00:00Z");
    for (const value of ["", " ", "-1", "-5", "0x10", "1e3", "5, 5", "soon", "Infinity"])
      expect(parseRetryAfter(value, now), JSON.stringify(value)).toBeUndefined();
  });

  it("runs a step until it succeeds, sleeping between attempts (injected sleep)", async () => {
    const slept: number[] = [];
    let calls = 0;
    const run = retryingSteps(
      DEFAULT_RETRY,
      async (ms) => void slept.push(ms),
      () => {},
    );
    const result = await run(async () => {
      calls++;
      if (calls < 3) throw transient;
      return "sent";
    });
    expect(result).toBe("sent");
    expect(slept).toEqual([1000, 2000]);
  });
});

describe("token cache", () => {
  it("reuses a token until shortly before it expires, sharing one fetch between concurrent callers", async () => {
    let clock = 0;
    let fetches = 0;
    const cache = tokenCache(
      async () => ({ token: `t${++fetches}`, expiresInSeconds: 7200 }),
      () => clock,
    );
    expect(await Promise.all([cache.get(), cache.get()])).toEqual(["t1", "t1"]);
    clock = (7200 - 301) * 1000;
    expect(await cache.get()).toBe("t1");
    clock = (7200 - 299) * 1000;
    expect(await cache.get()).toBe("t2");
    cache.invalidate();
    expect(await cache.get()).toBe("t3");
  });
});
