import * as oauth from "oauth4webapi";
import { isSvcError } from "../../errors.js";
import type { StoredMetadata, StoredTokens } from "../../io/oauth/tokenStore.js";
import { clientAuthFor } from "./clientAuth.js";
import { configuredClient } from "./clientIdentity.js";
import type { OAuthJob } from "./context.js";
import { jobFetches } from "./jobFetches.js";
import { tokenEndpointError } from "./tokenErrors.js";

/** What `svc mcp logout` could do at the authorization server: revoked, or why not. */
export type Revocation = { readonly revoked: true } | { readonly revoked: false; readonly why: string };

/**
 * The cached discovery, as absent when it cannot be read (a directory in its place): the logout still
 * removes the tokens, and the next login names the file and the fix.
 */
function savedMetadata(job: OAuthJob): StoredMetadata | undefined {
  try {
    return job.store.readMetadata();
  } catch (err) {
    if (isSvcError(err, "config_unreadable")) return undefined;
    throw err;
  }
}

/**
 * Revokes a saved grant at the authorization server that issued it (RFC 7009): the refresh token first
 * (a server revoking it also ends the access tokens of the same grant), then the access token. Only
 * the issuer's cached metadata and the saved (or configured) client are used: no discovery, and the
 * tokens go only to the server they came from, as a refresh's do.
 */
export async function revokeSavedGrant(job: OAuthJob, tokens: StoredTokens): Promise<Revocation> {
  const meta = savedMetadata(job);
  const issuer = typeof tokens.issuer === "string" ? tokens.issuer : undefined;
  if (meta === undefined || (issuer !== undefined && meta.authorizationServerUrl !== issuer))
    return { revoked: false, why: `no saved metadata of ${issuer ?? "its authorization server"}` };
  const as = meta.authorizationServerMetadata as unknown as oauth.AuthorizationServer;
  const endpoint = as.revocation_endpoint;
  if (endpoint === undefined)
    return { revoked: false, why: `${meta.authorizationServerUrl} offers no revocation endpoint` };
  let client: Parameters<typeof clientAuthFor>[1] | undefined;
  try {
    client = configuredClient(job.entry.oauth ?? {})?.info ?? job.store.readClient();
  } catch (err) {
    if (isSvcError(err, "store_corrupt"))
      return { revoked: false, why: "the client registration is damaged" };
    if (isSvcError(err, "config_unreadable"))
      return { revoked: false, why: "the client registration cannot be read" };
    throw err;
  }
  if (client === undefined) return { revoked: false, why: "the client registration is missing" };
  // oauth.user_agent is for token-endpoint requests only: the revocation endpoint gets Svc-Agent/<version>.
  const fetches = jobFetches(job, undefined);
  const options = {
    [oauth.customFetch]: fetches.token as typeof fetch,
    // As a login and a refresh: an authorization server on plain http (local) is spoken to over http.
    [oauth.allowInsecureRequests]: new URL(endpoint).protocol === "http:",
  };
  const revoke = async (token: string, hint: "refresh_token" | "access_token") => {
    const auth = clientAuthFor(
      job.serverName,
      client,
      meta.authorizationServerMetadata.token_endpoint_auth_methods_supported ?? [],
    );
    const res = await oauth.revocationRequest(as, { client_id: client.client_id }, auth, token, {
      ...options,
      additionalParameters: { token_type_hint: hint },
    });
    await oauth.processRevocationResponse(res);
  };
  try {
    if (tokens.refresh_token !== undefined) await revoke(tokens.refresh_token, "refresh_token");
    await revoke(tokens.access_token, "access_token");
  } catch (err) {
    // "<server>: token revocation failed — <endpoint> answered 400: ..." without the server's name.
    const failure = tokenEndpointError(job.serverName, "token revocation", fetches, endpoint, err);
    return { revoked: false, why: failure.message.slice(`${job.serverName}: `.length) };
  }
  return { revoked: true };
}
