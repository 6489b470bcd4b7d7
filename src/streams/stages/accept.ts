import { type AcceptedEvent, type PipelineCtx, type Stage, withCtx } from "../context.js";
import { renderExtra, renderTemplate } from "../template.js";
import { payloadOf, routeOf } from "./require.js";

/** Renders the prompt and `deliver_extra` of an event that passed every check. */
export function acceptEvent(ctx: PipelineCtx): AcceptedEvent {
  const route = routeOf(ctx);
  const payload = payloadOf(ctx);
  if (ctx.deliveryId === undefined)
    throw new Error("pipeline context has no delivery id: idempotency did not run");
  const { extra, unfilled } = renderExtra(route.route.deliver_extra, payload, ctx.event);
  return {
    routeName: route.name,
    route: route.route,
    profile: route.profile,
    event: ctx.event,
    deliveryId: ctx.deliveryId,
    madeId: ctx.madeId,
    payload,
    headers: ctx.inbound.headers,
    prompt: renderTemplate(route.route.prompt, payload, ctx.event),
    extra,
    unfilled,
    receivedAt: ctx.inbound.receivedAt,
    receivedTick: ctx.inbound.receivedTick,
  };
}

/** After idempotency: the event is accepted; dispatch and delivery read `ctx.accepted`. */
export const acceptStage: Stage = (ctx) =>
  ctx.duplicateOf === undefined ? withCtx(ctx, { accepted: acceptEvent(ctx) }) : ctx;

export function acceptedOf(ctx: PipelineCtx): AcceptedEvent {
  if (ctx.accepted === undefined)
    throw new Error("pipeline context has no accepted event: the accept stage did not run");
  return ctx.accepted;
}
