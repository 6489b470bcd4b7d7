import { isTextField } from "../../streams/filters.js";
import { numberText, parseJson } from "../../streams/jsonNumbers/index.js";
import { isUnsafeInteger } from "../../streams/payloadPath.js";

/**
 * JSON of subscription records and cron jobs, written by hand or by another tool. A number under
 * `deliver_extra` is an id (a chat, a thread), and JSON.parse would change it: a Discord channel id written
 * unquoted (`"chat_id": 123456789012345678`) comes out as 123456789012345680, another channel, and Slack's
 * `"thread_ts": 1700000000.000100` as 1700000000.0001, another thread. Such numbers are read as the text
 * written (parseJson keeps it), as config.yaml reads every unquoted number under a route's `deliver_extra`.
 * Likewise a whole number past 2^53 in a record's `filters` (`"equals": 12345678901234567890`, a 64-bit
 * id) is read as its digits, as config.yaml reads it: a filter compares such an id by its digits, where
 * the float JSON.parse makes of it equals its neighbours too (12345678901234567891, ...7000); and a number
 * a filter on a header or the event type compares is the text written (`1.0` matches `X-Version: 1.0`).
 */
const EXTRA_KEY = "deliver_extra";
const FILTERS_KEY = "filters";

/** A whole number written as digits alone (not `1.0e19` or `...890.0`, which config.yaml reads as floats too). */
const DIGITS = /^-?[0-9]+$/;

/**
 * The numbers of a `filters` value as config.yaml reads them: a whole number past 2^53 written as digits
 * becomes those digits, and every number a filter on a header or the event type compares (`equals`,
 * `not_equals`, `contains`, `in` items: text, which `"equals": 1.0` means as `1.0`, not `1`) its text written.
 * Walked with a stack of its own, not the call stack: a value nested thousands deep is read as JSON.parse read it.
 */
function filterNumbersAsText(value: unknown): void {
  const pending: { value: unknown; textValues: boolean }[] = [{ value, textValues: false }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    const holder = next.value as Record<string, unknown>;
    const text = next.textValues || (typeof holder.field === "string" && isTextField(holder.field));
    for (const [key, item] of Object.entries(holder)) {
      if (typeof item === "number") {
        const written = numberText(holder, key, item);
        if (text || (isUnsafeInteger(item) && DIGITS.test(written))) holder[key] = written;
      } else if (typeof item === "object" && item !== null)
        pending.push({ value: item, textValues: text && key === "in" });
    }
  }
}

/**
 * Each number directly in a `deliver_extra` object anywhere in `value` (a tree `parseJson` built), replaced
 * by its source text, and (unless `filters` is false: as a store writes back a value it leaves alone) the
 * numbers of a `filters` value as config.yaml reads them. Walked with a stack of its own, not the call
 * stack: a store holding a value nested thousands deep (which JSON.parse reads) is read whole, not refused
 * as a stack overflow.
 */
export function numbersAsText(value: unknown, filters = true): void {
  const pending: unknown[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next !== "object" || next === null) continue;
    for (const [key, item] of Object.entries(next)) {
      if (key === EXTRA_KEY && typeof item === "object" && item !== null && !Array.isArray(item)) {
        const extra = item as Record<string, unknown>;
        for (const [name, v] of Object.entries(extra))
          if (typeof v === "number") extra[name] = numberText(extra, name, v);
      } else if (key === FILTERS_KEY) {
        if (filters) filterNumbersAsText(item);
      } else if (typeof item === "object" && item !== null) pending.push(item);
    }
  }
}

/**
 * JSON.parse, except that a number under `deliver_extra` comes back as the text written, and the numbers
 * under `filters` as config.yaml reads them (64-bit ids as digits, a header's or event type's as written). A syntax error is JSON.parse's own, at the text's own positions.
 */
export function parseKeepingExtraNumbers(json: string): unknown {
  if (!json.includes(`"${EXTRA_KEY}"`) && !json.includes(`"${FILTERS_KEY}"`)) return JSON.parse(json);
  // Any depth, as JSON.parse reads a store without them: nothing after the parse walks it on the call stack.
  const parsed = parseJson(json, Number.POSITIVE_INFINITY);
  numbersAsText(parsed);
  return parsed;
}
