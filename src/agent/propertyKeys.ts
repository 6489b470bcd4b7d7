import type { JsonSchema } from "./tools/tool.js";

/**
 * The argument names the Messages API takes at the top level of a tool's input schema: a whole request
 * offering a tool with another one fails ("tools.14.custom.input_schema.properties: Property keys should
 * match pattern '^[a-zA-Z0-9_.-]{1,64}$'"), as MCP servers built from REST APIs write them (`filter[id]`,
 * `$top`, `Account Number`). Only the top level is checked.
 */
const SAFE_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_KEY = 64;

export interface SafePropertyKeys {
  readonly schema: JsonSchema;
  /** Offered name → the tool's own name, for each top-level argument that was renamed; absent when none was. */
  readonly renamed?: ReadonlyMap<string, string>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** `name` with every character the API refuses as `_`, cut to 64 characters (`_` for an empty name). */
function safeName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, MAX_KEY);
  return safe === "" ? "_" : safe;
}

/**
 * `schema` with each top-level property whose name the Messages API refuses offered under a name it takes
 * (other characters as `_`, cut to 64; `_2`, `_3`, ... when that name is taken), `required` kept in step.
 * `renamed` maps the offered names back (`originalArguments`), so the tool gets the arguments it named.
 * A schema whose names are all taken is returned unchanged.
 */
export function withSafePropertyKeys(schema: JsonSchema): SafePropertyKeys {
  const properties = schema.properties;
  if (!isObject(properties)) return { schema };
  const names = Object.keys(properties);
  if (names.every((name) => SAFE_KEY.test(name))) return { schema };
  const taken = new Set(names.filter((name) => SAFE_KEY.test(name)));
  const renamed = new Map<string, string>();
  const offeredAs = new Map<string, string>();
  for (const name of names) {
    if (SAFE_KEY.test(name)) continue;
    const base = safeName(name);
    let offered = base;
    for (let n = 2; taken.has(offered); n++) {
      const suffix = `_${n}`;
      offered = `${base.slice(0, MAX_KEY - suffix.length)}${suffix}`;
    }
    taken.add(offered);
    renamed.set(offered, name);
    offeredAs.set(name, offered);
  }
  const rename = (name: string) => offeredAs.get(name) ?? name;
  const required = Array.isArray(schema.required)
    ? { required: schema.required.map((name) => (typeof name === "string" ? rename(name) : name)) }
    : {};
  return {
    schema: {
      ...schema,
      properties: Object.fromEntries(Object.entries(properties).map(([name, sub]) => [rename(name), sub])),
      ...required,
    },
    renamed,
  };
}

/** The model's arguments under the tool's own names (`withSafePropertyKeys`); anything else as it came. */
export function originalArguments(input: unknown, renamed: ReadonlyMap<string, string> | undefined): unknown {
  if (renamed === undefined || !isObject(input)) return input;
  if (!Object.keys(input).some((key) => renamed.has(key))) return input;
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [renamed.get(key) ?? key, value]));
}
