import { registerClient } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientInformationMixed,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { LOOPBACK_REDIRECT_HOSTS } from "../../config/redirectUri.js";
import { SvcError } from "../../errors.js";
import { DocumentUnreachable, validateClientMetadataDocument } from "../../io/oauth/cimd.js";
import { DEVICE_GRANT, type FlowKind, isValidationError, unusableReason } from "../../io/oauth/discovery.js";
import type { OAuthFetches } from "../../io/oauth/fetch.js";
import type { OAuthSettings } from "../../io/oauth/settings.js";
import type { StoredClient, StoredMetadata, TokenStore } from "../../io/oauth/tokenStore.js";
import type { OAuthJob } from "./context.js";
import { discoverForJob } from "./discoverForJob.js";
import { registeredScopeCovers, scopeFor } from "./loginScope.js";
import { tokenEndpointError } from "./tokenErrors.js";

export interface ClientChoice {
  readonly info: OAuthClientInformationMixed;
  /** `configured`: pre-registered values from config, never written to disk. */
  readonly kind: "configured" | "dcr" | "cimd";
  /** A registration stored by an earlier login, which the authorization server may have forgotten since. */
  readonly reused?: true;
}

/** Pre-registered `oauth.client_id` (+ secret and auth method), when configured. */
export function configuredClient(settings: OAuthSettings): ClientChoice | undefined {
  if (settings.client_id === undefined) return undefined;
  return {
    kind: "configured",
    info: {
      client_id: settings.client_id,
      ...(settings.client_secret !== undefined ? { client_secret: settings.client_secret } : {}),
      ...(settings.token_endpoint_auth_method !== undefined
        ? { token_endpoint_auth_method: settings.token_endpoint_auth_method }
        : {}),
      redirect_uris: [],
    } as OAuthClientInformationFull,
  };
}

/**
 * Spec 5.6: the callback is pinned to 27890–27894 only while a client metadata document could
 * still be used; any of the listed conditions means a random port.
 */
export function wantsPinnedPort(settings: OAuthSettings, store: TokenStore, freshClient = false): boolean {
  if (
    settings.client_id !== undefined ||
    settings.client_secret !== undefined ||
    settings.client_name !== undefined ||
    settings.token_endpoint_auth_method !== undefined ||
    settings.redirect_uri !== undefined ||
    settings.redirect_port !== undefined ||
    settings.cimd === false
  ) {
    return false;
  }
  // A stored document client is no registration: the document declares only the pinned ports.
  const stored = freshClient ? undefined : store.readClient();
  if (store.cimdOff() || (stored !== undefined && stored.kind !== "cimd")) return false;
  const cached = store.readMetadata();
  if (
    cached !== undefined &&
    cached.authorizationServerMetadata.client_id_metadata_document_supported !== true
  )
    return false;
  return true;
}

/**
 * The loopback port a stored registration named for its callback (`http://127.0.0.1:<port>/callback`),
 * tried first when the login reuses it: a server that admits only the exact URI registered (although
 * RFC 8252 7.3 asks it to admit any loopback port) then accepts the login. Undefined when config fixes
 * the callback, the login registers anew, or the registration named no such URI.
 */
export function registeredCallbackPort(
  settings: OAuthSettings,
  store: TokenStore,
  freshClient = false,
): number | undefined {
  if (freshClient || settings.client_id !== undefined) return undefined;
  if (settings.redirect_uri !== undefined || settings.redirect_port !== undefined) return undefined;
  const stored = store.readClient();
  if (stored === undefined || stored.kind !== "dcr") return undefined;
  for (const uri of Array.isArray(stored.redirect_uris) ? stored.redirect_uris : []) {
    if (typeof uri !== "string") continue;
    const match = /^http:\/\/127\.0\.0\.1:(\d{1,5})\/callback$/.exec(uri);
    const port = match === null ? 0 : Number(match[1]);
    if (port > 0 && port < 65536) return port;
  }
  return undefined;
}

/**
 * RFC 7591 section 3.2.1: `client_secret_expires_at` (seconds since the epoch, 0 = never) past means the
 * registration's secret no longer authenticates the client, so a login registers again.
 */
export function secretExpired(
  client: { client_secret_expires_at?: number | undefined },
  now: number,
): boolean {
  const at = client.client_secret_expires_at;
  return typeof at === "number" && at > 0 && at * 1000 <= now;
}

/**
 * Whether a registration's redirect URIs admit this login's callback: the same URI, or one that differs
 * only in the port of a loopback host (RFC 8252 section 7.3, the only variance a server allows). A
 * registration made for another host or path (`oauth.redirect_uri` changed since) would be refused at
 * the authorization endpoint, in the browser, and the login would only time out.
 */
export function registeredFor(registered: readonly string[] | undefined, redirectUri: string): boolean {
  if (registered === undefined || registered.length === 0) return true;
  let wanted: URL;
  try {
    wanted = new URL(redirectUri);
  } catch {
    return true;
  }
  return registered.some((uri) => {
    if (uri === redirectUri) return true;
    try {
      const url = new URL(uri);
      return (
        LOOPBACK_REDIRECT_HOSTS.includes(url.hostname) &&
        url.protocol === wanted.protocol &&
        url.hostname === wanted.hostname &&
        url.pathname === wanted.pathname &&
        url.search === wanted.search
      );
    } catch {
      return false;
    }
  });
}

function storedUsable(
  stored: StoredClient | undefined,
  meta: StoredMetadata,
  flow: FlowKind,
  now: number,
  redirectUri?: string,
  scope?: string,
): stored is StoredClient {
  if (stored === undefined || stored.issuer !== meta.authorizationServerUrl) return false;
  if (stored.client_secret !== undefined && secretExpired(stored, now)) return false;
  // Registered with a scope that lacks one this login asks for (a step-up since): a server that lets a
  // client ask only for its registered scopes would refuse the login.
  if (stored.kind === "dcr" && !registeredScopeCovers(stored.scope, scope)) return false;
  if (flow === "device") return stored.kind === "dcr" && (stored.grant_types ?? []).includes(DEVICE_GRANT);
  // A document client is chosen afresh each login (below): only while it is still configured, allowed,
  // and the callback is on a port the document declares.
  if (stored.kind === "cimd") return false;
  if (redirectUri !== undefined && !registeredFor(stored.redirect_uris, redirectUri)) return false;
  // A device login's registration (device_code + refresh_token) has no authorization_code grant: the
  // server would refuse the authorization request. RFC 7591 2: no grant_types means authorization_code.
  return (stored.grant_types ?? ["authorization_code"]).includes("authorization_code");
}

/**
 * The client authentication a dynamic registration asks for: `none` (a public native client, RFC 8252
 * 8.4) unless the server lists methods without it; then the secret method it lists (basic first).
 */
export function registrationAuthMethod(meta: {
  token_endpoint_auth_methods_supported?: string[] | undefined;
}): string {
  const supported = meta.token_endpoint_auth_methods_supported;
  if (supported === undefined || supported.length === 0 || supported.includes("none")) return "none";
  if (supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "none";
}

/**
 * Picks the client for a login: configured values; a stored registration for this issuer; the client
 * metadata document when the server supports it (browser flow on a pinned callback port only); else
 * dynamic registration.
 */
export async function chooseClient(args: {
  serverName: string;
  settings: OAuthSettings;
  store: TokenStore;
  meta: StoredMetadata;
  flow: FlowKind;
  redirectUri?: string;
  /** The scope the login asks for: registered with a new client, and required of a stored one. */
  scope?: string;
  fetches: OAuthFetches;
  /** The document is not presented: it was rejected in this login, or the callback is not on a pinned port. */
  avoidDocument?: boolean;
  freshClient?: boolean;
  now?: number;
  /** Tells the user of a document presented without being verified here. */
  warn?: (text: string) => void;
}): Promise<ClientChoice> {
  const { serverName, settings, store, meta, flow, fetches } = args;
  const configured = configuredClient(settings);
  if (configured !== undefined) return configured;
  const stored = args.freshClient ? undefined : store.readClient();
  if (storedUsable(stored, meta, flow, args.now ?? Date.now(), args.redirectUri, args.scope))
    return { kind: stored.kind, info: stored, ...(stored.kind === "dcr" ? { reused: true as const } : {}) };
  const asMeta = meta.authorizationServerMetadata;
  const documentUrl = settings.client_metadata_url;
  if (
    flow === "browser" &&
    documentUrl !== undefined &&
    settings.cimd !== false &&
    !args.avoidDocument &&
    !store.cimdOff() &&
    asMeta.client_id_metadata_document_supported === true
  ) {
    await validateClientMetadataDocument(documentUrl, fetches.discovery).catch((err: unknown) => {
      // svc's network can differ from the authorization server's (svc behind a firewall, the document on
      // the public internet): the server fetches and verifies the document itself, so it is presented.
      if (err instanceof DocumentUnreachable) {
        args.warn?.(
          `${serverName}: mcp_servers.${serverName}.${err.message}; presenting it anyway — the authorization server fetches and verifies it`,
        );
        return;
      }
      // Name the server entry whose key is at fault.
      if (err instanceof SvcError)
        throw new SvcError("oauth", `${serverName}: mcp_servers.${serverName}.${err.message}`, {
          cause: err,
        });
      throw err;
    });
    return { kind: "cimd", info: { client_id: documentUrl } };
  }
  if (asMeta.registration_endpoint === undefined) {
    throw new SvcError(
      "oauth",
      `${serverName}: the authorization server ${meta.authorizationServerUrl} offers no dynamic client registration — register a client there and set oauth.client_id (and client_secret if issued) under mcp_servers.${serverName}`,
    );
  }
  const clientMetadata = {
    client_name: settings.client_name ?? "svc",
    redirect_uris: args.redirectUri !== undefined ? [args.redirectUri] : [],
    grant_types:
      flow === "device" ? [DEVICE_GRANT, "refresh_token"] : ["authorization_code", "refresh_token"],
    response_types: flow === "device" ? [] : ["code"],
    token_endpoint_auth_method: settings.token_endpoint_auth_method ?? registrationAuthMethod(asMeta),
    application_type: "native",
    // The scope the login asks for (as the MCP SDK's client registers it): servers such as Ory Hydra let a
    // client ask only for the scopes it registered, and give one registered without any a default set.
    ...(args.scope !== undefined ? { scope: args.scope } : {}),
  };
  let full: OAuthClientInformationFull;
  // RFC 7591 3.2.1 / RFC 7592: the SDK's schema drops the registration management credentials; they
  // are read from the answer itself and kept with the registration (mode 0600).
  let management: Record<string, string> = {};
  /** The status of a success answer, for an error naming what in it was unusable. */
  let succeeded: number | undefined;
  const capturing: OAuthFetches["discovery"] = async (url, init) => {
    const res = await fetches.discovery(url, init);
    if (res.ok) {
      succeeded = res.status;
      const body = (await res
        .clone()
        .json()
        .catch(() => undefined)) as Record<string, unknown> | undefined;
      management = Object.fromEntries(
        ["registration_access_token", "registration_client_uri"].flatMap((k) =>
          typeof body?.[k] === "string" ? [[k, body[k] as string]] : [],
        ),
      );
      // Fields written `null` (`"client_secret": null` for a public client, `"grant_types": null` from a
      // server that serializes every field of its model) are the absent fields RFC 7591 3.2.1 means.
      const nulls = body !== null && typeof body === "object" && Object.values(body).includes(null);
      const given =
        body !== null && typeof body === "object"
          ? Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null))
          : body;
      // A server that answers the client_id (and secret) without echoing the registered metadata, which
      // RFC 7591 3.2.1 asks it to return, registered what it was sent: the redirect URIs and grants svc
      // asked for stand in for the ones left out (the SDK's schema requires redirect_uris).
      const missing = (["redirect_uris", "grant_types"] as const).filter((k) => given?.[k] === undefined);
      if (given !== null && typeof given === "object" && (missing.length > 0 || nulls)) {
        const headers = new Headers(res.headers);
        headers.delete("content-length");
        headers.delete("content-encoding");
        await res.body?.cancel().catch(() => undefined);
        const filled = Object.fromEntries(missing.map((k) => [k, clientMetadata[k]]));
        return new Response(JSON.stringify({ ...given, ...filled }), { status: res.status, headers });
      }
    }
    return res;
  };
  try {
    full = {
      ...(await registerClient(meta.authorizationServerUrl, {
        metadata: asMeta,
        clientMetadata,
        fetchFn: capturing,
      })),
      ...management,
    };
  } catch (err) {
    // The status and a redacted excerpt of what the endpoint answered: the SDK's message keeps only an
    // error_description (empty when the server sent just the code) or quotes a whole HTML page.
    const failure =
      succeeded !== undefined && isValidationError(err)
        ? new SvcError(
            "oauth",
            `${serverName}: dynamic client registration failed — ${asMeta.registration_endpoint} answered ${succeeded} with no usable registration (${unusableReason(err)})`,
          )
        : tokenEndpointError(
            serverName,
            "dynamic client registration",
            fetches,
            asMeta.registration_endpoint,
            err,
          );
    if (meta.guessedAfter !== undefined) {
      // No metadata anywhere: the discovery statuses lead, then what the default /register answered.
      throw new SvcError(
        "oauth",
        `${serverName}: OAuth discovery failed — ${meta.guessedAfter}; ${failure.message.slice(serverName.length + 2)} (the default registration endpoint of a server without metadata). Check mcp_servers.${serverName}.url and that the server supports OAuth (RFC 9728 / RFC 8414).`,
        { cause: err },
      );
    }
    throw new SvcError(
      "oauth",
      `${failure.message} — register a client there and set mcp_servers.${serverName}.oauth.client_id, or fix what the server names`,
      { cause: err },
    );
  }
  return { kind: "dcr", info: full };
}

/** Discovery for `flow` (cached in `<server>.meta.json`), then the client to present to that server. */
export async function discoverAndIdentify(
  job: OAuthJob,
  flow: FlowKind,
  fetches: OAuthFetches,
  extra: { redirectUri?: string; documentRetried?: boolean; pinnedCallback?: boolean } = {},
): Promise<{ meta: StoredMetadata; client: ClientChoice }> {
  const discovered = await discoverForJob(job, flow, fetches);
  // A scope the resource required earlier (step-up) is asked for again from the same server.
  const previous = job.store.readMetadata();
  const meta =
    previous?.requiredScope !== undefined &&
    previous.authorizationServerUrl === discovered.authorizationServerUrl
      ? { ...discovered, requiredScope: previous.requiredScope }
      : discovered;
  job.store.saveMetadata(meta);
  const scope = scopeFor(job, meta);
  const retried = extra.documentRetried === true;
  const client = await chooseClient({
    serverName: job.serverName,
    settings: job.entry.oauth ?? {},
    store: job.store,
    meta,
    flow,
    fetches,
    ...(extra.redirectUri !== undefined ? { redirectUri: extra.redirectUri } : {}),
    ...(scope !== undefined ? { scope } : {}),
    // The document declares only the ten pinned callbacks: on any other port the server would refuse it.
    avoidDocument: retried || extra.pinnedCallback !== true,
    freshClient: job.freshClient === true || retried,
    now: job.now(),
    warn: (text) => {
      // Printed as a warning where the login is shown; the log keeps it at info, not said twice.
      job.logger.info({ server: job.serverName }, `[oauth] ${text}`);
      job.print(`warning: ${text}`);
    },
  });
  return { meta, client };
}
