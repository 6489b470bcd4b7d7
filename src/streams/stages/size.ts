import type { Stage } from "../context.js";
import { errorOutcome } from "../types.js";

export const PAYLOAD_TOO_LARGE = errorOutcome(413, "Payload too large");

/**
 * The declared `Content-Length`, when it is a plain decimal number. Any number of digits: node:http
 * hands over lengths up to 2^64 - 1, and one of 16 digits or more is far over every limit (it was read
 * as no length, and the request waited for its body until the 408 instead of the 413 before reading).
 * Leading zeros count for nothing (`0002` is 2, as node reads it).
 */
export function declaredLength(headers: Readonly<Record<string, string>>): number | undefined {
  const raw = headers["content-length"];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
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
