import {
  BooleanSchemaSchema,
  LegacyTitledEnumSchemaSchema,
  NumberSchemaSchema,
  PrimitiveSchemaDefinitionSchema,
  StringSchemaSchema,
  TitledMultiSelectEnumSchemaSchema,
  TitledSingleSelectEnumSchemaSchema,
  UntitledMultiSelectEnumSchemaSchema,
  UntitledSingleSelectEnumSchemaSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ZodType } from "zod";
import { summarizeZodError } from "./transportErrors.js";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The kind of form field a field's `type` (and `enum`, `oneOf`, `items`) says it is, whose schema then
 * names what else is wrong with it; undefined for a field of no kind a form has (an object, a list of free
 * text, no type).
 */
function fieldKind(field: Record<string, unknown>): ZodType | undefined {
  switch (field.type) {
    case "boolean":
      return BooleanSchemaSchema;
    case "number":
    case "integer":
      return NumberSchemaSchema;
    case "string":
      if ("oneOf" in field) return TitledSingleSelectEnumSchemaSchema;
      if ("enumNames" in field) return LegacyTitledEnumSchemaSchema;
      return "enum" in field ? UntitledSingleSelectEnumSchemaSchema : StringSchemaSchema;
    case "array": {
      const items = field.items;
      if (isObject(items) && "anyOf" in items) return TitledMultiSelectEnumSchemaSchema;
      return isObject(items) && "enum" in items ? UntitledMultiSelectEnumSchemaSchema : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * What is wrong with the first field of a form that is no valid form field: one whose type no form field
 * has is named with the kinds a form field can be; one of a form's kind, with the keyword that is wrong
 * (`requestedSchema.properties.n.minimum: expected number, received string`). Undefined when every field is
 * valid, or the request is no form.
 */
export function formFieldProblem(params: unknown): string | undefined {
  const form = params as { mode?: unknown; requestedSchema?: { properties?: unknown } } | undefined;
  if (form?.mode !== undefined && form.mode !== "form") return undefined;
  const properties = form?.requestedSchema?.properties;
  if (!isObject(properties)) return undefined;
  for (const [key, field] of Object.entries(properties)) {
    if (PrimitiveSchemaDefinitionSchema.safeParse(field).success) continue;
    const where = `requestedSchema.properties.${key}`;
    const kind = isObject(field) ? fieldKind(field) : undefined;
    const checked = kind?.safeParse(field);
    const problem = checked === undefined || checked.success ? undefined : summarizeZodError(checked.error);
    if (problem !== undefined) return `${where}.${problem}`;
    const type = (field as { type?: unknown } | null)?.type;
    return `${where} (type ${JSON.stringify(type) ?? "not given"}) is no field svc can ask for — a form field is a string, a number or integer, a boolean, or a choice of strings (enum)`;
  }
  return undefined;
}
