import type { Stage } from "../context.js";
import { errorOutcome } from "../types.js";

export const INVALID_JSON = errorOutcome(400, "Invalid JSON body");
export const NOT_AN_OBJECT = errorOutcome(400, "Invalid JSON body: expected a JSON object");

/**
 * Step 5 of spec 4.2. A body that is valid JSON but not an object (array, string, number, null) is
 * also a 400: filters, templates and `event_type` all address fields of an object.
 */
export const parseStage: Stage = (ctx) => {
  const { body } = ctx.inbound;
  // A UTF-8 byte order mark some senders prepend is not JSON; RFC 8259 §8.1 lets parsers ignore it.
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8", start));
  } catch {
    return INVALID_JSON;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return NOT_AN_OBJECT;
  return { ...ctx, payload: value as Record<string, unknown> };
};
