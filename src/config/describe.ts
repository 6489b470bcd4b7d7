import { cutText } from "../io/cutText.js";

/** A wrong value as a message quotes it: its JSON, cut at 60 characters (YAML's .inf and .nan as themselves). */
export function describe(value: unknown): string {
  // JSON would say null for YAML's .inf and .nan.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  try {
    const text = JSON.stringify(value);
    return text === undefined ? typeof value : text.length > 60 ? `${cutText(text, 57)}...` : text;
  } catch {
    return typeof value;
  }
}
