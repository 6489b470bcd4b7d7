import type { PipelineCtx, ResolvedRoute } from "../context.js";

/** Later stages rely on earlier ones; a context missing a part is a wiring bug (answered 500). */
export function routeOf(ctx: PipelineCtx): ResolvedRoute {
  if (ctx.route === undefined) throw new Error("pipeline context has no route: the route stage did not run");
  return ctx.route;
}

export function payloadOf(ctx: PipelineCtx): Record<string, unknown> {
  if (ctx.payload === undefined)
    throw new Error("pipeline context has no payload: the parse stage did not run");
  return ctx.payload;
}
