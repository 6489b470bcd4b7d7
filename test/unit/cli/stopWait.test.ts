import { describe, expect, it } from "vitest";
import { defaultStopWaitSeconds } from "../../../src/cli/gatewayLifecycle.js";

describe("svc gateway stop: how long it waits by default", () => {
  it("90 s for the default drain (30 s), never under 60 s", () => {
    expect(defaultStopWaitSeconds(30)).toBe(90);
    expect(defaultStopWaitSeconds(10)).toBe(60);
    expect(defaultStopWaitSeconds(0)).toBe(60);
  });

  it("outlasts a longer drain: twice drain_timeout_seconds (agent runs, then cron runs) plus 30 s", () => {
    expect(defaultStopWaitSeconds(100)).toBe(230);
    expect(defaultStopWaitSeconds(3600)).toBe(7230);
  });
});
