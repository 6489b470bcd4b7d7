import type { Stage } from "../context.js";
import { errorOutcome } from "../types.js";

export const PAYLOAD_TOO_LARGE = errorOutcome(413, "Payload too large");

const DIGITS = /^\d+$/;
/**
 * The last plain decimal Content-Length read, and its number: a request's head is asked for its length
 * up to four times (its framing, the body budget, the body's read and its size), the text read once.
 */
let lastLengthText: string | undefined;
let lastLength = 0;

/**
 * The declared `Content-Length`, when it is a plain decimal number. Any number of digits: node:http
 * hands over lengths up to 2^64 - 1, and one of 16 digits or more is far over every limit (it was read
 * as no length, and the request waited for its body until the 408 instead of the 413 before reading).
 * Leading zeros count for nothing (`0002` is 2, as node reads it).
 */
export function declaredLength(headers: Readonly<Record<string, string>>): number | undefined {
  const raw = headers["content-length"];
  if (raw === undefined) return undefined;
  if (raw === lastLengthText) return lastLength;
  if (!DIGITS.test(raw)) return undefined;
  lastLengthText = raw;
  lastLength = Number(raw);
  return lastLength;
}

/** Whether the declared `Content-Length` is over `max`. */
export function declaredOver(headers: Readonly<Record<string, string>>, max: number): boolean {
  const declared = declaredLength(headers);
  return declared !== undefined && declared > max;
}

/**
 * Step 2 of the processing order (docs/webhook.md). The ingress runs this on the headers before reading (empty body) and stops a
 * chunked body as soon as it passes the limit; here the full body is measured. The declared size is
 * checked again only if it was not checked at admission against the limit in force now.
 */
export function bodySizeStage(deps: { maxBodyBytes(): number }): Stage {
  return (ctx) => {
    const max = deps.maxBodyBytes();
    if (ctx.declaredSizeCheckedAgainst !== max && declaredOver(ctx.inbound.headers, max)) {
      return PAYLOAD_TOO_LARGE;
    }
    if (ctx.inbound.body.length > max) return PAYLOAD_TOO_LARGE;
    return ctx;
  };
}
