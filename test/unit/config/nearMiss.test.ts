import { describe, expect, it } from "vitest";
import { nearMiss } from "../../../src/config/nearMiss.js";

describe("nearMiss", () => {
  it("names a known word that differs only in case, however short (deliver: LOG)", () => {
    expect(nearMiss("LOG", ["log", "sms", "email"])).toBe("log");
    expect(nearMiss("Sms", ["log", "sms", "email"])).toBe("sms");
  });
  it("names a three-letter word one edit off (wrk for work, lgo for log), keeps shorter or further ones unguessed, and names longer words two edits off", () => {
    expect(nearMiss("wrk", ["work", "home"])).toBe("work");
    expect(nearMiss("lgo", ["log", "sms"])).toBe("log");
    expect(nearMiss("prr", ["pr", "deploys"])).toBe("pr");
    expect(nearMiss("lxx", ["log", "sms"])).toBeUndefined();
    expect(nearMiss("lg", ["log", "sms"])).toBeUndefined();
    expect(nearMiss("colaesce", ["coalesce", "events"])).toBe("coalesce");
    expect(nearMiss("Evnts", ["coalesce", "events"])).toBe("events");
  });
  it("names the one key a key written without its unit or kind begins (keepalive for keepalive_interval), none when two do", () => {
    const keys = [
      "keepalive_interval",
      "idle_timeout_seconds",
      "max_lifetime_seconds",
      "timeout",
      "connect_timeout",
    ];
    expect(nearMiss("keepalive", keys)).toBe("keepalive_interval");
    expect(nearMiss("Idle_Timeout", keys)).toBe("idle_timeout_seconds");
    expect(nearMiss("max", keys)).toBeUndefined();
    expect(nearMiss("tool", ["tool_alpha", "tool_beta"])).toBeUndefined();
  });
});
