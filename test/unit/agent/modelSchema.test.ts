import { describe, expect, it } from "vitest";
import { modelToolSchema, withLeftOut } from "../../../src/agent/modelSchema.js";
import { originalArguments, withSafePropertyKeys } from "../../../src/agent/propertyKeys.js";
import type { JsonSchema } from "../../../src/agent/tools/tool.js";

/** Tool schemas as model APIs take them: no allOf / anyOf / oneOf at the top level. */
describe("modelToolSchema", () => {
  it("keeps a schema without them as it is", () => {
    const schema: JsonSchema = { type: "object", properties: { a: { anyOf: [{ type: "string" }] } } };
    expect(modelToolSchema(schema)).toEqual({ schema });
    expect(modelToolSchema(schema).schema).toBe(schema);
  });

  it("allOf: every branch's properties and required names join the top level", () => {
    const { schema, leftOut } = modelToolSchema({
      type: "object",
      properties: { a: { type: "string" } },
      allOf: [
        { properties: { b: { type: "number" } }, required: ["b"] },
        { if: {}, else: {} },
      ],
    });
    expect(schema).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" } },
      required: ["b"],
    });
    expect(JSON.parse(leftOut ?? "")).toEqual({
      allOf: [
        { properties: { b: { type: "number" } }, required: ["b"] },
        { if: {}, else: {} },
      ],
    });
  });

  it("oneOf with no properties of its own: the branches' properties, required only what every branch requires", () => {
    const { schema } = modelToolSchema({
      type: "object",
      oneOf: [
        { properties: { id: { type: "string" }, x: { type: "string" } }, required: ["id", "x"] },
        { properties: { slug: { type: "string" }, x: { type: "number" } }, required: ["slug", "x"] },
      ],
    });
    expect(schema).toEqual({
      type: "object",
      properties: { id: { type: "string" }, x: { type: "string" }, slug: { type: "string" } },
      required: ["x"],
    });
  });

  it("a branch's argument named as an Object method (constructor, toString) joins the top level too", () => {
    const { schema } = modelToolSchema({
      type: "object",
      anyOf: [
        { properties: { constructor: { type: "string" } }, required: ["constructor"] },
        { properties: { toString: { type: "string" } }, required: ["toString"] },
      ],
    });
    expect(schema).toEqual({
      type: "object",
      properties: { constructor: { type: "string" }, toString: { type: "string" } },
    });
  });

  it("branches that are $refs to $defs or definitions (pydantic, zod-to-json-schema unions) are read as the schemas they name", () => {
    const byDefs = modelToolSchema({
      type: "object",
      $defs: {
        ById: {
          type: "object",
          properties: { id: { type: "string" }, x: { type: "string" } },
          required: ["id", "x"],
        },
        BySlug: { $ref: "#/$defs/Slug" },
        Slug: {
          type: "object",
          properties: { slug: { type: "string" }, x: { type: "number" } },
          required: ["slug", "x"],
        },
      },
      anyOf: [{ $ref: "#/$defs/ById" }, { $ref: "#/$defs/BySlug" }],
    });
    expect(byDefs.schema.properties).toEqual({
      id: { type: "string" },
      x: { type: "string" },
      slug: { type: "string" },
    });
    expect(byDefs.schema.required).toEqual(["x"]);
    const byDefinitions = modelToolSchema({
      type: "object",
      definitions: { "a/b": { properties: { q: { type: "string" } }, required: ["q"] } },
      allOf: [
        { $ref: "#/definitions/a~1b" },
        { $ref: "#/definitions/missing" },
        { $ref: "https://x/s.json" },
      ],
    });
    expect(byDefinitions.schema.properties).toEqual({ q: { type: "string" } });
    expect(byDefinitions.schema.required).toEqual(["q"]);
  });

  it("not and enum (refused by OpenAI at the top level) are left out, and add no properties", () => {
    // A hand-written schema making two arguments exclusive.
    const { schema, leftOut } = modelToolSchema({
      type: "object",
      properties: { id: { type: "string" }, name: { type: "string" } },
      not: { required: ["id", "name"] },
      enum: [{ id: "x" }],
    });
    expect(schema).toEqual({
      type: "object",
      properties: { id: { type: "string" }, name: { type: "string" } },
    });
    expect(JSON.parse(leftOut ?? "")).toEqual({ enum: [{ id: "x" }], not: { required: ["id", "name"] } });
  });

  it("the description says what was left out", () => {
    expect(withLeftOut("Does it", undefined)).toBe("Does it");
    expect(withLeftOut("Does it", '{"anyOf":[]}')).toBe(
      'Does it\n\nThe arguments must also match {"anyOf":[]} (left out of the schema: the model API takes no allOf, anyOf, oneOf, enum or not at its top level).',
    );
  });
});

describe("withArrayItems (OpenAI refuses an array schema without items)", () => {
  it("adds items: {} wherever an array schema has none, and nowhere else", () => {
    const listed: JsonSchema = {
      type: "object",
      properties: {
        tags: { type: "array", description: "labels" },
        meta: {
          type: "array",
          items: { type: "object", properties: { value: { type: ["string", "array", "null"] } } },
        },
        pair: { type: "array", prefixItems: [{ type: "string" }] },
        fine: { type: "array", items: { type: "string" } },
        data: { type: "object", default: { type: "array" }, enum: [{ type: "array" }] },
      },
      $defs: { list: { type: "array" } },
    };
    expect(modelToolSchema(listed).schema).toEqual({
      type: "object",
      properties: {
        tags: { type: "array", description: "labels", items: {} },
        meta: {
          type: "array",
          items: { type: "object", properties: { value: { type: ["string", "array", "null"], items: {} } } },
        },
        pair: { type: "array", prefixItems: [{ type: "string" }], items: {} },
        fine: { type: "array", items: { type: "string" } },
        data: { type: "object", default: { type: "array" }, enum: [{ type: "array" }] },
      },
      $defs: { list: { type: "array", items: {} } },
    });
    // The listed schema itself is left as it was.
    expect(listed.properties).toMatchObject({ tags: { type: "array", description: "labels" } });
  });

  it("writes a draft-07 tuple (items as a list, as zod-to-json-schema writes z.tuple) as prefixItems", () => {
    const listed: JsonSchema = {
      type: "object",
      properties: {
        pages: { type: "array", minItems: 2, maxItems: 2, items: [{ type: "integer" }, { type: "array" }] },
        point: { type: "array", items: [{ type: "number" }], additionalItems: false },
      },
    };
    expect(modelToolSchema(listed).schema).toEqual({
      type: "object",
      properties: {
        pages: {
          type: "array",
          minItems: 2,
          maxItems: 2,
          prefixItems: [{ type: "integer" }, { type: "array", items: {} }],
          items: {},
        },
        point: { type: "array", prefixItems: [{ type: "number" }], items: false },
      },
    });
  });
});

describe("withSafePropertyKeys (the Messages API's top-level argument names)", () => {
  it("keeps a schema whose names all pass as it is", () => {
    const schema = { type: "object", properties: { a: {}, "b.c-d_1": {} }, required: ["a"] } as const;
    expect(withSafePropertyKeys(schema)).toEqual({ schema });
  });

  it("cuts a name past 64 characters, names an empty one _, and maps the arguments back", () => {
    const long = `${"x".repeat(70)}[]`;
    const { schema, renamed } = withSafePropertyKeys({
      type: "object",
      properties: { [long]: { type: "string" }, "": { type: "number" } },
    });
    expect(Object.keys(schema.properties as object)).toEqual(["x".repeat(64), "_"]);
    expect(originalArguments({ ["x".repeat(64)]: "v", _: 1, other: true }, renamed)).toEqual({
      [long]: "v",
      "": 1,
      other: true,
    });
    expect(originalArguments(["not", "an object"], renamed)).toEqual(["not", "an object"]);
  });
});
