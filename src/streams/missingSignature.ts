import type { Headers } from "./signatureChecks.js";

/**
 * The event headers of the code hosts that sign with a hook's secret (X-Hub-Signature-256 and their own;
 * Bitbucket names its event in X-Event-Key and signs in X-Hub-Signature).
 */
const CODE_HOST_EVENTS = [
  "x-github-event",
  "x-gitea-event",
  "x-forgejo-event",
  "x-gogs-event",
  "x-event-key",
];

/**
 * Why a request that carries no signature, token or credentials svc checks was refused, in words that say
 * what to change at the sender when a code host sent it: a hook saved without a secret sends its event
 * and delivery headers and no signature (GitHub none, Gitea and Forgejo their signature headers empty,
 * GitLab no token); one that signs only with GitHub's legacy SHA-1 sends `X-Hub-Signature: sha1=...`.
 * Names headers only, never a value the request carried.
 */
export function missingSignatureReason(headers: Headers): string {
  const hub = headers["x-hub-signature"];
  if (typeof hub === "string" && hub.startsWith("sha1=") && hub.length > "sha1=".length) {
    return "only x-hub-signature: sha1=<hex> (GitHub's legacy SHA-1 signature), which is not checked — the sender must sign with HMAC-SHA256 in X-Hub-Signature-256 (sha256=<hex>)";
  }
  if (CODE_HOST_EVENTS.some((name) => Object.hasOwn(headers, name))) {
    return "no signature: the code host's hook has no secret (its signature headers are absent or empty) — set the hook's Secret to the route secret";
  }
  if (Object.hasOwn(headers, "x-gitlab-event")) {
    return "no x-gitlab-token: the GitLab hook has no secret token — set its Secret token to the route secret";
  }
  return "no recognized signature or token header";
}
