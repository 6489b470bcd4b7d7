import { describe, expect, it } from "vitest";
import { apiToolName, recordedToolName } from "../../../src/agent/toolCallNames.js";

describe("apiToolName", () => {
  it("keeps a name the APIs take; other characters become _, cut to 64; an empty name is unknown_tool", () => {
    expect(apiToolName("mcp__files__echo")).toBe("mcp__files__echo");
    expect(apiToolName("multi_tool_use.parallel")).toBe("multi_tool_use_parallel");
    expect(apiToolName("functions.x")).toBe("functions_x");
    expect(apiToolName("")).toBe("unknown_tool");
    expect(apiToolName("a b\n😀")).toBe("a_b___");
    expect(apiToolName("x".repeat(100))).toBe("x".repeat(64));
    // Never an offered tool's name: the model's history would show that tool failing.
    expect(apiToolName("get.weather", new Set(["get_weather"]))).toBe("get_weather_unavailable");
    expect(apiToolName(`${"x".repeat(70)}.`, new Set(["x".repeat(64)]))).toBe(
      `${"x".repeat(52)}_unavailable`,
    );
  });
});

describe("recordedToolName", () => {
  it("keeps a name of up to 200 characters; a longer one is cut there, saying how long it was", () => {
    expect(recordedToolName("n".repeat(200))).toBe("n".repeat(200));
    expect(recordedToolName("n".repeat(200_000))).toBe(`${"n".repeat(200)}… (200000 chars)`);
  });

  it("does not cut between the halves of a surrogate pair", () => {
    const name = `${"n".repeat(199)}😀${"n".repeat(10)}`;
    expect(recordedToolName(name)).toBe(`${"n".repeat(199)}… (211 chars)`);
  });
});
