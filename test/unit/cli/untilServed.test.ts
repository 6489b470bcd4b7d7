import { describe, expect, it } from "vitest";
import { SERVED_WITHIN_MS, untilServed } from "../../../src/cli/webhook/untilServed.js";
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
