import { type AsyncStage, refusedWith, withCtx } from "../context.js";
import { deliveryIdHeader, storedDeliveryId } from "../deliveryId.js";
import { outcome, withEventAside } from "../types.js";
import { unreadableDeliveryId } from "../unreadableDeliveryId.js";
import { payloadOf, routeOf } from "./require.js";

export const IGNORED_BY_SCRIPT = outcome(200, { status: "ignored", reason: "script" });

/** What running a route script decided. */
export type ScriptResult =
  | { readonly kind: "payload"; readonly payload: Record<string, unknown> }
  | {
      readonly kind: "ignore";
      /** For the log: with the tail of what the script wrote to stderr. */
      readonly why: string;
      /**
       * For the delivery history (`script exited with code 1`, `script timed out`, `script printed nothing`):
       * what the script did, never what it wrote (its output may hold anything).
       */
      readonly reason: string;
    };

export interface ScriptRequest {
  readonly routeName: string;
  readonly script: string;
  readonly profile: string;
  readonly payload: Record<string, unknown>;
  /** The resolved event type (from a header or `event_type`), which the payload alone may not show. */
  readonly event: string | undefined;
  /** The delivery id the sender named, if any (a random one is only made after the script). */
  readonly deliveryId: string | undefined;
}

export interface ScriptDeps {
  runScript(request: ScriptRequest): Promise<ScriptResult>;
  onIgnored?: (routeName: string, why: string) => void;
}

/**
 * Step 7b of the processing order (docs/webhook.md): the route script may replace the payload or ignore the
 * event; an ignored context keeps the result's `reason` (`refusal`) for the delivery history.
 */
export function scriptStage(deps: ScriptDeps): AsyncStage {
  return async (ctx) => {
    const route = routeOf(ctx);
    const script = route.route.script;
    if (script === undefined) return ctx;
    const { headers } = ctx.inbound;
    const header = deliveryIdHeader(headers);
    let sent: string | undefined;
    if (header !== undefined) {
      sent = (headers[header] as string).trim();
      // Refused as the idempotency stage (step 8) refuses it, before the script runs on such an ID.
      const unreadable = unreadableDeliveryId(header, sent);
      if (unreadable !== undefined) return withEventAside(unreadable, ctx.event);
    }
    const result = await deps.runScript({
      routeName: route.name,
      script,
      profile: route.profile,
      payload: payloadOf(ctx),
      event: ctx.event,
      deliveryId: sent === undefined ? undefined : storedDeliveryId(sent),
    });
    if (result.kind === "ignore") {
      deps.onIgnored?.(route.name, result.why);
      return refusedWith(ctx, withEventAside(IGNORED_BY_SCRIPT, ctx.event), result.reason);
    }
    return withCtx(ctx, { payload: result.payload });
  };
}
