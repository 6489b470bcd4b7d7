import { cutText } from "../io/cutText.js";
import { valueWithoutUrlCredentials } from "./urlCredentials.js";

/**
 * A wrong value as a message quotes it: its JSON, cut at 60 characters (YAML's .inf and .nan as themselves),
 * a URL in it (a text, or a mapping's key) without its credentials (`redis://:[redacted]@host`).
 */
export function describe(value: unknown): string {
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
