import { createHash } from "node:crypto";
import { refreshAuthorization } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { inProfile } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { finishBeforeExit } from "../../io/heldSignals.js";
import { resourceCovers } from "../../io/oauth/discovery.js";
import { OAUTH_REQUEST_TIMEOUT_MS, type OAuthFetches } from "../../io/oauth/fetch.js";
import {
  type StoredClient,
  type StoredMetadata,
  type StoredTokens,
  toStoredTokens,
} from "../../io/oauth/tokenStore.js";
import { storeProblem } from "../../io/stores/atomicFile.js";
import { sdkClientAuth } from "./clientAuth.js";
import { configuredClient, secretExpired } from "./clientIdentity.js";
import type { OAuthJob } from "./context.js";
import { discoverForJob } from "./discoverForJob.js";
import { jobFetches } from "./jobFetches.js";
import { sentResource } from "./resourceIndicator.js";
import type { LoginFlow } from "./runLogin.js";
import {
  lastFailureAt,
  loginAdvice,
  loginCommand,
  refusedClient,
  tokenEndpointError,
} from "./tokenErrors.js";

export { loginCommand };

/**
 * Refresh this long before the recorded expiry, so a request never leaves with a dying token; a tenth
 * of the lifetime when that is shorter, so a token living less than a minute is not refreshed at once.
 */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * The saved login cannot be used: `why` says what is wrong with it, the message adds the command that fixes it.
 * `loginNeeded` lets the MCP hub (which loads no OAuth code of its own) tell it from other call errors.
 */
export class NeedsLoginError extends SvcError {
  readonly loginNeeded = true;

  constructor(
    readonly why: string,
    message: string,
  ) {
    super("oauth", message);
  }
}

export function needsLoginError(
  serverName: string,
  why: string,
  flow: LoginFlow = "browser",
  profile?: string,
): NeedsLoginError {
  return new NeedsLoginError(
    why,
    `${serverName}: ${why} — run \`${loginCommand(serverName, flow, profile)}\``,
  );
}

/**
 * The flow a new login of this server must use: device when configured, or when the saved grant came
 * from a device login (such a grant, once unusable, needs another explicit login).
 */
export function loginFlowFor(job: OAuthJob, saved: StoredTokens | undefined): LoginFlow {
  return job.entry.oauth?.flow === "device" || saved?.flow === "device" ? "device" : "browser";
}

/**
 * The token endpoint refused the configured client (`oauth.client_id`, `client_secret`) at a refresh: every
 * refresh is refused so until the user fixes them (or the authorization server's side) and logs in again.
 * `loginNeeded`, as for `NeedsLoginError`, lets the MCP hub fail the server at once with this message.
 */
export class ClientRefusedError extends SvcError {
  readonly loginNeeded = true;
}

/** The token endpoint gave no OAuth answer: the refresh may succeed later, no login is needed. */
export class RefreshUnavailableError extends SvcError {
  readonly transient = true;
}

/**
 * No OAuth answer: unreachable, 429, 5xx, or any other answer that is no RFC 6749 error object (a JSON or
 * form-encoded body with a string `error`): a 200 that was no token response (a proxy's or login page), a
 * firewall's 403 page, a proxy's 404, a 400 with an empty body. Only an OAuth error says the grant failed.
 */
function isTransient(answered: { status: number; error?: string }): boolean {
  const { status } = answered;
  return status === 0 || status === 429 || status >= 500 || answered.error === undefined;
}

/**
 * After a refresh that got no OAuth answer while the token still served, the next attempt waits this long
 * (by SHA-256 of the refresh token): the SDK asks for tokens before every request, and a server that
 * answered 429 or 503 is not helped by a refresh per request.
 */
export const REFRESH_RETRY_MS = 30_000;
const refreshRetryAt = new Map<string, number>();

/**
 * Refresh tokens the authorization server answered `invalid_grant` for (by SHA-256), with the reason:
 * a refused refresh token stays refused, so later connects fail at once asking for a login instead of
 * sending it again on every reconnect (which servers with reuse detection may punish by revoking the
 * whole grant). The saved file is left as it is (a failed grant never replaces saved credentials); a
 * new login writes a new refresh token.
 */
const refusedRefreshes = new Map<string, string>();

/** A refused refresh token: `invalid_grant` (RFC 6749 5.2), GitHub's `bad_refresh_token` (answered 200). */
const REFUSED_GRANT_ERRORS = new Set(["invalid_grant", "bad_refresh_token"]);
const MAX_REMEMBERED_REFUSALS = 1000;

function refreshKey(issuer: string, token: string): string {
  return createHash("sha256").update(`${issuer}\n${token}`).digest("hex");
}

/**
 * Refreshes refused because the token endpoint refused the configured client, by SHA-256 of the refresh token
 * and the client's id, secret and method, with the error they failed with: not sent again until a new login
 * brings another refresh token or config.yaml another client, so a failed server's retries do not ask each time.
 */
const refusedClientRefreshes = new Map<string, string>();

function clientRefreshKey(issuer: string, token: string, client: OAuthClientInformationMixed): string {
  const { client_id, client_secret, token_endpoint_auth_method } = client as OAuthClientInformationFull;
  return createHash("sha256")
    .update(JSON.stringify([issuer, token, client_id, client_secret, token_endpoint_auth_method]))
    .digest("hex");
}

function rememberRefused(issuer: string, token: string, why: string): void {
  if (refusedRefreshes.size >= MAX_REMEMBERED_REFUSALS) refusedRefreshes.clear();
  refusedRefreshes.set(refreshKey(issuer, token), why);
}

/**
 * Refreshes that got no OAuth answer, by key (see `refreshKey`): how many so far, and the error the last
 * one failed its connect with. A connect that waited on the lock meanwhile fails with it instead of
 * sending the refresh again (each waiter in turn would otherwise wait out another request); a connect
 * that starts later tries again.
 */
const unanswered = new Map<string, { readonly count: number; readonly error: RefreshUnavailableError }>();

/** A token that still serves, whose last refresh got no OAuth answer less than REFRESH_RETRY_MS ago. */
function waitingToRetry(tokens: StoredTokens, now: number): boolean {
  if (tokens.refresh_token === undefined || (tokens.expires_at ?? Number.POSITIVE_INFINITY) <= now)
    return false;
  const at = refreshRetryAt.get(refreshKey(tokens.issuer, tokens.refresh_token));
  return at !== undefined && now < at;
}

export function expiringSoon(tokens: StoredTokens, now: number): boolean {
  if (tokens.expires_at === undefined) return false;
  const lifetime = tokens.obtained_at !== undefined ? tokens.expires_at - tokens.obtained_at : undefined;
  const margin =
    lifetime !== undefined && lifetime > 0 ? Math.min(REFRESH_MARGIN_MS, lifetime / 10) : REFRESH_MARGIN_MS;
  return tokens.expires_at - now <= margin;
}

/**
 * `invalid_client` at the token endpoint for a stored client: a client metadata document is recorded
 * as rejected (registration from then on), and either kind of registration is dropped so the
 * next login does not present a client the server refuses. Configured clients are the user's to fix.
 */
function forgetRefusedClient(
  job: OAuthJob,
  client: StoredClient,
  fetches: OAuthFetches,
  meta: StoredMetadata,
): void {
  if (lastFailureAt(fetches, meta.authorizationServerMetadata.token_endpoint)?.error !== "invalid_client")
    return;
  if (client.kind === "cimd") {
    job.logger.warn(
      { server: job.serverName },
      "[oauth] the authorization server rejected the client metadata document (invalid_client); using dynamic registration from now on",
    );
    job.store.recordCimdOff("invalid_client at the token endpoint (refresh)");
  }
  job.store.clearClient();
}

/**
 * Tokens a refresh could not save (a full disk, `keepTokens`) are written at the next refresh, under its lock;
 * a file that still cannot be written keeps them held (said when they were).
 */
function saveHeldTokens(job: OAuthJob): void {
  try {
    if (job.store.saveHeldTokens())
      job.logger.info(
        { server: job.serverName },
        `[oauth] the refreshed tokens are saved now (${job.store.tokensPath})`,
      );
  } catch {
    // Still not writable.
  }
}

/**
 * Returns usable tokens, refreshing under the cross-process lock when they expire soon (or when
 * `rejected` is the access token the server just refused). The file is re-read after the lock is
 * taken, so when another process refreshed first its tokens are used and no second refresh happens.
 */
export async function usableTokens(
  job: OAuthJob,
  options: { rejected?: string } = {},
): Promise<StoredTokens> {
  const { store, serverName } = job;
  const quick = store.readTokens();
  if (quick === undefined)
    throw needsLoginError(serverName, "not logged in", loginFlowFor(job, quick), job.profile);
  // Tokens obtained for another resource (the entry's url was changed since the login) are never sent
  // to this one: the MCP authorization spec forbids passing a token to a server it was not issued for.
  if (quick.resource !== undefined && !resourceCovers(job.entry.url, quick.resource)) {
    throw needsLoginError(
      serverName,
      `the saved login is for ${quick.resource}, not ${job.entry.url.split(/[?#]/)[0]} (mcp_servers.${serverName}.url changed)`,
      loginFlowFor(job, quick),
      job.profile,
    );
  }
  if (options.rejected === undefined && !expiringSoon(quick, job.now())) return quick;
  if (options.rejected === undefined && waitingToRetry(quick, job.now())) return quick;
  const unansweredBefore =
    quick.refresh_token === undefined
      ? 0
      : (unanswered.get(refreshKey(quick.issuer, quick.refresh_token))?.count ?? 0);
  return store.withLock(async () => {
    saveHeldTokens(job);
    const current = store.readTokens();
    if (current === undefined)
      throw needsLoginError(serverName, "not logged in", loginFlowFor(job, current), job.profile);
    const flow = loginFlowFor(job, current);
    const stale =
      options.rejected !== undefined
        ? current.access_token === options.rejected
        : expiringSoon(current, job.now());
    if (!stale) return current;
    // A refresh that got no OAuth answer while this one waited on the lock: the token serves meanwhile.
    if (options.rejected === undefined && waitingToRetry(current, job.now())) return current;
    if (current.refresh_token === undefined) {
      // Nothing to refresh with: the token serves until it actually expires.
      if (options.rejected === undefined && (current.expires_at ?? Number.POSITIVE_INFINITY) > job.now())
        return current;
      const why =
        options.rejected !== undefined ? "the server refused the access token" : "the access token expired";
      throw needsLoginError(serverName, `${why} and there is no refresh token`, flow, job.profile);
    }
    // A file written by hand or by an older svc may lack `flow`: such a grant is a browser one.
    const grantFlow = current.flow === "device" ? "device" : "browser";
    const settings = job.entry.oauth ?? {};
    const fetches = jobFetches(job, settings.user_agent);
    let meta = store.readMetadata();
    // The cache may name another authorization server than the one that issued these tokens (a later
    // login that failed, on the device flow's server for instance): the refresh token goes only to its own.
    // (A file written by hand may name no issuer: the cached server is used.)
    const issuer = current.issuer as string | undefined;
    if (meta === undefined || (issuer !== undefined && meta.authorizationServerUrl !== issuer)) {
      const previous = meta;
      const discovered = await discoverForJob(job, grantFlow, fetches);
      if (issuer !== undefined && discovered.authorizationServerUrl !== issuer)
        throw needsLoginError(
          serverName,
          `the saved login was issued by ${issuer}, which the server no longer names for this login`,
          flow,
          job.profile,
        );
      // A scope the resource required (step-up) is the resource's: it stays.
      meta =
        previous?.requiredScope !== undefined
          ? { ...discovered, requiredScope: previous.requiredScope }
          : discovered;
      // Cached again (as a login does), so later connects and the SDK's own auth code find it.
      store.saveMetadata(meta);
    }
    const configured = configuredClient(settings)?.info;
    const stored = configured === undefined ? store.readClient() : undefined;
    const client = configured ?? stored;
    if (client === undefined)
      throw needsLoginError(serverName, "the client registration is missing", flow, job.profile);
    // RFC 7591 3.2.1: past client_secret_expires_at the secret no longer authenticates the client; the
    // server would answer invalid_client. A login registers again (clientIdentity.ts).
    if (stored?.client_secret !== undefined && secretExpired(stored, job.now()))
      throw needsLoginError(
        serverName,
        `the client registration's secret expired at ${new Date((stored.client_secret_expires_at as number) * 1000).toISOString()}`,
        flow,
        job.profile,
      );
    const refreshToken = current.refresh_token;
    const refusal = refusedRefreshes.get(refreshKey(current.issuer, refreshToken));
    if (refusal !== undefined) throw needsLoginError(serverName, refusal, flow, job.profile);
    const clientRefusal =
      configured === undefined
        ? undefined
        : refusedClientRefreshes.get(clientRefreshKey(current.issuer, refreshToken, configured));
    if (clientRefusal !== undefined) throw new ClientRefusedError("oauth", clientRefusal);
    const failedMeanwhile = unanswered.get(refreshKey(current.issuer, refreshToken));
    if (failedMeanwhile !== undefined && failedMeanwhile.count > unansweredBefore)
      throw failedMeanwhile.error;
    // Once the request is sent the server may have rotated the refresh token: the process must not end
    // before the answer is saved, or the file keeps the used one (src/io/heldSignals.ts).
    const held = {
      what: `mcp_servers.${serverName}'s token refresh${inProfile(job.profile)}`,
      atMostMs: job.requestTimeoutMs ?? OAUTH_REQUEST_TIMEOUT_MS,
    };
    return finishBeforeExit(async () => {
      let fresh: OAuthTokens;
      try {
        fresh = await refreshAuthorization(meta.authorizationServerUrl, {
          metadata: meta.authorizationServerMetadata,
          clientInformation: client,
          refreshToken: refreshToken,
          ...(sentResource(job, current.resource) !== undefined ? { resource: current.resource } : {}),
          addClientAuthentication: sdkClientAuth(serverName, client),
          fetchFn: fetches.token,
        });
      } catch (err) {
        const endpoint = meta.authorizationServerMetadata.token_endpoint;
        const failure = tokenEndpointError(serverName, "token refresh", fetches, endpoint, err);
        const answered = lastFailureAt(fetches, endpoint);
        // No OAuth answer (unreachable, 5xx, 429, a 4xx without an OAuth error): the grant may well be fine,
        // so no new login is asked for; a token that has not expired yet keeps serving, and the next connect
        // tries again.
        if (answered !== undefined && isTransient(answered)) {
          if (
            options.rejected === undefined &&
            (current.expires_at ?? Number.POSITIVE_INFINITY) > job.now()
          ) {
            if (refreshRetryAt.size >= MAX_REMEMBERED_REFUSALS) refreshRetryAt.clear();
            refreshRetryAt.set(refreshKey(current.issuer, refreshToken), job.now() + REFRESH_RETRY_MS);
            job.logger.warn(
              { server: serverName, err: failure.message },
              `[oauth] token refresh failed; using the current token, and trying again in ${REFRESH_RETRY_MS / 1000} s`,
            );
            return current;
          }
          const unavailable = new RefreshUnavailableError(
            "mcp_connect",
            `${failure.message} — the saved login is kept; svc tries again on the next connect`,
            // Not the SDK's error, which quotes the endpoint's body whole (see tokenEndpointError).
            { cause: failure.cause },
          );
          const key = refreshKey(current.issuer, refreshToken);
          if (unanswered.size >= MAX_REMEMBERED_REFUSALS) unanswered.clear();
          unanswered.set(key, { count: (unanswered.get(key)?.count ?? 0) + 1, error: unavailable });
          throw unavailable;
        }
        if (stored !== undefined) forgetRefusedClient(job, stored, fetches, meta);
        const why = failure.message.slice(serverName.length + 2);
        if (answered?.error !== undefined && REFUSED_GRANT_ERRORS.has(answered.error))
          rememberRefused(current.issuer, refreshToken, why);
        // A configured client the server refuses is refused by a login too: name the keys to check first.
        if (configured !== undefined && refusedClient(answered?.error)) {
          const message = `${serverName}: ${why} — ${loginAdvice(serverName, fetches, endpoint, true, flow, job.profile)}`;
          if (refusedClientRefreshes.size >= MAX_REMEMBERED_REFUSALS) refusedClientRefreshes.clear();
          refusedClientRefreshes.set(clientRefreshKey(current.issuer, refreshToken, configured), message);
          throw new ClientRefusedError("oauth", message);
        }
        throw needsLoginError(serverName, why, flow, job.profile);
      }
      const saved = toStoredTokens(fresh, {
        issuer: current.issuer,
        resource: current.resource,
        flow: grantFlow,
        now: job.now(),
        previous: current,
      });
      // The server may have replaced the refresh token: tokens the disk cannot take are kept in memory.
      const unsaved = store.keepTokens(saved);
      if (unsaved === undefined) job.logger.info({ server: serverName }, "[oauth] access token refreshed");
      else
        job.logger.error(
          { server: serverName },
          `[oauth] access token refreshed, but not saved (${storeProblem(unsaved)}): this process goes on with the new tokens and saves them at the next refresh; until then the file holds a refresh token the authorization server may have replaced, so a restart or another svc command for ${serverName} may need \`${loginCommand(serverName, flow, job.profile)}\``,
        );
      return saved;
    }, held);
  });
}
