import { describe, expect, it } from "vitest";
import { defaultsAnswer } from "../../../src/actors/mcp/approvals.js";

describe("defaultsAnswer: a form answered with its fields' defaults", () => {
  it("accepts with every default, of each type, and leaves out optional fields without one", () => {
    expect(
      defaultsAnswer({
        type: "object",
        properties: {
          name: { type: "string", default: "John Doe" },
          age: { type: "integer", default: 30 },
          score: { type: "number", default: 95.5 },
          status: { type: "string", enum: ["active", "inactive"], default: "active" },
          verified: { type: "boolean", default: false },
          tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, default: ["a"] },
          note: { type: "string" },
        },
        required: ["name", "verified"],
      }),
    ).toEqual({
      action: "accept",
      content: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: false, tags: ["a"] },
    });
  });

  it("declines naming each required field that has no default", () => {
    expect(
      defaultsAnswer({
        type: "object",
        properties: {
          name: { type: "string" },
          color: { type: "string", default: "blue" },
          email: { type: "string" },
        },
        required: ["name", "color", "email"],
      }),
    ).toEqual({ action: "decline", missing: ["name", "email"] });
  });

  it("accepts an empty answer for a form with no required field and no default", () => {
    expect(defaultsAnswer({ type: "object", properties: { note: { type: "string" } } })).toEqual({
      action: "accept",
      content: {},
    });
  });

  it("a required field named like an Object.prototype member still needs its own default", () => {
    expect(
      defaultsAnswer({
        type: "object",
        properties: { toString: { type: "string" as const } },
        required: ["toString"],
      }),
    ).toEqual({ action: "decline", missing: ["toString"] });
  });
});
