import { createRequire } from "node:module";
import type { Ajv2020, AnySchemaObject, ValidateFunction } from "ajv/dist/2020.js";
import { isObject, ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP } from "../../agent/schemaKeywords.js";
import { requiredAtFirstUse } from "../../requiredAtFirstUse.js";
import { nestedDeeperThan } from "../../streams/nestedDepth.js";

/**
 * The deepest nesting of objects and arrays a tool's schema may have (a property's schema is two levels
 * below its object's: `properties`, then the property). Ajv's check and the AI SDK, which copies the tool
 * list and writes it into every model request, are recursive: a schema some thousands of levels deep
 * passed the check (Ajv's stack overflow read as a dialect it does not know) and failed every run offered
 * the server's tools with `Maximum call stack size exceeded`. No real schema nests this deep.
 */
export const MAX_SCHEMA_DEPTH = 100;

/**
 * Ajv is loaded, and its validator made, at the first listing: each costs tens of milliseconds that a
 * gateway without MCP servers, and the commands that list nothing, need not pay.
 */
const ajvPackage = requiredAtFirstUse<typeof import("ajv/dist/2020.js")>("ajv/dist/2020.js");
let ajv: Ajv2020 | undefined;
function validator(): Ajv2020 {
  if (ajv !== undefined) return ajv;
  const { Ajv2020 } = ajvPackage();
  // No format is checked (2020-12 makes `format` an annotation; Ajv knows none without ajv-formats) and
  // nothing is logged: Ajv's console warnings ("unknown format ... ignored") would land in svc's output.
  ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false, logger: false });
  // esbuild's node20 target drops import attributes, so the JSON meta-schema is read with require.
  ajv.addMetaSchema(
    createRequire(import.meta.url)("ajv/dist/refs/json-schema-draft-07.json") as AnySchemaObject,
  );
  return ajv;
}

/** Keywords whose value may be `null` itself (data): kept as they are. */
const DATA = new Set(["default", "const"]);

/**
 * `schema` without the keywords it writes as `null` — which no JSON Schema keyword takes, so a model API
 * and the meta-schema refuse them — at any depth of its subschemas: mcp-go 0.23 listed a tool without
 * arguments with `"properties": null`, and a Go struct without `omitempty` or a Python model dumped with its
 * None values writes `"required": null`, `"description": null` and the like. A keyword left unset is what
 * they mean. `default` and `const` hold data, where null is a value: kept (as is the data inside `enum`
 * and `examples`, which is not walked). Likewise a keyword that maps names to subschemas written as an
 * empty list, `"properties": []`, is the empty map `{}`: PHP's json_encode writes an empty array so, as
 * WordPress's, Laravel's and Shopware's servers list a tool without arguments (OpenAI: "[] is not of type
 * 'object'"); and `"items": []` is `{}`, any item, as draft-07 reads an empty tuple. The same object when there is no such keyword; a schema is walked `levels` deep at most.
 */
export function withoutNullKeywords(schema: unknown, levels = MAX_SCHEMA_DEPTH): unknown {
  if (!isObject(schema) || levels <= 0) return schema;
  let out: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown) => {
    out ??= { ...schema };
    if (value === undefined) delete out[key];
    else out[key] = value;
  };
  for (const [key, value] of Object.entries(schema)) {
    if (DATA.has(key)) continue;
    if (value === null) {
      set(key, undefined);
    } else if ((SCHEMA_MAP.has(key) || key === "items") && Array.isArray(value) && value.length === 0) {
      set(key, {});
    } else if (ONE_SCHEMA.has(key)) {
      const fixed = withoutNullKeywords(value, levels - 1);
      if (fixed !== value) set(key, fixed);
    } else if (SCHEMA_LIST.has(key) && Array.isArray(value)) {
      const fixed = value.map((sub: unknown) => withoutNullKeywords(sub, levels - 1));
      if (fixed.some((sub, i) => sub !== value[i])) set(key, fixed);
    } else if (SCHEMA_MAP.has(key) && isObject(value)) {
      let changed = false;
      const entries = Object.entries(value).flatMap(([name, sub]) => {
        const fixed = withoutNullKeywords(sub, levels - 1);
        if (fixed !== sub || sub === null) changed = true;
        return sub === null ? [] : [[name, fixed] as const];
      });
      if (changed) set(key, Object.fromEntries(entries));
    }
  }
  return out ?? schema;
}

/**
 * Why `schema` cannot be a tool's input schema, or undefined when it can: model APIs refuse a request
 * whose tool list holds an invalid schema (every run would fail, not only calls to this tool), and MCP
 * `arguments` are an object, so a top-level `type` other than `object` cannot be called either. The
 * schema is checked against the meta-schema it declares (`$schema`: 2020-12, the MCP default, or
 * draft-07, which many servers still write; another dialect is not checked), its own shape only
 * (`validateSchema`), never a `$ref` target or a format; one nested past `MAX_SCHEMA_DEPTH` is refused first.
 */
export function inputSchemaProblem(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    return `is ${JSON.stringify(schema)?.slice(0, 40) ?? typeof schema}, not a JSON Schema object`;
  const type = (schema as Record<string, unknown>).type;
  if (type !== undefined && type !== "object" && !(Array.isArray(type) && type.includes("object")))
    return `has type ${JSON.stringify(type)}, not "object" (tool arguments are an object)`;
  if (nestedDeeperThan(schema, MAX_SCHEMA_DEPTH))
    return `nests objects or arrays deeper than ${MAX_SCHEMA_DEPTH} levels`;
  const ajv = validator();
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema) as boolean;
  } catch {
    return undefined; // a `$schema` Ajv does not know (draft-04): not ours to judge
  }
  const first = ajv.errors?.[0];
  if (valid || first === undefined) return undefined;
  const at = first.instancePath.slice(1).replaceAll("/", ".");
  return `is not a valid JSON Schema: ${at === "" ? "" : `${at} `}${first.message ?? "is invalid"}`;
}

/** Each output schema's compiled check (`null`: one Ajv cannot compile, which is not checked). */
const outputChecks = new WeakMap<object, ValidateFunction | null>();

/**
 * Why `structured` (a call's `structuredContent`) breaks the tool's `outputSchema`, or undefined when it
 * conforms. MCP: a tool that lists an output schema must answer structured content that conforms to it,
 * and clients should check it, as the MCP SDKs' clients do; missing (or `null`, a Python server's None)
 * counts as breaking it. A schema Ajv cannot compile (a `$ref` it cannot resolve) is not checked. Each
 * schema is compiled once and kept no longer than the listing that holds it (Ajv's own cache would keep
 * every schema a server ever listed).
 */
export function structuredContentProblem(
  outputSchema: Readonly<Record<string, unknown>>,
  structured: unknown,
): string | undefined {
  if (structured === undefined || structured === null) return "it has no structuredContent";
  let check = outputChecks.get(outputSchema);
  if (check === undefined) {
    const ajv = validator();
    try {
      check = ajv.compile(outputSchema);
    } catch {
      check = null;
    }
    ajv.removeSchema(outputSchema);
    outputChecks.set(outputSchema, check);
  }
  if (check === null || check(structured)) return undefined;
  const first = check.errors?.[0];
  const at = ["structuredContent", ...(first?.instancePath.split("/").slice(1) ?? [])].join(".");
  return `${at} ${first?.message ?? "is invalid"}`;
}
