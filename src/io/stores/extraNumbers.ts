import { numberText, parseJson } from "../../streams/jsonNumbers.js";

/**
 * JSON of subscription records and cron jobs, written by hand or by another tool. A number under
 * `deliver_extra` is an id (a chat, a thread), and JSON.parse would change it: a Discord channel id written
 * unquoted (`"chat_id": 123456789012345678`) comes out as 123456789012345680, another channel, and Slack's
 * `"thread_ts": 1700000000.000100` as 1700000000.0001, another thread. Such numbers are read as the text
 * written (parseJson keeps it), as config.yaml reads every unquoted number under a route's `deliver_extra`.
 */
const EXTRA_KEY = "deliver_extra";

/** Each number directly in a `deliver_extra` object anywhere in `value`, replaced by its source text. */
function numbersAsText(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (key === EXTRA_KEY && typeof item === "object" && item !== null && !Array.isArray(item)) {
      const extra = item as Record<string, unknown>;
      for (const [name, v] of Object.entries(extra))
        if (typeof v === "number") extra[name] = numberText(extra, name, v);
    } else numbersAsText(item);
  }
}

/**
 * JSON.parse, except that a number under `deliver_extra` comes back as the text written. A syntax error is
 * JSON.parse's own, at the text's own positions.
 */
export function parseKeepingExtraNumbers(json: string): unknown {
  if (!json.includes(`"${EXTRA_KEY}"`)) return JSON.parse(json);
  const parsed = parseJson(json);
  numbersAsText(parsed);
  return parsed;
}
