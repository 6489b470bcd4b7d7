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
});
