import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import { receivedBytesOf } from "../contentCoding.js";
import type { Stage } from "../context.js";
import type { AuthScheme } from "../signatures.js";
import type { Outcome } from "../types.js";
import { routeOf } from "./require.js";

/**
 * The challenge every 401 carries (RFC 9110 §11.6.1 requires one). Clients that send Basic credentials
 * only once challenged — Python's `HTTPBasicAuthHandler`, .NET's `HttpClient` with `Credentials` and
 * PowerShell's `-Credential`, Java's `Authenticator`, Twilio — need it, with a realm, to send them at all.
 */
export const BASIC_CHALLENGE = 'Basic realm="svc", charset="UTF-8"';

/** One constant answer: a flood of bad signatures allocates nothing. */
export const INVALID_SIGNATURE: Outcome = {
  status: 401,
  body: { error: "Invalid signature" },
  headers: { "WWW-Authenticate": BASIC_CHALLENGE },
};

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
    const input = {
      headers: ctx.inbound.headers,
      body: ctx.inbound.body,
      secret: route.secret,
      nowSeconds: Math.floor(ctx.inbound.receivedAt / 1000),
    };
    let result = deps.verify(input);
    // A compressed body: the signature may cover the bytes as received rather than the decoded JSON.
    const sent = result.ok ? undefined : receivedBytesOf(input.body);
    if (sent !== undefined) {
      const asSent = deps.verify({ ...input, body: sent });
      if (asSent.ok) result = asSent;
    }
    if (!result.ok) {
      deps.onRejected?.(route.name, result.reason);
      return INVALID_SIGNATURE;
    }
    if (result.scheme === "generic_v1") deps.onLegacyV1?.(route.name);
    return ctx;
  };
}
