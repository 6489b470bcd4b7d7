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

  it("a default the field's schema does not allow counts as none: an optional field is left out, a required one declines with the reason", () => {
    const schema = {
      type: "object" as const,
      properties: {
        level: { type: "integer" as const, minimum: 1, maximum: 10, default: 200 },
        status: { type: "string" as const, enum: ["active", "inactive"], default: "archived" },
        tags: {
          type: "array" as const,
          items: { type: "string" as const, enum: ["a", "b"] },
          default: ["z"],
        },
        ok: { type: "integer" as const, minimum: 1, maximum: 10, default: 10 },
      },
    };
    // Before, each was sent as it was: values the server's own form refuses.
    expect(defaultsAnswer(schema)).toEqual({ action: "accept", content: { ok: 10 } });
    expect(defaultsAnswer({ ...schema, required: ["level", "status", "ok"] })).toEqual({
      action: "decline",
      missing: [
        "level (its default 200: expected at most 10)",
        'status (its default "archived": expected one of the choices)',
      ],
    });
  });
});
