import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { clientMetadataUrlProblem } from "../../config/clientMetadataUrl.js";
import { SvcError } from "../../errors.js";
import { BLOCKED_PORT, isBlockedPort } from "../outbound/blockedPort.js";
import { pinnedRedirectUris } from "./callbackServer.js";

export { clientMetadataUrlProblem };

const FIX = "fix the document or set cimd: false";

/** The fetch of the document never reached its host (svc's network view): the authorization server may still. */
export class DocumentUnreachable extends SvcError {}

/** Connection-level failures: the name did not resolve, the host refused or did not answer. */
const UNREACHABLE_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NODATA",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Whether a fetch failure is one of those (the error, its causes, an AggregateError's errors), or the request timed out. */
export function isUnreachable(err: unknown, depth = 0): boolean {
  if (depth > 5 || err === null || typeof err !== "object") return false;
  const e = err as { name?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
  if (e.name === "TimeoutError") return true;
  if (typeof e.code === "string" && UNREACHABLE_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isUnreachable(x, depth + 1))) return true;
  return isUnreachable(e.cause, depth + 1);
}

/** The reason of a fetch failure: undici's "fetch failed" says nothing without its cause. */
function fetchFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? err.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail =
    cause instanceof Error && cause.message !== "" ? cause.message : typeof code === "string" ? code : "";
  return detail === "" || message.includes(detail) ? message : `${message}: ${detail}`;
}

/**
 * Fetches and checks a self-hosted client metadata document: 200, `application/json`,
 * no redirect, all ten loopback redirect URIs, and `client_id` equal to its own URL. A document svc
 * cannot reach throws DocumentUnreachable (the caller decides); every other failure is a wrong document.
 */
export async function validateClientMetadataDocument(
  url: string,
  fetchFn: FetchLike,
): Promise<Record<string, unknown>> {
  const where = `oauth.client_metadata_url ${url}`;
  const problem = clientMetadataUrlProblem(url);
  if (problem !== undefined)
    throw new SvcError(
      "oauth",
      `${where}: ${problem} (a client metadata document URL is an https URL with a path, and no fragment, userinfo or dot segments) — correct the URL (or the variable it is built from), or set cimd: false`,
    );
  let res: Response;
  try {
    res = await fetchFn(url, { redirect: "manual", headers: { accept: "application/json" } });
  } catch (err) {
    // No retry, and no other network, can change it; an authorization server that fetches as browsers do
    // refuses the port too, so the document is not presented unverified as an unreachable one is.
    if (isBlockedPort(err))
      throw new SvcError(
        "oauth",
        `${where}: not fetched — its port ${new URL(url).port} is ${BLOCKED_PORT}, so svc cannot read the document, nor can an authorization server that fetches as browsers do: host it on another port, such as 443, or set cimd: false`,
        { cause: err },
      );
    const why = fetchFailure(err);
    if (isUnreachable(err))
      throw new DocumentUnreachable("oauth", `${where}: not reachable from here (${why})`, { cause: err });
    throw new SvcError(
      "oauth",
      `${where}: cannot be fetched (${why}) — publish the document or set cimd: false`,
    );
  }
  if (res.status !== 200) {
    const kind = res.status >= 300 && res.status < 400 ? "redirects" : `answered ${res.status}`;
    throw new SvcError(
      "oauth",
      `${where}: ${kind}; it must answer 200 directly — fix the URL or set cimd: false`,
    );
  }
  const type = (res.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new SvcError("oauth", `${where}: Content-Type is "${type}", expected application/json — ${FIX}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = (await res.json()) as Record<string, unknown>;
  } catch {
    throw new SvcError("oauth", `${where}: body is not JSON — ${FIX}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    throw new SvcError("oauth", `${where}: body is not a JSON object — ${FIX}`);
  if (doc.client_id !== url) {
    throw new SvcError(
      "oauth",
      `${where}: client_id must be the document's own URL (found ${JSON.stringify(doc.client_id)}) — ${FIX}`,
    );
  }
  const declared = Array.isArray(doc.redirect_uris) ? doc.redirect_uris : [];
  const missing = pinnedRedirectUris().filter((u) => !declared.includes(u));
  if (missing.length > 0) {
    throw new SvcError(
      "oauth",
      `${where}: redirect_uris must declare all ten loopback callbacks; missing ${missing.join(", ")} — ${FIX}`,
    );
  }
  return doc;
}
