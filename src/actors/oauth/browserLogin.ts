import { randomBytes } from "node:crypto";
import { exchangeAuthorization, startAuthorization } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { fromPromise } from "xstate";
import { SvcError } from "../../errors.js";
import { mayHaveNoLocalBrowser } from "../../io/oauth/browser.js";
import {
  AuthorizationRefusedError,
  bindCallbackServer,
  type CallbackResult,
  type CallbackServer,
} from "../../io/oauth/callbackServer.js";
import { unsupportedReason } from "../../io/oauth/discovery.js";
import type { OAuthFetches } from "../../io/oauth/fetch.js";
import { type StoredMetadata, type StoredTokens, toStoredTokens } from "../../io/oauth/tokenStore.js";
import {
  type ExchangeInput,
  oauthLoginMachine,
  type PreparedLogin,
  type PrepareInput,
} from "../../machines/oauthLogin.js";
import { sdkClientAuth } from "./clientAuth.js";
import {
  type ClientChoice,
  discoverAndIdentify,
  registeredCallbackPort,
  wantsPinnedPort,
} from "./clientIdentity.js";
import type { OAuthJob } from "./context.js";
import { jobFetches } from "./jobFetches.js";
import { invalidScopeAdvice, scopeFor } from "./loginScope.js";
import { resourceAdvice, resourceRefused, sentResource } from "./resourceIndicator.js";
import {
  DocumentRejectedError,
  lastFailureAt,
  loginAdvice,
  loginCommand,
  tokenEndpointError,
} from "./tokenErrors.js";

interface BrowserHandle {
  readonly job: OAuthJob;
  readonly fetches: OAuthFetches;
  readonly callback: CallbackServer;
  readonly meta: StoredMetadata;
  readonly client: ClientChoice;
  readonly codeVerifier: string;
  readonly state: string;
  readonly resource: string;
}

/**
 * RFC 8707 resource indicator: the protected resource's own identifier, else the server URL without
 * its query and fragment (the MCP canonical server URI; a `?api_key=` there must not travel to the
 * authorization server, the browser's history and the printed authorization URL).
 */
export function resourceFor(meta: StoredMetadata, serverUrl: string): string {
  if (meta.resourceMetadata?.resource !== undefined) return meta.resourceMetadata.resource;
  if (!/[?#]/.test(serverUrl)) return serverUrl;
  const url = new URL(serverUrl);
  url.search = "";
  url.hash = "";
  return url.href;
}

async function prepare({
  input: { input, documentRetried },
}: {
  input: PrepareInput;
}): Promise<PreparedLogin> {
  const job = input.job as OAuthJob;
  const settings = job.entry.oauth ?? {};
  const fetches = jobFetches(job, settings.user_agent);
  const preferredPort = documentRetried
    ? undefined
    : registeredCallbackPort(settings, job.store, job.freshClient);
  const callback = await bindCallbackServer({
    pinned: !documentRetried && wantsPinnedPort(settings, job.store, job.freshClient === true),
    ...(preferredPort !== undefined ? { preferredPort } : {}),
    ...(settings.redirect_port !== undefined ? { port: settings.redirect_port } : {}),
    ...(settings.redirect_uri !== undefined ? { redirectUri: settings.redirect_uri } : {}),
  }).catch((err: unknown) => {
    // Name the server entry whose oauth.redirect_uri / redirect_port is the problem.
    if (err instanceof SvcError && err.message.startsWith("oauth."))
      throw new SvcError("oauth", `${job.serverName}: mcp_servers.${job.serverName}.${err.message}`, {
        cause: err,
      });
    throw err;
  });
  try {
    const { meta, client } = await discoverAndIdentify(job, "browser", fetches, {
      redirectUri: callback.redirectUri,
      documentRetried,
      pinnedCallback: callback.pinned,
    });
    const state = randomBytes(24).toString("base64url");
    const resource = resourceFor(meta, job.entry.url);
    const sent = sentResource(job, resource);
    const scope = scopeFor(job, meta);
    const { authorizationUrl, codeVerifier } = await startAuthorization(meta.authorizationServerUrl, {
      metadata: meta.authorizationServerMetadata,
      clientInformation: client.info,
      redirectUrl: callback.redirectUri,
      state,
      ...(sent !== undefined ? { resource: sent } : {}),
      ...(scope !== undefined ? { scope } : {}),
    });
    // The SDK asks for consent with offline_access (OpenID Connect's rule for issuing a refresh token);
    // where only administrators may consent (Entra ID tenants), that prompt stops every user's login.
    if (settings.consent_prompt === false) withoutConsentPrompt(authorizationUrl);
    const handle: BrowserHandle = { job, fetches, callback, meta, client, codeVerifier, state, resource };
    return { authorizationUrl: authorizationUrl.href, usesDocument: client.kind === "cimd", handle };
  } catch (err) {
    await callback.close();
    throw err;
  }
}

/** The redirect URI an authorization URL names (the callback on this machine's loopback). */
function callbackOf(authorizationUrl: string): string {
  try {
    return new URL(authorizationUrl).searchParams.get("redirect_uri") ?? "this machine's loopback";
  } catch {
    return "this machine's loopback";
  }
}

/** `url` without `prompt=consent` (any other prompt value it carries stays). */
function withoutConsentPrompt(url: URL): void {
  const kept = url.searchParams.getAll("prompt").filter((prompt) => prompt !== "consent");
  url.searchParams.delete("prompt");
  for (const prompt of kept) url.searchParams.append("prompt", prompt);
}

async function awaitRedirect({
  input,
  signal,
}: {
  input: PreparedLogin;
  signal: AbortSignal;
}): Promise<CallbackResult> {
  const h = input.handle as BrowserHandle;
  const closeOnAbort = () => void h.callback.close();
  signal.addEventListener("abort", closeOnAbort, { once: true });
  try {
    h.job.print(`Open this URL to log in to ${h.job.serverName}:\n  ${input.authorizationUrl}`);
    // The server answers an unknown client on its own page, never at the callback: only the user sees it.
    if (h.client.reused)
      h.job.print(
        `  (this login reuses the client registration of an earlier login; if the page says the client or its redirect URI is unknown — an authorization server that keeps clients in memory forgets them when it restarts — stop with Ctrl-C and run \`${loginCommand(h.job.serverName, "browser", h.job.profile)}\`, which registers a new one)`,
      );
    // Over SSH (or on a host without a display) the page opens, if at all, on another machine, whose
    // browser cannot reach the callback on this one's loopback: the device flow works there, when offered.
    if (
      mayHaveNoLocalBrowser() &&
      unsupportedReason(h.meta.authorizationServerMetadata, "device") === undefined
    )
      h.job.print(
        `  (if no browser on this machine opens it — over SSH, a browser elsewhere cannot reach the redirect to ${callbackOf(input.authorizationUrl)} here — stop with Ctrl-C and run \`${loginCommand(h.job.serverName, "device", h.job.profile)}\`, which this authorization server offers)`,
      );
    h.job.openBrowser(input.authorizationUrl).catch((err: unknown) => {
      h.job.logger.warn(
        { server: h.job.serverName, err: (err as Error).message },
        "[oauth] could not open a browser; use the printed URL",
      );
    });
    const name = h.job.serverName;
    const metadata = h.meta.authorizationServerMetadata as typeof h.meta.authorizationServerMetadata & {
      authorization_response_iss_parameter_supported?: boolean;
    };
    let result: CallbackResult;
    try {
      result = await h.callback.waitForCode(h.state);
    } catch (err) {
      // An error redirect is the issuer's only when its iss says so: another server's (a mix-up) must not
      // be taken for this one's refusal, nor its advice given (RFC 9207 section 2.4 covers errors too).
      if (err instanceof AuthorizationRefusedError) checkIssuer(name, h, metadata, err.iss);
      const command = loginCommand(name, "browser", h.job.profile);
      // Another login would ask for the same scope: say which, and the key that changes it.
      const advice =
        err instanceof AuthorizationRefusedError && err.oauthError === "invalid_scope"
          ? invalidScopeAdvice(h.job, h.meta, command)
          : err instanceof AuthorizationRefusedError && resourceRefused(err.oauthError, err.message)
            ? resourceAdvice(h.job, command)
            : `run \`${command}\` to try again`;
      throw new SvcError("oauth", `${name}: the ${(err as Error).message} — ${advice}`, { cause: err });
    }
    checkIssuer(name, h, metadata, result.iss);
    return result;
  } finally {
    signal.removeEventListener("abort", closeOnAbort);
    await h.callback.close();
  }
}

/**
 * RFC 9207 section 2.4, the mix-up defence: a redirect's `iss` must be the issuer's, and present when the
 * issuer advertises it; else the login is refused.
 */
function checkIssuer(
  name: string,
  h: BrowserHandle,
  metadata: { issuer: string; authorization_response_iss_parameter_supported?: boolean },
  iss: string | undefined,
): void {
  const issuer = metadata.issuer;
  const retry = `run \`${loginCommand(name, "browser", h.job.profile)}\` to try again, and tell the server's operator if it repeats`;
  if (iss === undefined && metadata.authorization_response_iss_parameter_supported === true)
    throw new SvcError(
      "oauth",
      `${name}: the redirect carried no iss although ${issuer} advertises it (RFC 9207) — login refused; ${retry}`,
    );
  if (iss !== undefined && iss !== issuer)
    throw new SvcError(
      "oauth",
      `${name}: the redirect came from issuer ${iss}, expected ${issuer} — login refused; ${retry}`,
    );
}

async function exchange({ input }: { input: ExchangeInput }): Promise<StoredTokens> {
  const h = input.prepared.handle as BrowserHandle;
  const { job, meta, client, fetches } = h;
  const endpoint = meta.authorizationServerMetadata.token_endpoint;
  let tokens: OAuthTokens;
  try {
    tokens = await exchangeAuthorization(meta.authorizationServerUrl, {
      metadata: meta.authorizationServerMetadata,
      clientInformation: client.info,
      authorizationCode: (input.code as CallbackResult).code,
      codeVerifier: h.codeVerifier,
      redirectUri: h.callback.redirectUri,
      ...(sentResource(job, h.resource) !== undefined ? { resource: h.resource } : {}),
      addClientAuthentication: sdkClientAuth(job.serverName, client.info),
      fetchFn: fetches.token,
    });
  } catch (err) {
    const failure = lastFailureAt(fetches, endpoint);
    if (client.kind === "cimd" && failure?.error === "invalid_client") {
      job.logger.warn(
        { server: job.serverName },
        "[oauth] the authorization server rejected the client metadata document (invalid_client); using dynamic registration from now on",
      );
      // The stored registration stays: the tokens saved with it keep working if the retry fails too.
      job.store.recordCimdOff("invalid_client at the token endpoint");
      throw new DocumentRejectedError(
        "oauth",
        `${job.serverName}: the authorization server rejected the client metadata document (invalid_client)`,
      );
    }
    throw tokenEndpointError(
      job.serverName,
      "token exchange",
      fetches,
      endpoint,
      err,
      failure !== undefined && resourceRefused(failure.error, failure.excerpt)
        ? resourceAdvice(job, loginCommand(job.serverName, "browser", job.profile))
        : loginAdvice(
            job.serverName,
            fetches,
            endpoint,
            client.kind === "configured",
            "browser",
            job.profile,
          ),
    );
  }
  const stored = toStoredTokens(tokens, {
    issuer: meta.authorizationServerUrl,
    resource: h.resource,
    flow: "browser",
    now: job.now(),
  });
  await job.store.withLock(() => {
    if (client.kind !== "configured") {
      job.store.saveClient({
        ...(client.info as OAuthClientInformationFull),
        issuer: meta.authorizationServerUrl,
        kind: client.kind,
      });
    } else {
      // Spec 4: a login clears the stale registration; the configured client is never stored.
      job.store.clearClient();
    }
    job.store.saveTokens(stored);
  });
  return stored;
}

/** The browser-login machine with its I/O actors. */
export const browserLoginLogic = oauthLoginMachine.provide({
  actors: {
    prepare: fromPromise(prepare),
    awaitRedirect: fromPromise<unknown, PreparedLogin>(awaitRedirect),
    exchange: fromPromise<unknown, ExchangeInput>(exchange),
  },
});
