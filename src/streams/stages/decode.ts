import { decodeContent } from "../contentCoding.js";
import { type Stage, withCtx } from "../context.js";
import { PAYLOAD_TOO_LARGE } from "./size.js";

/**
 * A body sent with `Content-Encoding` undone (docs/webhook.md, Compressed bodies): after the rate limit,
 * so only requests the route's quota admits are inflated, and before the signature check, which covers
 * the decoded JSON (or the bytes as received). One that decodes past `max_body_bytes` is 413; one that
 * cannot be decoded goes on as it came (`codingProblem` answers it after the signature check).
 */
export function decodeStage(deps: { maxBodyBytes(): number }): Stage {
  return (ctx) => {
    const coding = ctx.inbound.headers["content-encoding"];
    if (coding === undefined) return ctx;
    const body = decodeContent(ctx.inbound.body, coding, deps.maxBodyBytes());
    if (body === "too_large") return PAYLOAD_TOO_LARGE;
    if (body === ctx.inbound.body) return ctx;
    return withCtx(ctx, { inbound: { ...ctx.inbound, body } });
  };
}
