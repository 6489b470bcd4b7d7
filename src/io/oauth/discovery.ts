import {
  buildDiscoveryUrls,
  discoverOAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/client/auth.js";
import {
  type AuthorizationServerMetadata,
  OAuthMetadataSchema,
  type OAuthProtectedResourceMetadata,
  OpenIdProviderDiscoveryMetadataSchema,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { fetchWithinOrigin } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SvcError } from "../../errors.js";
import { responseWithoutAbsentFields, withoutAbsentFields } from "./absentFields.js";
import type { OAuthFetches } from "./fetch.js";
import type { StoredMetadata } from "./tokenStore.js";
import { bearerParams } from "./wwwAuthenticate.js";

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export type FlowKind = "browser" | "device";

/** A URL for a message: its query (where some servers take an API key) left out. */
function withoutQuery(url: string): string {
  const i = url.search(/[?#]/);
  return i === -1 ? url : `${url.slice(0, i)}?…`;
}

/** A URL for a message: no query (see above) and no password in its userinfo (`https://u:…@host`). */
function shownUrl(url: string): string {
  return withoutQuery(url).replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@:]*:)[^/@]*@/, "$1…@");
}

function trimSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

/**
 * Issuer check (RFC 8414 section 3.3): the metadata's `issuer` must equal the URL the
 * protected resource advertised (ignoring one trailing slash). The only accepted mismatch is the
 * path-scoped advertisement: the resource advertised the issuer's well-known metadata URL itself,
 * `<origin>/.well-known/oauth-authorization-server<issuer path>` or
 * `<origin>/.well-known/openid-configuration<issuer path>` (RFC 8414 section 3.1 insertion), or
 * `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery appending), or
 * `<issuer>/.well-known/oauth-authorization-server` (RFC 8414 appended, as Okta custom servers serve it).
 */
export function issuerMatches(advertised: string, issuer: string | undefined): boolean {
  if (typeof issuer !== "string") return false;
  if (trimSlash(advertised) === trimSlash(issuer)) return true;
  let iss: URL;
  try {
    iss = new URL(issuer);
  } catch {
    return false;
  }
  const path = trimSlash(iss.pathname);
  const candidates = [
    `${iss.origin}/.well-known/oauth-authorization-server${path}`,
    `${iss.origin}/.well-known/openid-configuration${path}`,
    `${trimSlash(iss.href)}/.well-known/openid-configuration`,
    `${iss.origin}${path}/.well-known/oauth-authorization-server`,
  ];
  return candidates.includes(trimSlash(advertised));
}

/**
 * The MCP 2025-03-26 fallback, for a server without protected-resource metadata: the authorization
 * server is the MCP server's origin, and its metadata is read from that origin's well-known URL. No
 * issuer was advertised to compare with, so the check follows RFC 8414 section 3.3 against the URL
 * actually used: the issuer must be served by that same origin (a server such as the 2025-03-26
 * reference one names `<origin>/oauth`); an issuer on another origin is refused.
 */
export function fallbackIssuerMatches(origin: string, issuer: string | undefined): boolean {
  if (typeof issuer !== "string") return false;
  try {
    return new URL(issuer).origin === new URL(origin).origin;
  } catch {
    return false;
  }
}

/**
 * RFC 9728 section 3.3, read as "the resource covers the configured URL": same origin and the URL's
 * path at or under the resource's path. A trailing slash on either side is not a different resource
 * (FastMCP mounted at root advertises `https://host/mcp/` for `https://host/mcp`).
 */
export function resourceCovers(serverUrl: string, resource: unknown): boolean {
  let requested: URL;
  let advertised: URL;
  try {
    requested = new URL(serverUrl);
    advertised = new URL(String(resource));
  } catch {
    return false;
  }
  if (typeof resource !== "string" || requested.origin !== advertised.origin) return false;
  const withSlash = (path: string) => (path.endsWith("/") ? path : `${path}/`);
  return withSlash(requested.pathname).startsWith(withSlash(advertised.pathname));
}

const ENDPOINTS = [
  "authorization_endpoint",
  "token_endpoint",
  "registration_endpoint",
  "device_authorization_endpoint",
] as const;

/**
 * An https issuer whose endpoints are not all https would receive codes, verifiers, secrets and
 * tokens in clear text (OAuth 2.1 section 1.5; MCP: authorization server endpoints are served over
 * HTTPS). A plain-http issuer (a local or docker-network server) is used as it is.
 */
function cleartextEndpoint(meta: AuthorizationServerMetadata): string | undefined {
  if (!/^https:/i.test(String(meta.issuer))) return undefined;
  const fields = meta as unknown as Record<string, unknown>;
  for (const name of ENDPOINTS) {
    const value = fields[name];
    if (typeof value === "string" && !/^https:/i.test(value))
      return `its ${name} ${withoutQuery(value)} is not https although its issuer is (codes and tokens would travel in clear text) — the server's operator must serve it over https`;
  }
  return undefined;
}

/** An http URL whose requests never leave this machine: on `localhost` (or a name under it), 127.0.0.0/8 or [::1]. */
function onLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127(\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * An https MCP server's authorization server reached in clear text off this machine: the login's codes,
 * secrets and tokens would travel less protected than the server's own traffic (OAuth 2.1 section 1.5; MCP:
 * authorization server endpoints are served over HTTPS). `urls` are the advertised server, or its metadata's
 * issuer and endpoints; undefined when none is plain http beyond loopback, or the MCP server is plain http
 * itself (a local or docker-network setup, where the login goes as the MCP traffic does).
 */
export function cleartextUnderHttps(
  serverUrl: string,
  urls: Readonly<Record<string, unknown>>,
): string | undefined {
  if (!/^https:/i.test(serverUrl)) return undefined;
  for (const [name, value] of Object.entries(urls)) {
    if (typeof value === "string" && /^http:/i.test(value) && !onLoopback(value))
      return `${name === "" ? "it" : `its ${name} ${withoutQuery(value)}`} is plain http although the MCP server ${shownUrl(serverUrl)} is https (codes and tokens would travel in clear text) — the server's operator must serve it over https`;
  }
  return undefined;
}

/** The issuer and endpoints of a metadata document, by name (for `cleartextUnderHttps`). */
function metadataUrls(meta: AuthorizationServerMetadata): Record<string, unknown> {
  const fields = meta as unknown as Record<string, unknown>;
  return Object.fromEntries(["issuer", ...ENDPOINTS].map((name) => [name, fields[name]]));
}

/** Why an authorization server cannot serve `flow` (its grants and response types), or undefined when it can. */
export function unsupportedReason(meta: AuthorizationServerMetadata, flow: FlowKind): string | undefined {
  if (flow === "browser") {
    // The authorization code flow: a server listing other response types only would refuse the request.
    if (!meta.response_types_supported?.includes("code")) {
      return "does not list the code response type in response_types_supported";
    }
    if (!meta.code_challenge_methods_supported?.includes("S256")) {
      return "does not advertise PKCE S256 in code_challenge_methods_supported";
    }
    return undefined;
  }
  if (typeof (meta as { device_authorization_endpoint?: unknown }).device_authorization_endpoint !== "string")
    return "has no device_authorization_endpoint";
  // RFC 8628 section 4: the device_authorization_endpoint is how a server advertises the grant. Servers
  // that list their grants (Keycloak, Okta, Google) must list it; those that list none (Microsoft Entra ID,
  // Auth0) offer it through the endpoint alone.
  const grants = meta.grant_types_supported;
  if (grants !== undefined && !grants.includes(DEVICE_GRANT))
    return `does not list ${DEVICE_GRANT} in grant_types_supported`;
  return undefined;
}

/**
 * The SDK parses OpenID Connect discovery documents with a schema that drops every field it does not
 * list: `device_authorization_endpoint` (RFC 8628), `authorization_response_iss_parameter_supported`
 * (RFC 9207) and the like. The parsed, validated fields are kept; those it dropped come from the raw
 * document that answered, as an RFC 8414 document keeps them.
 */
export function withUnlistedFields(
  parsed: AuthorizationServerMetadata,
  raw: unknown,
): AuthorizationServerMetadata {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return parsed;
  return { ...(raw as Record<string, unknown>), ...parsed } as AuthorizationServerMetadata;
}

/** Whether a well-known metadata URL is OpenID Connect discovery (validated with its schema). */
function isOpenIdConfiguration(url: string): boolean {
  return new URL(url).pathname.includes("/.well-known/openid-configuration");
}

/**
 * The metadata at one well-known URL, or undefined when the URL gives none: an error status (a 404, and a
 * 5xx too), no answer, or a 200 that is no metadata document (the HTML page of a web app's catch-all
 * route); such a 200 is kept in `unusable` (the first one), for the error when no URL gives metadata.
 */
async function metadataAt(
  url: string,
  fetches: OAuthFetches,
  unusable: { error?: unknown },
): Promise<AuthorizationServerMetadata | undefined> {
  let res: Response;
  try {
    // Redirects are followed within the origin only, as the SDK's discovery does.
    res = await fetchWithinOrigin(fetches.discovery)(url, { headers: { accept: "application/json" } });
  } catch {
    return undefined;
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  try {
    const body = withoutAbsentFields(await res.json());
    const schema = isOpenIdConfiguration(url) ? OpenIdProviderDiscoveryMetadataSchema : OAuthMetadataSchema;
    return withUnlistedFields(schema.parse(body) as AuthorizationServerMetadata, body);
  } catch (err) {
    unusable.error ??= err;
    return undefined;
  }
}

async function fetchAsMetadata(
  advertised: string,
  fetches: OAuthFetches,
): Promise<AuthorizationServerMetadata | undefined> {
  const { origin, pathname } = new URL(advertised);
  if (!pathname.includes("/.well-known/")) {
    // The URLs the MCP spec lists, in its order; then, for an issuer with a path, RFC 8414 metadata appended
    // to it (Okta custom authorization servers), last so the spec's order stands. Each URL that gives no
    // metadata (a 404, a 5xx, an HTML page answered 200) is passed over for the next.
    const path = trimSlash(pathname);
    const urls = [
      ...buildDiscoveryUrls(advertised).map((u) => u.url.href),
      ...(path === "" ? [] : [`${origin}${path}/.well-known/oauth-authorization-server`]),
    ];
    const unusable: { error?: unknown } = {};
    for (const url of urls) {
      const meta = await metadataAt(url, fetches, unusable);
      if (meta !== undefined) return meta;
    }
    if (unusable.error !== undefined) throw unusable.error;
    return undefined;
  }
  // The path-scoped advertisement: the metadata URL itself, validated as discovery validates it.
  const res = await fetches.discovery(advertised, { headers: { accept: "application/json" } });
  if (!res.ok) return undefined;
  const body = withoutAbsentFields(await res.json());
  const schema = isOpenIdConfiguration(advertised)
    ? OpenIdProviderDiscoveryMetadataSchema
    : OAuthMetadataSchema;
  return withUnlistedFields(schema.parse(body) as AuthorizationServerMetadata, body);
}

/** A schema failure as "jwks_uri: expected string, received undefined, …" instead of zod's JSON dump. */
export function unusableReason(err: unknown): string {
  const issues = (err as { issues?: Array<{ path?: PropertyKey[]; message?: string }> }).issues;
  if (!Array.isArray(issues)) return (err as Error).message;
  const shown = issues
    .slice(0, 4)
    .map(
      (i) =>
        `${(i.path ?? []).map(String).join(".") || "document"}: ${(i.message ?? "").replace(/^Invalid input: /, "")}`,
    );
  return `${shown.join(", ")}${issues.length > 4 ? `, and ${issues.length - 4} more` : ""}`;
}

export function isValidationError(err: unknown): boolean {
  return Array.isArray((err as { issues?: unknown }).issues) || err instanceof SyntaxError;
}

/** The failed fetches (from the `from`th on), each once. */
function statuses(fetches: OAuthFetches, from = 0): string {
  // The SDK repeats a fetch that threw (its CORS retry): report each failure once.
  const lines = fetches.failures
    .slice(from)
    .map(
      (f) =>
        `${f.method} ${shownUrl(f.url)} → ${f.status === 0 ? `unreachable (${f.body.split(f.url).join(shownUrl(f.url))})` : f.status}`,
    );
  return [...new Set(lines)].join("; ");
}

interface ResourceChallenge {
  readonly metadataUrl?: URL;
  /** The scope the resource asks for (MCP scope selection: before the metadata's `scopes_supported`). */
  readonly scope?: string;
}

/** The Bearer challenge's parameters of a 401 answer to an unauthenticated `method` request (throws when unreachable). */
async function challengeOf(
  serverUrl: string,
  fetches: OAuthFetches,
  method: "GET" | "POST",
): Promise<Record<string, string> | undefined> {
  const res = await fetches.discovery(serverUrl, {
    method,
    headers: {
      accept: "application/json, text/event-stream",
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
    },
    ...(method === "POST" ? { body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }) } : {}),
  });
  await res.body?.cancel().catch(() => undefined);
  return res.status === 401 ? bearerParams(res.headers) : undefined;
}

/**
 * RFC 9728 section 5.1: an unauthenticated request to the resource is answered 401 with
 * `WWW-Authenticate: Bearer resource_metadata="<url>"` (and possibly `scope`). The probe's 401 is
 * expected, so it is not kept among the failures a discovery error reports.
 */
async function resourceChallenge(serverUrl: string, fetches: OAuthFetches): Promise<ResourceChallenge> {
  const recorded = fetches.failures.length;
  try {
    let params = await challengeOf(serverUrl, fetches, "GET");
    // A server that protects only POST (the MCP request a client sends first) answers GET 404/405.
    if (params === undefined) params = await challengeOf(serverUrl, fetches, "POST");
    if (params === undefined) return {};
    let metadataUrl: URL | undefined;
    try {
      metadataUrl = params.resource_metadata ? new URL(params.resource_metadata) : undefined;
    } catch {
      metadataUrl = undefined;
    }
    const scope = params.scope?.trim();
    return { ...(metadataUrl ? { metadataUrl } : {}), ...(scope ? { scope } : {}) };
  } catch {
    return {};
  } finally {
    fetches.failures.length = recorded;
  }
}

/**
 * The resource's RFC 9728 metadata: from the URL its 401 challenge names, else from the well-known
 * locations. Its `resource` must cover the configured URL (RFC 9728 section 3.3: same origin, the
 * URL's path under the resource's), or a server could obtain tokens meant for another resource.
 * Undefined when there is none: the server's origin is then its own authorization server (MCP
 * 2025-03-26 fallback). With the URL that served it, for an error about its content.
 */
async function protectedResourceMetadata(
  serverName: string,
  serverUrl: string,
  fetches: OAuthFetches,
  advertised: URL | undefined,
  invalid: string[],
): Promise<{ readonly metadata: OAuthProtectedResourceMetadata; readonly url: string } | undefined> {
  let metadata: OAuthProtectedResourceMetadata | undefined;
  // The location that answered, so a document that fails validation can be named.
  let answered = "";
  /** Every URL asked, so the root location is not asked twice. */
  const asked = new Set<string>();
  const recording: OAuthFetches["discovery"] = async (url, init) => {
    asked.add(String(url));
    const res = await fetches.discovery(url, init);
    if (res.ok) answered = String(url);
    return responseWithoutAbsentFields(res);
  };
  // The SDK's well-known lookup goes on to the root location only after a 4xx at the path-inserted one; a
  // 5xx there, or a 200 that is no metadata (a web app's HTML page), is passed over for the root one too.
  const root = new URL("/.well-known/oauth-protected-resource", serverUrl);
  const locations: Array<{ resourceMetadataUrl?: URL }> = [
    ...(advertised === undefined ? [] : [{ resourceMetadataUrl: advertised }]),
    {},
    { resourceMetadataUrl: root },
  ];
  for (const options of locations) {
    if (options.resourceMetadataUrl === root && asked.has(root.href)) continue;
    try {
      metadata = await discoverOAuthProtectedResourceMetadata(serverUrl, options, recording);
      break;
    } catch (err) {
      // A document that was found but is unusable is reported with the discovery error; try the next location.
      // The challenge usually names the path-inserted well-known URL, which the next location fetches again:
      // the same document is named once.
      const reason = `${shownUrl(answered)}: protected resource metadata unusable (${unusableReason(err)})`;
      if (isValidationError(err) && !invalid.includes(reason)) invalid.push(reason);
    }
  }
  if (metadata === undefined) return undefined;
  if (!resourceCovers(serverUrl, metadata.resource)) {
    throw new SvcError(
      "oauth",
      `${serverName}: the server's protected resource metadata names resource "${String(metadata.resource)}", which does not cover ${withoutQuery(serverUrl)} — login refused (RFC 9728 section 3.3). Check mcp_servers.${serverName}.url.`,
    );
  }
  return { metadata, url: answered };
}

/**
 * The endpoints MCP 2025-03-26 has a client use at the server's origin when it serves no metadata:
 * `/authorize`, `/token` and `/register`, with the code flow and PKCE S256 that revision requires.
 */
function defaultEndpoints(origin: string): AuthorizationServerMetadata {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
  };
}

/**
 * RFC 9728 protected-resource metadata, then each advertised authorization server in order
 * (RFC 8414 / OIDC discovery); the first whose issuer checks out and that supports `flow` wins.
 */
export async function discoverForFlow(
  serverName: string,
  serverUrl: string,
  flow: FlowKind,
  fetches: OAuthFetches,
  now = Date.now(),
  /** The named profile whose login this is: the advice to log in names it. */
  profile?: string,
  /** `oauth.flow: device` is in the entry (not only `--flow device` or a device grant): the advice may say to remove it. */
  deviceConfigured = false,
): Promise<StoredMetadata> {
  /** Metadata that was fetched but failed validation (the fetch failures say nothing about it). */
  const invalid: string[] = [];
  const challenge = await resourceChallenge(serverUrl, fetches);
  const served = await protectedResourceMetadata(
    serverName,
    serverUrl,
    fetches,
    challenge.metadataUrl,
    invalid,
  );
  const resourceMetadata = served?.metadata;
  // Only a server without protected-resource metadata is its own authorization server (MCP 2025-03-26): one
  // whose document names none has said nothing of where to log in, and its origin is no better a guess
  // than any other (a registration POSTed there goes to the resource server).
  if (served !== undefined && !served.metadata.authorization_servers?.length)
    throw new SvcError(
      "oauth",
      `${serverName}: OAuth discovery failed — ${shownUrl(served.url)}: protected resource metadata lists no authorization_servers — the server's operator must name its authorization server`,
    );
  const fallback = resourceMetadata === undefined;
  const advertised = resourceMetadata?.authorization_servers ?? [new URL(serverUrl).origin];
  const rejected: string[] = [];
  /** Rejections for clear text alone: the advice is then the operator's https, whatever the flow. */
  let cleartext = 0;
  let found = 0;
  for (const as of advertised) {
    // Refused before any request: its metadata would come in clear text, and could be anyone's.
    const plain = cleartextUnderHttps(serverUrl, { "": as });
    if (plain !== undefined) {
      found++;
      cleartext++;
      rejected.push(`${as}: ${plain}`);
      continue;
    }
    let meta: AuthorizationServerMetadata | undefined;
    const tried = fetches.failures.length;
    try {
      meta = await fetchAsMetadata(as, fetches);
    } catch (err) {
      const reason = `${as}: metadata unusable (${unusableReason(err)})`;
      rejected.push(reason);
      if (isValidationError(err)) invalid.push(reason);
      continue;
    }
    if (meta === undefined) {
      // Named when another server's metadata was found but would not do: this one may be the one meant.
      rejected.push(`${as}: no metadata found (${statuses(fetches, tried) || "no answer"})`);
      continue;
    }
    found++;
    if (fallback ? !fallbackIssuerMatches(as, meta.issuer) : !issuerMatches(as, meta.issuer)) {
      rejected.push(
        fallback
          ? `${as}: metadata issuer "${String(meta.issuer)}" is not on the server's origin`
          : `${as}: metadata issuer "${String(meta.issuer)}" does not match the advertised URL`,
      );
      continue;
    }
    const plainEndpoint = cleartextUnderHttps(serverUrl, metadataUrls(meta)) ?? cleartextEndpoint(meta);
    if (plainEndpoint !== undefined) {
      cleartext++;
      rejected.push(`${as}: ${plainEndpoint}`);
      continue;
    }
    const reason = unsupportedReason(meta, flow);
    if (reason !== undefined) {
      rejected.push(`${as}: ${reason}`);
      continue;
    }
    return {
      ...(resourceMetadata ? { resourceMetadata } : {}),
      ...(challenge.scope !== undefined ? { challengedScope: challenge.scope } : {}),
      authorizationServerUrl: as,
      authorizationServerMetadata: meta,
      fetched_at: now,
    };
  }
  if (found === 0) {
    // Spec 7: the fetch statuses lead; a document that was fetched but failed validation follows.
    const reasons = [statuses(fetches), ...invalid].filter((r) => r !== "").join("; ");
    // A server that answered without any metadata (no document at all, not a broken one) gets the default
    // endpoints at its origin, as MCP 2025-03-26 has clients do; an error there leads with these statuses.
    if (
      fallback &&
      flow === "browser" &&
      invalid.length === 0 &&
      fetches.failures.some((f) => f.status !== 0)
    )
      return {
        ...(challenge.scope !== undefined ? { challengedScope: challenge.scope } : {}),
        authorizationServerUrl: advertised[0] as string,
        authorizationServerMetadata: defaultEndpoints(advertised[0] as string),
        fetched_at: now,
        guessedAfter: reasons,
      };
    throw new SvcError(
      "oauth",
      `${serverName}: OAuth discovery failed — ${reasons || "no metadata found"}. ` +
        `Check mcp_servers.${serverName}.url and that the server supports OAuth (RFC 9728 / RFC 8414).`,
    );
  }
  const hint =
    cleartext === rejected.length
      ? `ask the server's operator to serve its authorization server over https, or check mcp_servers.${serverName}.url`
      : flow === "device"
        ? `the device flow is not available here: log in with \`svc mcp login ${serverName}${profile === undefined ? "" : ` --profile ${profile}`} --flow browser\`${deviceConfigured ? " or remove oauth.flow: device" : ""}`
        : `ask the server's operator to correct its authorization server metadata (svc needs an issuer that matches the advertised URL, the code response type, PKCE S256 and https endpoints), or check mcp_servers.${serverName}.url`;
  throw new SvcError(
    "oauth",
    `${serverName}: no usable authorization server — ${rejected.join("; ")}. Fix: ${hint}.`,
  );
}
