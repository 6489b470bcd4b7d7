import { cutText } from "../io/cutText.js";
import { valueWithoutUrlCredentials } from "./urlCredentials.js";

/**
 * A value a `${VAR}` gave (from `.env` or the environment, where secrets live), held as the file writes it
 * (`${SLACK_TOKEN}`, `x-${A}`): a message quotes that text instead of the value.
 */
export class WrittenAs {
  constructor(readonly text: unknown) {}
}

/**
 * A wrong value as a message quotes it, the one way config messages quote a value: its JSON, cut at 60
 * characters (YAML's .inf and .nan, and a whole number past 2^53, as themselves), a URL in it (a text, or a
 * mapping's key) without its credentials (`redis://:[redacted]@host`). A value a `${VAR}` gave (WrittenAs)
 * is quoted as the file writes it, never as what the variable gave:
 * `"${SLACK_TOKEN}" (the value it gives is not shown)`.
 */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value instanceof WrittenAs) return `${describe(value.text)} (the value it gives is not shown)`;
  if (typeof value === "bigint") return String(value);
  try {
    return cutJson(valueWithoutUrlCredentials(value));
  } catch {
    // A YAML alias inside its own anchor is a value without end.
    return typeof value;
  }
}

/** A value's JSON cut at 60 characters, as written: for a value kept as text (an MCP entry's `trust`). */
export function cutJson(value: unknown): string {
  // JSON would say null for YAML's .inf and .nan.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  try {
    const text = JSON.stringify(value);
    return text === undefined ? typeof value : text.length > 60 ? `${cutText(text, 57)}...` : text;
  } catch {
    return typeof value;
  }
}

/**
 * A message about a value that quotes it: given the value as `describe` quotes it, and whether a `${VAR}`
 * gave it (`given`: the quote is then the file's text, and nothing made from the value itself, such as a
 * fix that writes part of it back, may be said).
 */
export type Quoting = (quoted: string, given: boolean) => string;

/**
 * A schema's custom issue about `value` whose message quotes it (`unknown provider "x"`). It carries its
 * `Quoting` as `params.quoting`, so a value a `${VAR}` gave is said again of the file's text when the
 * issues are formatted (format.ts), never of what the variable gave.
 */
export function quotingIssue(
  value: unknown,
  quoting: Quoting,
  options: { readonly path?: PropertyKey[]; readonly abort?: boolean } = {},
): {
  code: "custom";
  message: string;
  input: unknown;
  params: { quoting: Quoting };
  path?: PropertyKey[];
  abort?: boolean;
} {
  return {
    code: "custom",
    message: quoting(describe(value), false),
    input: value,
    params: { quoting },
    ...options,
  };
}
