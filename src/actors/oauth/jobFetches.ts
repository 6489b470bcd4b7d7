import { type OAuthFetches, oauthFetches } from "../../io/oauth/fetch.js";
import type { OAuthJob } from "./context.js";

/** A saved file that cannot be read holds nothing to hide (its reader says what is wrong with it). */
function readable<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/**
 * The credentials svc holds for the job's server: the saved access, refresh and ID tokens (those a refresh
 * could not save too), the client's secret (configured or registered) and the registration's access token
 * (RFC 7592). A request carries few of them (a refresh sends the refresh token, never the access token), yet an
 * authorization server's error may quote any.
 */
export function heldCredentials(job: OAuthJob): string[] {
  const tokens = readable(() => job.store.readTokens());
  const client = readable(() => job.store.readClient()) as Record<string, unknown> | undefined;
  return [
    tokens?.access_token,
    tokens?.refresh_token,
    tokens?.id_token,
    job.entry.oauth?.client_secret,
    client?.client_secret,
    client?.registration_access_token,
  ].filter((value): value is string => typeof value === "string" && value !== "");
}

/**
 * The OAuth fetches of one request of the job (`oauthFetches`): an error's excerpt of an answer has the
 * credentials svc holds for the server `[redacted]` (`heldCredentials`), as those the request carried.
 */
export function jobFetches(job: OAuthJob, userAgent: string | null | undefined): OAuthFetches {
  return oauthFetches(userAgent, job.fetch, job.requestTimeoutMs, () => heldCredentials(job));
}
