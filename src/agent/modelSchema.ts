import { isObject, ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP } from "./schemaKeywords.js";
import type { JsonSchema } from "./tools/tool.js";

/**
 * The keywords the Messages API and OpenAI refuse at the top level of a tool's input schema: the
 * Messages API the three unions, OpenAI those and `enum` and `not` too ("schema must have type 'object'
 * and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), as a hand-written schema makes two
 * arguments exclusive (`"not": {"required": ["id", "name"]}`).
 */
const TOP_LEVEL_REFUSED = ["allOf", "anyOf", "oneOf", "enum", "not"] as const;
/** Of those, the ones whose branches' properties join the top level. */
const UNIONS: ReadonlySet<string> = new Set(["allOf", "anyOf", "oneOf"]);

/** The `$schema` of JSON Schema 2020-12, MCP's default dialect. */
const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

type Branch = { readonly properties?: unknown; readonly required?: unknown };

const propertiesOf = (branch: unknown): Record<string, unknown> => {
  const properties = (branch as Branch | null)?.properties;
  return properties !== null && typeof properties === "object" && !Array.isArray(properties)
    ? (properties as Record<string, unknown>)
    : {};
};
const requiredOf = (branch: unknown): string[] => {
  const required = (branch as Branch | null)?.required;
  return Array.isArray(required) ? required.filter((name): name is string => typeof name === "string") : [];
};

/**
 * `schema` with `items: {}` on every array schema that has none: OpenAI refuses a whole request offering a
 * tool with one ("Invalid schema for function 'x': In context=('properties', 'tags'), array schema missing
 * items"), as MCP servers write them (mcp-go's `WithArray` without items, for one; pydantic's tuples, with
 * `prefixItems` only). `{}` allows any item, as a missing `items` does. A draft-07 tuple (`items` as a list)
 * is written as `prefixItems`, and `rewritten.tuple` set. Only schema keywords are walked (not `enum`,
 * `const`, `default`, examples).
 */
export function withArrayItems(schema: unknown, rewritten: { tuple: boolean } = { tuple: false }): unknown {
  if (Array.isArray(schema)) {
    const items = schema.map((item) => withArrayItems(item, rewritten));
    return items.every((item, i) => item === schema[i]) ? schema : items;
  }
  if (!isObject(schema)) return schema;
  let out: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown) => {
    if (value === schema[key]) return;
    out ??= { ...schema };
    out[key] = value;
  };
  for (const key of ONE_SCHEMA) if (key in schema) set(key, withArrayItems(schema[key], rewritten));
  for (const key of SCHEMA_LIST)
    if (Array.isArray(schema[key])) set(key, withArrayItems(schema[key], rewritten));
  for (const key of SCHEMA_MAP) {
    const map = schema[key];
    if (!isObject(map)) continue;
    let changed = false;
    const entries = Object.entries(map).map(([name, sub]) => {
      const fixed = withArrayItems(sub, rewritten);
      if (fixed !== sub) changed = true;
      return [name, fixed] as const;
    });
    if (changed) set(key, Object.fromEntries(entries));
  }
  const tuple = (out ?? schema).items;
  if (Array.isArray(tuple)) {
    // Draft-07's tuple, `items: [A, B]` (zod-to-json-schema's z.tuple): OpenAI refuses it ("[{'type':
    // 'number'}, ...] is not of type 'object', 'boolean'"), and 2020-12 has no such form. It is written as
    // 2020-12 does, `prefixItems: [A, B]`, with `items` what `additionalItems` said (any item when unset).
    const fixed: Record<string, unknown> = { ...(out ?? schema) };
    const { additionalItems } = fixed;
    delete fixed.additionalItems;
    fixed.prefixItems ??= tuple;
    fixed.items = additionalItems ?? {};
    rewritten.tuple = true;
    return fixed;
  }
  const type = schema.type;
  const array = type === "array" || (Array.isArray(type) && type.includes("array"));
  // Also beside `prefixItems` (pydantic's tuple[float, float]): OpenAI reads no prefixItems and still
  // refuses the array as missing items; `items: {}` after a prefix allows any further item, as none did.
  if (array && !("items" in schema)) set("items", {});
  return out ?? schema;
}

/**
 * `branch` read as the schema it names when it is a local `$ref` into the root's `$defs` or `definitions`
 * (`{"$ref": "#/$defs/ById"}`: pydantic and zod-to-json-schema write a union's members so), following a
 * few references in a row; any other branch, or a reference svc cannot follow (another document, a name
 * not there), as it is.
 */
function resolvedBranch(root: JsonSchema, branch: unknown): unknown {
  let current = branch;
  for (let hops = 0; hops < 8 && isObject(current) && typeof current.$ref === "string"; hops++) {
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(current.$ref);
    const defs = match === null ? undefined : root[match[1] as string];
    if (match === null || !isObject(defs)) break;
    // A JSON Pointer segment: `~1` is `/`, `~0` is `~`.
    const name = (match[2] as string).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!Object.hasOwn(defs, name)) break;
    current = defs[name];
  }
  return current;
}

/**
 * `schema` read as the schema its root names when the root is a local `$ref` into its own `$defs` or
 * `definitions` (`{"$ref": "#/$defs/ReadArgs", "$defs": {...}}`, as Go's invopop/jsonschema writes a struct
 * by default and zod-to-json-schema a named schema): offered as it is, the model would see an object without
 * properties (svc adds `properties: {}`, which OpenAI requires) and no argument to fill in. The named
 * schema's keywords join the root's, whose own (`$defs` for the references inside, `$schema`, `type`) win;
 * a root with `properties` of its own, or a reference svc cannot follow, is left as it is.
 */
function withRootRefInlined(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref !== "string" || "properties" in schema) return schema;
  const named = resolvedBranch(schema, { $ref: schema.$ref });
  if (!isObject(named) || "$ref" in named) return schema;
  const { $ref: _ref, ...rest } = schema;
  return { ...named, ...rest } as JsonSchema;
}

export interface ModelToolSchema {
  readonly schema: JsonSchema;
  /** The keywords taken out of the schema, as JSON, for the tool's description; absent when none were. */
  readonly leftOut?: string;
}

/**
 * A tool's input schema as a model API takes it. The Messages API refuses a whole request offering a tool
 * whose schema has `allOf`, `anyOf` or `oneOf` at its top level ("input_schema does not support oneOf,
 * allOf, or anyOf at the top level"), and so do OpenAI and Azure OpenAI, though MCP servers publish such
 * schemas (Notion's, GitLab's). They are taken out: the properties their branches name are added to the
 * top-level ones (what every branch requires, and what an `allOf` branch requires, stays required), and the
 * keywords themselves are returned as JSON for the description. A branch that is a `$ref` into the schema's
 * own `$defs` or `definitions` counts as the schema it names, and so does a root that is one
 * (`withRootRefInlined`). An array schema without `items` gets
 * `items: {}` (`withArrayItems`), a draft-07 tuple is written in 2020-12's keywords (and a `$schema` then
 * declares 2020-12), and a schema without `properties` gets `properties: {}`. The MCP server
 * still checks the arguments against its own schema.
 */
export function modelToolSchema(listed: JsonSchema): ModelToolSchema {
  const rewritten = { tuple: false };
  const arrays = withArrayItems(withRootRefInlined(listed), rewritten) as JsonSchema;
  // A schema declaring draft-07 (or another dialect with list `items`) whose tuple is now written in
  // 2020-12's keywords declares 2020-12: under its old `$schema`, `prefixItems` means nothing and
  // `items: false` allows no item at all. One that declares none is 2020-12 already (MCP's default).
  const items =
    rewritten.tuple && "$schema" in arrays
      ? ({ ...arrays, $schema: JSON_SCHEMA_2020_12 } as JsonSchema)
      : arrays;
  // OpenAI refuses a whole request offering a tool whose schema is `{"type": "object"}` without properties
  // ("Invalid schema for function 'get_me': In context=(), object schema missing properties"), as MCP
  // servers list a tool without arguments (GitHub's get_me, mcp-go's NewTool without parameters).
  const schema: JsonSchema = "properties" in items ? items : { ...items, properties: {} };
  const present = TOP_LEVEL_REFUSED.filter((key) => key in schema);
  if (present.length === 0) return { schema };
  const rest: Record<string, unknown> = { ...schema };
  const properties = { ...propertiesOf(schema) };
  const required = new Set(requiredOf(schema));
  const leftOut: Record<string, unknown> = {};
  for (const key of present) {
    leftOut[key] = schema[key];
    delete rest[key];
    if (!UNIONS.has(key) || !Array.isArray(schema[key])) continue;
    const branches = (schema[key] as unknown[]).map((branch) => resolvedBranch(schema, branch));
    // Own keys only: a branch's `constructor` or `toString` would read as Object's and be left out.
    for (const branch of branches) {
      for (const [name, property] of Object.entries(propertiesOf(branch)))
        if (!Object.hasOwn(properties, name)) properties[name] = property;
    }
    const each = branches.map(requiredOf);
    if (key === "allOf") for (const names of each) for (const name of names) required.add(name);
    else
      for (const name of each[0] ?? []) if (each.every((names) => names.includes(name))) required.add(name);
  }
  return {
    schema: {
      ...rest,
      type: "object",
      properties,
      ...(required.size > 0 ? { required: [...required] } : {}),
    } as JsonSchema,
    leftOut: JSON.stringify(leftOut),
  };
}

/** The description a tool is offered with when `modelToolSchema` took keywords out of its schema. */
export function withLeftOut(description: string, leftOut: string | undefined): string {
  if (leftOut === undefined) return description;
  return `${description}\n\nThe arguments must also match ${leftOut} (left out of the schema: the model API takes no allOf, anyOf, oneOf, enum or not at its top level).`;
}
