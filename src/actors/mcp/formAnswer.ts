/**
 * Checks one typed answer of an elicitation form against its field's schema, as MCP defines form fields
 * (string with minLength/maxLength/format, number/integer with minimum/maximum, choices, multi-select).
 * Pure: the terminal asks again with the reason when it returns one.
 */

export interface CheckedField {
  readonly type?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly format?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function realDay(text: string): boolean {
  const at = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === text;
}

function formatProblem(format: string | undefined, text: string): string | undefined {
  if (format === "email" && !EMAIL.test(text)) return "expected an email address";
  if (format === "uri" && !(/^[a-z][a-z0-9+.-]*:/i.test(text) && URL.canParse(text)))
    return "expected a URI (such as https://example.com)";
  // Date.parse rolls 2025-02-30 over to March: a real day reads back as itself.
  if (format === "date" && !(DATE.test(text) && realDay(text))) return "expected a date as YYYY-MM-DD";
  if (format === "date-time" && !(DATE_TIME.test(text) && !Number.isNaN(Date.parse(text))))
    return "expected a date and time such as 2025-01-31T09:30:00Z";
  return undefined;
}

/**
 * Why `value` (the answer as the schema types it) does not fit `field`, or undefined when it does.
 * `allowed` lists the values of a choice field (empty for a free field).
 */
export function answerProblem(
  field: CheckedField,
  value: string | number | boolean | string[],
  allowed: readonly string[],
): string | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return "expected a number";
    if (field.type === "integer" && !Number.isInteger(value)) return "expected a whole number";
    if (field.minimum !== undefined && value < field.minimum) return `expected at least ${field.minimum}`;
    if (field.maximum !== undefined && value > field.maximum) return `expected at most ${field.maximum}`;
    return undefined;
  }
  if (Array.isArray(value)) {
    const stray = allowed.length === 0 ? undefined : value.find((v) => !allowed.includes(v));
    if (stray !== undefined) return `"${stray}" is not one of the choices`;
    if (field.minItems !== undefined && value.length < field.minItems)
      return `expected at least ${field.minItems} choice${field.minItems === 1 ? "" : "s"}`;
    if (field.maxItems !== undefined && value.length > field.maxItems)
      return `expected at most ${field.maxItems} choice${field.maxItems === 1 ? "" : "s"}`;
    return undefined;
  }
  if (typeof value !== "string") return undefined;
  if (allowed.length > 0) return allowed.includes(value) ? undefined : "expected one of the choices";
  const length = [...value].length;
  if (field.minLength !== undefined && length < field.minLength)
    return `expected at least ${field.minLength} character${field.minLength === 1 ? "" : "s"}`;
  if (field.maxLength !== undefined && length > field.maxLength)
    return `expected at most ${field.maxLength} character${field.maxLength === 1 ? "" : "s"}`;
  return value === "" ? undefined : formatProblem(field.format, value);
}

export interface ChoiceField {
  readonly enum?: readonly unknown[];
  readonly oneOf?: ReadonlyArray<{ const?: unknown }>;
  readonly items?: {
    readonly enum?: readonly unknown[];
    readonly anyOf?: ReadonlyArray<{ const?: unknown }>;
  };
}

/** The values a choice field (single or multi-select) allows; empty for a free field. */
export function allowedValues(field: ChoiceField): string[] {
  const consts = field.oneOf ?? field.items?.anyOf;
  if (consts !== undefined) return consts.map((o) => String(o.const));
  return (field.enum ?? field.items?.enum ?? []).map(String);
}
