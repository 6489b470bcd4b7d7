import { describe, expect, it } from "vitest";
import {
  SEEN_WITHIN_MS,
  SERVED_WITHIN_MS,
  settleMs,
  untilServed,
} from "../../../src/cli/webhook/untilServed.js";
import type { LocalAnswer } from "../../../src/io/localHttp.js";

const UNKNOWN: LocalAnswer = { status: 404, statusText: "Not Found", text: '{"error":"Unknown route"}' };
const ACCEPTED: LocalAnswer = { status: 202, statusText: "Accepted", text: '{"status":"accepted"}' };

/** A gateway that answers `answers` in turn (the last one from then on), and a sleep that only counts. */
function gateway(answers: readonly LocalAnswer[]) {
  let sent = 0;
  let slept = 0;
  return {
    post: async () => answers[Math.min(sent++, answers.length - 1)] as LocalAnswer,
    sleep: async (ms: number) => {
      slept += ms;
    },
    sent: () => sent,
    slept: () => slept,
  };
}

describe("svc webhook test with state.backend: redis: a subscription the gateway has not polled yet", () => {
  it("is sent again until the gateway serves it (404 Unknown route, then 202)", async () => {
    const gw = gateway([UNKNOWN, UNKNOWN, UNKNOWN, ACCEPTED]);
    expect(await untilServed(gw.post, gw.sleep)).toBe(ACCEPTED);
    expect(gw.sent()).toBe(4);
  });

  it("gives the 404 once the gateway's poll would have seen it (about two seconds)", async () => {
    const gw = gateway([UNKNOWN]);
    expect(await untilServed(gw.post, gw.sleep)).toBe(UNKNOWN);
    expect(gw.slept()).toBe(SERVED_WITHIN_MS);
  });

  it("any other answer is final at once, another 404 too", async () => {
    const notFound: LocalAnswer = { status: 404, statusText: "Not Found", text: '{"error":"Not found"}' };
    for (const answer of [ACCEPTED, notFound, { ...ACCEPTED, status: 401, text: "Invalid signature" }]) {
      const gw = gateway([answer, ACCEPTED]);
      expect(await untilServed(gw.post, gw.sleep)).toBe(answer);
      expect(gw.sent()).toBe(1);
    }
  });
});

describe("svc webhook test with state.backend: redis: a subscription written a moment ago", () => {
  const now = Date.parse("2026-11-30T06:00:00.000Z");
  it("waits until every gateway's poll has seen the write (a disable, a new secret or binding)", () => {
    expect(settleMs(now - 200, now)).toBe(SEEN_WITHIN_MS - 200);
    expect(settleMs(now, now)).toBe(SEEN_WITHIN_MS);
  });

  it("does not wait for an older record, one with no time, or longer than the poll takes (a clock ahead)", () => {
    expect(settleMs(now - SEEN_WITHIN_MS, now)).toBe(0);
    expect(settleMs(now - 60_000, now)).toBe(0);
    expect(settleMs(undefined, now)).toBe(0);
    expect(settleMs(Number.NaN, now)).toBe(0);
    expect(settleMs(now + 60_000, now)).toBe(SEEN_WITHIN_MS);
  });
});
