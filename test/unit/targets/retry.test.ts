import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../../src/io/retryAfter.js";
import { partsToSend } from "../../../src/io/targets/chat.js";
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

  it("reads every HTTP date format as GMT (RFC 9110 5.6.7), asctime's too, whatever the machine's time zone", () => {
    const now = Date.parse("1994-11-06T08:49:07Z");
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      for (const value of [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
      ])
        expect(parseRetryAfter(value, now), value).toBe(30);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it("reads a Retry-After that is neither seconds nor an HTTP date as no wait (the backoff applies)", () => {
    const now = Date.parse("2026-11-22T20:00:00Z");
    for (const value of ["", " ", "-1", "-5", "0x10", "1e3", "5, 5", "soon", "Infinity"])
      expect(parseRetryAfter(value, now), JSON.stringify(value)).toBeUndefined();
  });

  it("reads text that Date.parse takes for a date but is none (no day, month, year, time and zone) as no wait", () => {
    const now = Date.parse("2026-11-22T20:00:00Z");
    // Date.parse: "retry 10" is 1 October 2001 (an immediate retry), "wait 2030" 1 January 2030 (years).
    for (const value of [
      "retry 10",
      "wait 2030",
      "May 5",
      "Sun, 22 Nov 2026 20:00:30",
      "2026-11-22T20:00:30Z",
    ])
      expect(parseRetryAfter(value, now), JSON.stringify(value)).toBeUndefined();
    // A date as the Internet Message Format writes it still counts: no weekday, a numeric zone, UTC.
    for (const value of [
      "22 Nov 2026 20:00:30 +0000",
      "Sun, 22 Nov 2026 20:00:30 UTC",
      "Sun, 22 Nov 2026 21:00:30 +0100",
    ])
      expect(parseRetryAfter(value, now), value).toBe(30);
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

  it("counts the first step's retries on from the attempts made elsewhere (a delivery handed on), the next steps' from none", async () => {
    const waits: Array<[number, number]> = [];
    const run = retryingSteps(
      DEFAULT_RETRY,
      async (ms, _signal, attempts) => void waits.push([ms, attempts]),
      () => {},
      undefined,
      2,
    );
    await expect(run(() => Promise.reject(transient))).rejects.toThrow("503 — gave up after 3 retries");
    expect(waits).toEqual([[4000, 3]]);
    waits.length = 0;
    await expect(run(() => Promise.reject(transient))).rejects.toThrow("gave up after 3 retries");
    expect(waits).toEqual([
      [1000, 1],
      [2000, 2],
      [4000, 3],
    ]);
  });

  it("tells its wait the part a step sends, and counts the attempts made elsewhere on only for that part", async () => {
    const waits: Array<[number, number]> = [];
    const wait = async (_ms: number, _signal: AbortSignal | undefined, attempts: number, part: number) =>
      void waits.push([attempts, part]);
    // Handed on with part 3 (index 2) attempted twice: the send starts there.
    const resumed = retryingSteps(DEFAULT_RETRY, wait, () => {}, undefined, 2, 2);
    await expect(resumed(() => Promise.reject(transient), 2)).rejects.toThrow("gave up after 3 retries");
    expect(waits).toEqual([[3, 2]]);
    // A send that starts elsewhere (its text split otherwise here) counts its first step's retries from none.
    waits.length = 0;
    const elsewhere = retryingSteps(DEFAULT_RETRY, wait, () => {}, undefined, 2, 2);
    await expect(elsewhere(() => Promise.reject(transient), 0)).rejects.toThrow("gave up after 3 retries");
    expect(waits).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
  });
});

describe("parts to send", () => {
  it("starts with the part a handed-on delivery retries, keeping each part's index", () => {
    const parts = ["one", "two", "three"];
    expect([...partsToSend(parts)]).toEqual([
      [0, "one"],
      [1, "two"],
      [2, "three"],
    ]);
    expect([...partsToSend(parts, 1)]).toEqual([
      [1, "two"],
      [2, "three"],
    ]);
    // Not one of the parts the text splits into here: none is known as delivered.
    expect([...partsToSend(parts, 3)]).toHaveLength(3);
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
