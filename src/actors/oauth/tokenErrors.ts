import { profileFlag } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import type { OAuthFetches } from "../../io/oauth/fetch.js";
import { redactedExcerpt } from "../../io/oauth/redact.js";

/** An error the login machine recognises as "the authorization server refused the client metadata document". */
export class DocumentRejectedError extends SvcError {
  readonly documentRejected = true;
}

/** The last failed response from `endpoint`, if any, as "status — excerpt". */
export function lastFailureAt(
  fetches: OAuthFetches,
  endpoint: string,
): { status: number; excerpt: string; error?: string; problem?: string } | undefined {
  const failure = [...fetches.failures].reverse().find((f) => f.url.split("?")[0] === endpoint.split("?")[0]);
  if (failure === undefined) return undefined;
  let error: string | undefined;
  try {
    const parsed = JSON.parse(failure.body) as { error?: unknown };
    if (typeof parsed.error === "string") error = parsed.error;
  } catch {
    // not JSON
  }
  return {
    status: failure.status,
    excerpt: redactedExcerpt(failure.body),
    ...(error !== undefined ? { error } : {}),
    ...(failure.problem !== undefined ? { problem: failure.problem } : {}),
  };
}

/**
 * Spec 7: a failed token exchange reports the status and a short redacted excerpt of the body (and what
 * svc found wrong in an answer it cannot use); `advice` (what the user can do about it) follows them.
 * The library's error is its cause only when the endpoint was not reached (a network error: its codes tell
 * a refused connection from a timeout): once it answered, the library's message restates the answer with
 * the body whole and unredacted (the MCP SDK's "Invalid OAuth error response: … Raw body: <html>…"), and a
 * message built with its causes (a tool call's error, the log) would carry it past the excerpt.
 */
export function tokenEndpointError(
  serverName: string,
  what: string,
  fetches: OAuthFetches,
  endpoint: string,
  err: unknown,
  advice?: string,
): SvcError {
  const failure = lastFailureAt(fetches, endpoint);
  const detail =
    failure === undefined
      ? redactedExcerpt(fetches.redacted((err as Error)?.message ?? String(err)))
      : failure.status === 0
        ? `${endpoint} unreachable (${failure.excerpt})`
        : `${endpoint} answered ${failure.status}${failure.excerpt ? `: ${failure.excerpt}` : ""}${failure.problem ? ` (${failure.problem})` : ""}`;
  return new SvcError(
    "oauth",
    `${serverName}: ${what} failed — ${detail}${advice ? ` — ${advice}` : ""}`,
    failure?.status === 0 ? { cause: err } : {},
  );
}

/** The login that gives this server (of this named profile) tokens: its own profile's, not the default's. */
export function loginCommand(
  serverName: string,
  flow: "browser" | "device" = "browser",
  profile?: string,
): string {
  return `svc mcp login ${serverName}${profileFlag(profile)}${flow === "device" ? " --flow device" : ""}`;
}

/**
 * The error codes of a token endpoint that refused the client itself: RFC 6749's `invalid_client`, and
 * GitHub's `incorrect_client_credentials` (answered 200) for a wrong client_id or client_secret.
 */
export function refusedClient(error: string | undefined): boolean {
  return error === "invalid_client" || error === "incorrect_client_credentials";
}

/** What to do after a failed login request: try again, or fix the configured client it refused. */
export function loginAdvice(
  serverName: string,
  fetches: OAuthFetches,
  endpoint: string,
  configuredClient: boolean,
  flow: "browser" | "device",
  profile?: string,
): string {
  const command = loginCommand(serverName, flow, profile);
  if (configuredClient && refusedClient(lastFailureAt(fetches, endpoint)?.error))
    return `check mcp_servers.${serverName}.oauth.client_id, client_secret and token_endpoint_auth_method, then run \`${command}\``;
  return `run \`${command}\` to try again`;
}
