import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import type { Stage } from "../context.js";
import type { AuthScheme } from "../signatures.js";
import { errorOutcome } from "../types.js";
import { routeOf } from "./require.js";

export const INVALID_SIGNATURE = errorOutcome(401, "Invalid signature");

export type VerifySignature = (input: {
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  secret: string;
  nowSeconds: number;
}) => { ok: true; scheme: AuthScheme } | { ok: false; reason: string };

export interface AuthDeps {
  readonly verify: VerifySignature;
  /** Called on every generic-V1 (legacy) success; the caller logs the deprecation once per route. */
  readonly onLegacyV1?: (routeName: string) => void;
  /** Called on every rejection with the reason (never the secret), for the log. */
  readonly onRejected?: (routeName: string, reason: string) => void;
}

/** Step 4 of the processing order (docs/webhook.md). `INSECURE_NO_AUTH` skips the check (startup allows it only on loopback binds). */
export function authStage(deps: AuthDeps): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    if (route.secret === INSECURE_NO_AUTH) return ctx;
    const result = deps.verify({
      headers: ctx.inbound.headers,
      body: ctx.inbound.body,
      secret: route.secret,
      nowSeconds: Math.floor(ctx.inbound.receivedAt / 1000),
    });
    if (!result.ok) {
      deps.onRejected?.(route.name, result.reason);
      return INVALID_SIGNATURE;
    }
    if (result.scheme === "generic_v1") deps.onLegacyV1?.(route.name);
    return ctx;
  };
}
