import type { z } from "zod";

/** Where an integer past 2^53 sits in config.yaml's value (its keys from the top), and its digits. */
export interface LongInteger {
  readonly path: readonly PropertyKey[];
  readonly digits: string;
}

/**
 * YAML integers (read as BigInt) as numbers, except those a number cannot hold exactly: they stay their
 * digits (text), so that a Discord or Slack id written unquoted keeps every digit. Each of those is listed in
 * `found`. Changes `value` in place.
 */
export function exactIntegers(value: unknown, found: LongInteger[] = [], at: PropertyKey[] = []): unknown {
  if (typeof value === "bigint") {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
    found.push({ path: at, digits: value.toString() });
    return value.toString();
  }
  if (Array.isArray(value)) return value.map((item, i) => exactIntegers(item, found, [...at, i]));
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value))
      (value as Record<string, unknown>)[key] = exactIntegers(item, found, [...at, key]);
  }
  return value;
}

/**
 * The issues of the integers past 2^53 (`found`, kept as their digits) written under a key that takes text
 * only (`secret: 12345678901234567890123`), which a smaller integer gets from the schema: YAML read a number,
 * and quotes make it text. Found by checking `input` again with each of them replaced by a number of its own,
 * told apart by that number in the issue whatever path the schema reports it at (`extra` merged); a key that
 * takes a number as well (a chat id) has no issue, and keeps the digits.
 */
export function longIntegersAsText(
  schema: z.ZodType,
  input: Record<string, unknown>,
  found: readonly LongInteger[],
): z.core.$ZodIssue[] {
  if (found.length === 0) return [];
  const probe = structuredClone(input);
  const digitsOf = new Map<number, string>();
  for (const [i, { path, digits }] of found.entries()) {
    const parent = path.slice(0, -1).reduce<unknown>(childAt, probe);
    const key = path.at(-1);
    if (key === undefined || typeof parent !== "object" || parent === null) continue;
    const slot = parent as Record<PropertyKey, unknown>;
    // A ${VAR}, or WEBHOOK_SECRET, may have put something else there.
    if (slot[key] !== digits) continue;
    const marker = Number.MAX_SAFE_INTEGER - i;
    slot[key] = marker;
    digitsOf.set(marker, digits);
  }
  const parsed = schema.safeParse(probe, { reportInput: true });
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue) => {
    const digits = typeof issue.input === "number" ? digitsOf.get(issue.input) : undefined;
    return issue.code === "invalid_type" && issue.expected === "string" && digits !== undefined
      ? [{ ...issue, input: BigInt(digits) }]
      : [];
  });
}

function childAt(value: unknown, key: PropertyKey): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<PropertyKey, unknown>)[key]
    : undefined;
}
