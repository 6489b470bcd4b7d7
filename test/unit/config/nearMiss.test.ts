import { describe, expect, it } from "vitest";
import { nearMiss } from "../../../src/config/nearMiss.js";

describe("nearMiss", () => {
  it("names a known word that differs only in case, however short (deliver: LOG)", () => {
    expect(nearMiss("LOG", ["log", "sms", "email"])).toBe("log");
    expect(nearMiss("Sms", ["log", "sms", "email"])).toBe("sms");
  });
  it("keeps misspellings of short words unguessed, and names those of longer ones", () => {
    expect(nearMiss("lgo", ["log", "sms"])).toBeUndefined();
    expect(nearMiss("colaesce", ["coalesce", "events"])).toBe("coalesce");
    expect(nearMiss("Evnts", ["coalesce", "events"])).toBe("events");
  });
});
