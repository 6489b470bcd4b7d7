import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A duration longer than Node's longest timer (2^31 - 1 ms, about 24.8 days) is a user's "practically
 * never": it must not become a 1 ms timer (an instant connect timeout, call timeout or recycle).
 */
describe("durations of days (timeout, connect_timeout, recycling, keepalive)", () => {
  it("a connect, a call and an idle server are not cut short", async () => {
    const month = 30 * 24 * 3600;
    const h = ctx.hub(ctx.home, {
      fx: stdioEntry("legacy", {
        timeout: month,
        connect_timeout: month,
        keepalive_interval: month,
        idle_timeout_seconds: month,
        max_lifetime_seconds: month,
      }),
    });
    const status = await h.settled("fx");
    expect([status.state, status.lastError]).toEqual(["connected", undefined]);
    const pid = text(await h.call("fx", "pid", {}));
    expect(text(await h.call("fx", "slow", { ms: 50 }))).toBe("slept 50");
    await sleep(200);
    expect((await h.settled("fx")).state).toBe("connected");
    expect(text(await h.call("fx", "pid", {}))).toBe(pid);
  });
});
