import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import { receivedBytesOf } from "../contentCoding.js";
import { refusedWith, type Stage, withCtx } from "../context.js";
import { formPayload, isForm } from "../formBody.js";
import type { AuthScheme } from "../signatures.js";
import type { Outcome } from "../types.js";
import { routeOf } from "./require.js";

/**
 * The challenge every 401 carries (RFC 9110 §11.6.1 requires one). Clients that send Basic credentials
 * only once challenged — Python's `HTTPBasicAuthHandler`, .NET's `HttpClient` with `Credentials` and
 * PowerShell's `-Credential`, Java's `Authenticator`, Twilio — need it, with a realm, to send them at all.
 */
export const BASIC_CHALLENGE = 'Basic realm="svc", charset="UTF-8"';

/**
 * A web page's request to an INSECURE_NO_AUTH route: the delivery history's reason (the log's, below, also
 * says why such a request is refused).
 */
export const FROM_WEB_PAGE =
  "a web page's request (Origin or Sec-Fetch-Site header) to an INSECURE_NO_AUTH route";
/** The log's reason for it, made once (not per refused request). */
const FROM_WEB_PAGE_LOGGED = `${FROM_WEB_PAGE}: any site open in a browser on this machine can send one`;

/** One constant answer: a flood of bad signatures allocates nothing beyond the refused context. */
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
  /** The decoded JSON when `body` is the compressed bytes as sent (`VerifyInput.decodedBody`). */
  decodedBody?: Buffer;
}) => { ok: true; scheme: AuthScheme } | { ok: false; reason: string };

export interface AuthDeps {
  readonly verify: VerifySignature;
  /** Called on every generic-V1 (legacy) success; the caller logs the deprecation once per route. */
  readonly onLegacyV1?: (routeName: string) => void;
  /**
   * Called on every rejection with the reason (never the secret), for the log; the refused context carries
   * it too (`refusal`), for the delivery history.
   */
  readonly onRejected?: (routeName: string, reason: string) => void;
}

/**
 * A request a web page made: browsers send `Origin` with every POST and `Sec-Fetch-Site` with every
 * request; webhook senders, curl and scripts send neither. Loopback is no boundary for a browser: any site
 * open on this machine (or one rebinding its DNS name to 127.0.0.1) can POST to a local port.
 */
export function fromWebPage(headers: Readonly<Record<string, string>>): boolean {
  return Object.hasOwn(headers, "origin") || Object.hasOwn(headers, "sec-fetch-site");
}

/**
 * Step 4 of the processing order (docs/webhook.md). `INSECURE_NO_AUTH` skips the check (startup allows it
 * only on loopback binds), except for a request a web page made, which is answered as an unsigned one.
 */
export function authStage(deps: AuthDeps): Stage {
  return (ctx) => {
    const route = routeOf(ctx);
    if (route.secret === INSECURE_NO_AUTH) {
      if (!fromWebPage(ctx.inbound.headers)) return ctx;
      deps.onRejected?.(route.name, FROM_WEB_PAGE_LOGGED);
      return refusedWith(ctx, INVALID_SIGNATURE, FROM_WEB_PAGE);
    }
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
      // The replay window a scheme signs into the body (Linear) is read from the JSON, not the sent bytes.
      const asSent = deps.verify({ ...input, body: sent, decodedBody: input.body });
      if (asSent.ok) result = asSent;
    }
    if (!result.ok) {
      const signed = signedFormPayload(deps.verify, input);
      if (signed !== undefined) return withCtx(ctx, { signedFormPayload: signed });
      deps.onRejected?.(route.name, result.reason);
      // The schemes' own fixed texts (signatures.ts: header names from svc's lists, never a value sent).
      return refusedWith(ctx, INVALID_SIGNATURE, result.reason);
    }
    if (result.scheme === "generic_v1") deps.onLegacyV1?.(route.name);
    return ctx;
  };
}

/**
 * The headers only Gitea, Forgejo and Gogs send (besides GitHub's): a form is checked over its `payload`
 * field only when one is there, so a GitHub-style `X-Hub-Signature-256` alone stays a signature of the body.
 */
const GITEA_FAMILY_SIGNATURES = ["x-gitea-signature", "x-forgejo-signature", "x-gogs-signature"];

/**
 * Gitea, Forgejo and Gogs hooks with content type `application/x-www-form-urlencoded` send the event's JSON
 * in the form's `payload` field but sign that JSON, not the form body they send (GitHub signs the form
 * body, which the check above takes). For such a form whose signature failed over the body, its
 * code-host signature is checked over that field; the bytes it covers are returned for the parse stage,
 * which reads the payload from them alone, so nothing unsigned around them can become the event.
 */
function signedFormPayload(
  verify: VerifySignature,
  input: Parameters<VerifySignature>[0],
): Buffer | undefined {
  if (!isForm(input.headers) || !GITEA_FAMILY_SIGNATURES.some((name) => Object.hasOwn(input.headers, name)))
    return undefined;
  const field = formPayload(input.body);
  if (field === undefined) return undefined;
  const result = verify({ ...input, body: field });
  return result.ok && result.scheme === "forge_hmac" ? field : undefined;
}
