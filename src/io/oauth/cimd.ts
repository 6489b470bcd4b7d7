import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SvcError } from "../../errors.js";
import { pinnedRedirectUris } from "./callbackServer.js";

/** Syntax rules for `oauth.client_metadata_url`; returns the problem or undefined. */
export function clientMetadataUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:") return "must use https";
  if (url.username !== "" || url.password !== "" || /^https:\/\/[^/]*@/i.test(raw))
    return "must not contain userinfo";
  if (raw.includes("#")) return "must not contain a fragment";
  const rawPath = raw.replace(/^https:\/\/[^/?#]*/i, "").split(/[?#]/)[0] ?? "";
  if (rawPath === "" || rawPath === "/") return "must have a path";
  const segments = rawPath.split("/");
  if (segments.some((s) => s === "." || s === ".." || /^(%2e|\.){1,2}$/i.test(s)))
    return "must not contain . or .. segments";
  return undefined;
}

const FIX = "fix the document or set cimd: false";

/**
 * Fetches and checks a self-hosted client metadata document: 200, `application/json`,
 * no redirect, all ten loopback redirect URIs, and `client_id` equal to its own URL.
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
      `${where}: ${problem} (spec: https URL with a path, no fragment, userinfo or dot segments) — ${FIX}`,
    );
  let res: Response;
  try {
    res = await fetchFn(url, { redirect: "manual", headers: { accept: "application/json" } });
  } catch (err) {
    throw new SvcError(
      "oauth",
      `${where}: cannot be fetched (${(err as Error).message}) — publish the document or set cimd: false`,
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
