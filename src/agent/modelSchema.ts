import type { JsonSchema } from "./tools/tool.js";

/** The keywords the Messages API (and OpenAI's) refuse at the top level of a tool's input schema. */
const TOP_LEVEL_REFUSED = ["allOf", "anyOf", "oneOf"] as const;

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
 * keywords themselves are returned as JSON for the description. The MCP server still checks the arguments
 * against its own schema.
 */
export function modelToolSchema(schema: JsonSchema): ModelToolSchema {
  const present = TOP_LEVEL_REFUSED.filter((key) => Array.isArray(schema[key]));
  if (present.length === 0) return { schema };
  const rest: Record<string, unknown> = { ...schema };
  const properties = { ...propertiesOf(schema) };
  const required = new Set(requiredOf(schema));
  const leftOut: Record<string, unknown> = {};
  for (const key of present) {
    const branches = schema[key] as unknown[];
    leftOut[key] = branches;
    delete rest[key];
    for (const branch of branches)
      for (const [name, property] of Object.entries(propertiesOf(branch))) properties[name] ??= property;
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
  return `${description}\n\nThe arguments must also match ${leftOut} (left out of the schema: the model API takes no allOf, anyOf or oneOf at its top level).`;
}
