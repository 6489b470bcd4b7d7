import type { PipelineCtx } from "../../src/streams/context.js";
import type { Inbound, Outcome } from "../../src/streams/types.js";

/** An empty POST to `/webhooks/<routeName>`, as the stage tests' contexts carry it. */
export const inboundFor = (routeName: string): Inbound => ({
  method: "POST",
  path: `/webhooks/${routeName}`,
  routeName,
  profile: undefined,
  headers: {},
  body: Buffer.alloc(0),
  receivedAt: 0,
});

/** A context for route `name`, finished when `outcome` is given. */
export const ctxFor = (name: string, outcome?: Outcome): PipelineCtx =>
  outcome ? { inbound: inboundFor(name), outcome } : { inbound: inboundFor(name) };
