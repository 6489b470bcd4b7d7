import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";

/** One request seen by a fake server. */
export interface Seen {
  readonly method: string;
  readonly path: string;
  /** The request's query (the authorize endpoint's parameters). */
  readonly query?: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
  readonly body: URLSearchParams;
  readonly raw: string;
}

export interface FakeAsOptions {
  /** Issuer to put in metadata; default: the server's own base URL. */
  readonly issuer?: (base: string) => string;
  readonly s256?: boolean;
  readonly cimd?: boolean;
  /** Token endpoint answers `invalid_client` for a URL client_id (the document). */
  readonly rejectDocument?: boolean;
  /** The authorize endpoint "cannot fetch" a document client: it shows an error page and never redirects. */
  readonly cannotFetchDocument?: boolean;
  readonly registration?: boolean;
  readonly device?: boolean;
  /** Answers of successive device polls before tokens are issued (`authorization_pending`, `slow_down`, ...). */
  readonly devicePolls?: string[];
  readonly deviceInterval?: number;
  /** Status of device poll errors: 400 per RFC 8628; GitHub answers them with 200. */
  readonly deviceErrorStatus?: number;
  /** The device authorization endpoint answers this instead of a code. */
  readonly deviceAuthorizationError?: { status: number; body: string };
  /** Device authorization answers `verification_url` instead of `verification_uri` (Google). */
  readonly verificationUrlField?: boolean;
  /** The first this many device polls get their connection closed without an answer. */
  readonly dropPolls?: number;
  /** The first `count` device polls (after the dropped ones) get this answer: a firewall's page, a proxy's 404. */
  readonly blockedPolls?: {
    readonly count: number;
    readonly status: number;
    readonly body: string;
    readonly contentType?: string;
  };
  /** `interval` sent with `slow_down` (GitHub states the new interval there). */
  readonly slowDownInterval?: number;
  /** Metadata endpoint status (e.g. 500 to make discovery fail). */
  readonly metadataStatus?: number;
  /**
   * Serve the metadata only at `<issuer>/.well-known/oauth-authorization-server` (RFC 8414 appended to
   * the issuer's path, as Okta custom authorization servers do); every other well-known URL answers 404.
   */
  readonly metadataAppendedOnly?: boolean;
  /** Token endpoint error for the authorization_code grant. */
  readonly tokenError?: { status: number; body: string };
  /** The refresh_token grant answers this (`contentType` default `application/json`: a firewall's page is `text/html`). */
  readonly refreshError?: { status: number; body: string; contentType?: string };
  readonly accessTtl?: number;
  /** Loopback address to listen on (default 127.0.0.1; 127.0.0.2 stands in for a non-loopback name). */
  readonly host?: string;
  /** RFC 9207: advertise `authorization_response_iss_parameter_supported`, and the `iss` the redirect carries. */
  readonly issParameter?: { readonly advertise: boolean; readonly send?: (issuer: string) => string };
  /** The authorize endpoint redirects back with this `error` (and the state) instead of a code. */
  readonly authorizeError?: string;
  /** Parameters the authorize endpoint's redirect carries twice: `code` with another value, the others repeated. */
  readonly repeatInRedirect?: readonly ("code" | "state" | "iss")[];
  /** `token_endpoint_auth_methods_supported`; a registration asking for another method is refused, and one asking for a secret method gets a secret. */
  readonly authMethods?: string[];
  /**
   * Reshapes each registration answer as a real server writes it (`client_secret: null` for a public
   * client, `grant_types: null` when the request named none, ...).
   */
  readonly registrationResponse?: (answer: Record<string, unknown>) => Record<string, unknown>;
  /** The registration endpoint answers this instead of registering (RFC 7591 section 3.2.2 errors). */
  readonly registrationError?: { status: number; body: string; contentType?: string };
  /** Serve HTTPS with this key and certificate (the issuer is then an https URL). */
  readonly tls?: { key: string; cert: string };
  /** Metadata fields replacing the defaults (e.g. an endpoint on another URL), given the base URL. */
  readonly metadata?: (base: string) => Record<string, unknown>;
  /** Reshapes each token response as a real server writes it (`expires_in` as a string, no `refresh_token`, ...). */
  readonly tokenResponse?: (tokens: Record<string, unknown>) => Record<string, unknown>;
  /**
   * The token endpoint answers form-encoded (`application/x-www-form-urlencoded`), tokens and errors alike,
   * whatever the request's Accept says (as GitHub answers a request without `Accept: application/json`).
   */
  readonly formEncodedTokenAnswers?: boolean;
  /**
   * Refuses the RFC 8707 `resource` parameter as Microsoft Entra ID's v2.0 endpoints do: the authorize
   * endpoint redirects back with `invalid_target` (AADSTS9010010), the token and device endpoints answer
   * 400 `invalid_request` (AADSTS901002).
   */
  readonly refuseResource?: boolean;
  /**
   * An authorization request with `prompt=consent` gets an "approval required" page and no redirect, as
   * Microsoft Entra ID answers it (AADSTS90095) in a tenant where users may not consent themselves, even
   * when an administrator consented for them.
   */
  readonly consentNeedsAdmin?: boolean;
  /** Reshapes the device authorization response (Entra v1 writes `expires_in` and `interval` as strings). */
  readonly deviceResponse?: (fields: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Refresh-token reuse detection, as real servers with rotating single-use refresh tokens do it (OAuth 2.0
   * Security BCP 4.14.2): a refresh token sent a second time is `invalid_grant` and revokes its whole
   * family (every access and refresh token descended from the same login).
   */
  readonly reuseRevokesFamily?: boolean;
  /**
   * Awaited after a refresh has rotated the token, before the answer is sent (a slow server or network:
   * the client may be gone by the time the answer leaves).
   */
  readonly refreshAnswered?: () => Promise<void>;
  /**
   * A client may ask only for the scopes it registered (Ory Hydra): a registration without `scope` gets
   * this default set, and an authorization or device authorization request for any other scope is
   * refused with `invalid_scope`.
   */
  readonly registeredScopesOnly?: { readonly defaultScope: string };
  /**
   * The authorize endpoint admits only a redirect URI the client registered, port included (as the MCP
   * SDK's demo provider does, although RFC 8252 7.3 asks servers to admit any loopback port): another one
   * gets a 400 page and no redirect (RFC 6749 4.1.2.1).
   */
  readonly exactRedirectUris?: boolean;
}

export interface FakeAs {
  readonly url: string;
  readonly seen: Seen[];
  readonly issued: string[];
  /** The scope granted with an access token (the scope of its authorization request). */
  scopeOf(accessToken: string): string | undefined;
  /** Whether an access token was issued here and is not revoked (alone, or with its family). */
  active(accessToken: string): boolean;
  /** Revokes one access token (a server-side revocation before its expiry). */
  revokeAccess(accessToken: string): void;
  /** Families revoked by refresh-token reuse. */
  readonly revokedFamilies: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function formEncoded(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) if (value !== undefined) form.set(key, String(value));
  res
    .writeHead(status, { "content-type": "application/x-www-form-urlencoded", "cache-control": "no-store" })
    .end(form.toString());
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify(body));
}

export async function startFakeAs(options: FakeAsOptions = {}): Promise<FakeAs> {
  const seen: Seen[] = [];
  const issued: string[] = [];
  const codes = new Map<
    string,
    { challenge: string; redirect: string; clientId: string; resource: string | null; scope: string }
  >();
  const refreshTokens = new Map<string, string>();
  const scopes = new Map<string, string>();
  /** Family (one per login) of every token issued, for reuse detection; refresh tokens already used. */
  const families = new Map<string, number>();
  const revoked = new Set<number>();
  const usedRefreshTokens = new Set<string>();
  const revokedAccess = new Set<string>();
  let nextFamily = 0;
  /** Scope each client registered (registeredScopesOnly). */
  const clientScopes = new Map<string, string>();
  /** Redirect URIs each client registered (exactRedirectUris). */
  const clientRedirects = new Map<string, unknown>();
  const scopeRefused = (clientId: string, asked: string | null): boolean => {
    if (options.registeredScopesOnly === undefined) return false;
    const allowed = (clientScopes.get(clientId) ?? "").split(" ");
    return (asked ?? "").split(" ").some((s) => s !== "" && !allowed.includes(s));
  };
  const polls = [...(options.devicePolls ?? [])];
  let drops = options.dropPolls ?? 0;
  /** Device polls answered `blockedPolls` so far. */
  let blocked = 0;
  let base = "";
  const newTokens = (scope = "", family = nextFamily++) => {
    const access = `at-${randomBytes(8).toString("hex")}`;
    const refresh = `rt-${randomBytes(8).toString("hex")}`;
    issued.push(access);
    families.set(access, family);
    families.set(refresh, family);
    refreshTokens.set(refresh, scope);
    scopes.set(access, scope);
    const tokens = {
      access_token: access,
      token_type: "Bearer",
      expires_in: options.accessTtl ?? 3600,
      refresh_token: refresh,
    };
    return options.tokenResponse ? options.tokenResponse(tokens) : tokens;
  };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", base);
    const raw = await readBody(req);
    const body = new URLSearchParams(req.headers["content-type"]?.includes("json") ? "" : raw);
    seen.push({
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      raw,
    });
    const issuer = options.issuer ? options.issuer(base) : base;
    if (
      options.metadataAppendedOnly
        ? url.pathname ===
          `${new URL(issuer).pathname.replace(/\/$/, "")}/.well-known/oauth-authorization-server`
        : url.pathname.startsWith("/.well-known/oauth-authorization-server") ||
          url.pathname.startsWith("/.well-known/openid-configuration")
    ) {
      if (options.metadataStatus !== undefined) return json(res, options.metadataStatus, { error: "nope" });
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        ...(options.registration !== false ? { registration_endpoint: `${base}/register` } : {}),
        ...(options.device ? { device_authorization_endpoint: `${base}/device` } : {}),
        response_types_supported: ["code"],
        grant_types_supported: [
          "authorization_code",
          "refresh_token",
          ...(options.device ? ["urn:ietf:params:oauth:grant-type:device_code"] : []),
        ],
        code_challenge_methods_supported: options.s256 === false ? ["plain"] : ["S256"],
        token_endpoint_auth_methods_supported: options.authMethods ?? [
          "none",
          "client_secret_basic",
          "client_secret_post",
        ],
        ...(options.cimd ? { client_id_metadata_document_supported: true } : {}),
        ...(options.issParameter?.advertise ? { authorization_response_iss_parameter_supported: true } : {}),
        ...options.metadata?.(base),
      });
    }
    if (url.pathname === "/register" && req.method === "POST") {
      if (options.registrationError) {
        res
          .writeHead(options.registrationError.status, {
            "content-type": options.registrationError.contentType ?? "application/json",
          })
          .end(options.registrationError.body);
        return;
      }
      const meta = JSON.parse(raw) as Record<string, unknown>;
      const method = String(meta.token_endpoint_auth_method ?? "client_secret_basic");
      if (options.authMethods !== undefined && !options.authMethods.includes(method))
        return json(res, 400, {
          error: "invalid_client_metadata",
          error_description: `token_endpoint_auth_method ${method} is not allowed`,
        });
      const registeredId = `dcr-${randomBytes(4).toString("hex")}`;
      const registeredScope =
        typeof meta.scope === "string" ? meta.scope : options.registeredScopesOnly?.defaultScope;
      if (registeredScope !== undefined) clientScopes.set(registeredId, registeredScope);
      clientRedirects.set(registeredId, meta.redirect_uris);
      const answer = {
        ...meta,
        ...(registeredScope !== undefined ? { scope: registeredScope } : {}),
        client_id: registeredId,
        registration_access_token: `rat-${randomBytes(8).toString("hex")}`,
        registration_client_uri: `${base}/register/client`,
        ...(method.startsWith("client_secret")
          ? { client_secret: "dcr-secret", client_secret_expires_at: 0 }
          : {}),
      };
      return json(res, 201, options.registrationResponse ? options.registrationResponse(answer) : answer);
    }
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      const clientId = q.get("client_id") ?? "";
      if (options.cannotFetchDocument && clientId.startsWith("https://")) {
        res
          .writeHead(400, { "content-type": "text/html" })
          .end("<p>could not fetch the client metadata document</p>");
        return;
      }
      const registered = clientRedirects.get(clientId);
      if (
        options.exactRedirectUris &&
        !(Array.isArray(registered) && registered.includes(q.get("redirect_uri")))
      ) {
        res.writeHead(400, { "content-type": "text/html" }).end("<p>Unregistered redirect_uri</p>");
        return;
      }
      if (options.consentNeedsAdmin && q.getAll("prompt").includes("consent")) {
        res.writeHead(200, { "content-type": "text/html" }).end("<p>Approval required (AADSTS90095)</p>");
        return;
      }
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge"))
        return json(res, 400, { error: "invalid_request" });
      const code = `code-${randomBytes(8).toString("hex")}`;
      codes.set(code, {
        challenge: q.get("code_challenge") as string,
        redirect: q.get("redirect_uri") ?? "",
        clientId,
        resource: q.get("resource"),
        scope: q.get("scope") ?? "",
      });
      const to = new URL(q.get("redirect_uri") ?? "");
      if (options.refuseResource && q.has("resource")) {
        to.searchParams.set("error", "invalid_target");
        to.searchParams.set(
          "error_description",
          "AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes.",
        );
      } else if (scopeRefused(clientId, q.get("scope"))) to.searchParams.set("error", "invalid_scope");
      else if (options.authorizeError !== undefined) to.searchParams.set("error", options.authorizeError);
      else to.searchParams.set("code", code);
      to.searchParams.set("state", q.get("state") ?? "");
      if (options.issParameter?.send) to.searchParams.set("iss", options.issParameter.send(issuer));
      for (const name of options.repeatInRedirect ?? []) {
        const value = to.searchParams.get(name) ?? "";
        to.searchParams.append(name, name === "code" ? `${value}-other` : value);
      }
      res.writeHead(302, { location: to.href }).end();
      return;
    }
    const resourceRefused = () =>
      json(res, 400, {
        error: "invalid_request",
        error_description: "AADSTS901002: The 'resource' request parameter is not supported.",
      });
    if (url.pathname === "/device" && req.method === "POST") {
      if (options.refuseResource && body.has("resource")) return resourceRefused();
      if (options.deviceAuthorizationError) {
        res
          .writeHead(options.deviceAuthorizationError.status, { "content-type": "application/json" })
          .end(options.deviceAuthorizationError.body);
        return;
      }
      if (scopeRefused(body.get("client_id") ?? "", body.get("scope")))
        return json(res, 400, {
          error: "invalid_scope",
          error_description: "scope not allowed for this client",
        });
      const fields: Record<string, unknown> = {
        device_code: "dev-code-1",
        user_code: "WDJB-MJHT",
        [options.verificationUrlField ? "verification_url" : "verification_uri"]: `${base}/activate`,
        ...(options.verificationUrlField
          ? {}
          : { verification_uri_complete: `${base}/activate?user_code=WDJB-MJHT` }),
        expires_in: 600,
        interval: options.deviceInterval ?? 5,
      };
      return json(res, 200, options.deviceResponse ? options.deviceResponse(fields) : fields);
    }
    if (url.pathname === "/token" && req.method === "POST") {
      const answer = (status: number, fields: Record<string, unknown>) =>
        options.formEncodedTokenAnswers ? formEncoded(res, status, fields) : json(res, status, fields);
      if (options.refuseResource && body.has("resource")) return resourceRefused();
      const grant = body.get("grant_type");
      const clientId = body.get("client_id") ?? "";
      if (grant === "authorization_code") {
        if (options.rejectDocument && clientId.startsWith("https://")) {
          return answer(401, {
            error: "invalid_client",
            error_description: "client metadata document rejected",
          });
        }
        if (options.tokenError) {
          res
            .writeHead(options.tokenError.status, { "content-type": "application/json" })
            .end(options.tokenError.body);
          return;
        }
        const entry = codes.get(body.get("code") ?? "");
        const verifier = body.get("code_verifier") ?? "";
        if (
          !entry ||
          createHash("sha256").update(verifier).digest("base64url") !== entry.challenge ||
          entry.redirect !== body.get("redirect_uri")
        ) {
          return answer(400, { error: "invalid_grant" });
        }
        if (entry.resource !== body.get("resource")) return answer(400, { error: "invalid_target" });
        codes.delete(body.get("code") ?? "");
        return answer(200, newTokens(entry.scope));
      }
      if (grant === "refresh_token") {
        if (options.rejectDocument && clientId.startsWith("https://")) {
          return answer(401, {
            error: "invalid_client",
            error_description: "client metadata document rejected",
          });
        }
        if (options.refreshError) {
          res
            .writeHead(options.refreshError.status, {
              "content-type": options.refreshError.contentType ?? "application/json",
            })
            .end(options.refreshError.body);
          return;
        }
        const rt = body.get("refresh_token") ?? "";
        const family = families.get(rt);
        if (options.reuseRevokesFamily && family !== undefined && usedRefreshTokens.has(rt))
          revoked.add(family);
        const granted = refreshTokens.get(rt);
        if (
          granted === undefined ||
          (family !== undefined && revoked.has(family)) ||
          !refreshTokens.delete(rt)
        )
          return answer(400, { error: "invalid_grant", error_description: "refresh token already used" });
        usedRefreshTokens.add(rt);
        const tokens = newTokens(granted, family);
        await options.refreshAnswered?.();
        return answer(200, tokens);
      }
      if (grant === "urn:ietf:params:oauth:grant-type:device_code") {
        if (drops > 0) {
          drops--;
          req.socket.destroy();
          return;
        }
        if (options.blockedPolls !== undefined && blocked < options.blockedPolls.count) {
          blocked++;
          res
            .writeHead(options.blockedPolls.status, {
              "content-type": options.blockedPolls.contentType ?? "text/html",
            })
            .end(options.blockedPolls.body);
          return;
        }
        const next = polls.shift();
        if (next !== undefined)
          return answer(options.deviceErrorStatus ?? 400, {
            error: next,
            ...(next === "slow_down" && options.slowDownInterval !== undefined
              ? { interval: options.slowDownInterval }
              : {}),
          });
        return answer(200, newTokens());
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    res.writeHead(404).end();
  };
  const server: Server =
    options.tls === undefined
      ? createServer(handler)
      : (createHttpsServer(options.tls, handler) as unknown as Server);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  base = `${options.tls === undefined ? "http" : "https"}://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    seen,
    issued,
    scopeOf: (token) => scopes.get(token),
    active: (token) => {
      const family = families.get(token);
      return family !== undefined && !revoked.has(family) && !revokedAccess.has(token);
    },
    revokeAccess: (token) => {
      revokedAccess.add(token);
    },
    get revokedFamilies() {
      return revoked.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface FakeResource {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

/**
 * A protected resource that only publishes RFC 9728 metadata (for discovery tests). `metadataPath`
 * serves the document only there (named by the 401 challenge, not at a well-known location);
 * `resource` overrides the identifier the document claims (default: the resource's own URL).
 */
export async function startFakeResource(
  authorizationServers: string[],
  opts: {
    status?: number;
    metadataPath?: string;
    resource?: (base: string) => string;
    /** Serve HTTPS with this key and certificate. */
    tls?: { key: string; cert: string };
    /** Fields added to the metadata document (e.g. `"jwks_uri": ""`, as a server without omitempty writes it). */
    metadataFields?: Record<string, unknown>;
    /** The WWW-Authenticate value of the 401, given the metadata URL (default: one Bearer challenge naming it). */
    challenge?: (metadataUrl: string) => string;
    /**
     * Requests with a bearer token are answered 200 when the token's scope (from `scopeOf`) holds
     * `scope`, else 403 `insufficient_scope` naming it (RFC 6750 3.1; MCP step-up authorization).
     */
    requireScope?: {
      scope: string;
      scopeOf: (token: string) => string | undefined;
      /** The 403 challenge leaves the `scope` parameter out. */
      unnamed?: boolean;
      /** The refusal's status: 401 for servers that answer `insufficient_scope` so (RFC 6750 3.1 asks 403). */
      status?: 401 | 403;
    };
  } = {},
): Promise<FakeResource> {
  const seen: Seen[] = [];
  let base = "";
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", base);
    const raw = await readBody(req);
    seen.push({
      method: req.method ?? "GET",
      path: url.pathname,
      headers: req.headers,
      body: new URLSearchParams(),
      raw,
    });
    const metadataPath = opts.metadataPath ?? "/.well-known/oauth-protected-resource";
    if (url.pathname.startsWith(metadataPath)) {
      if (opts.status !== undefined) return json(res, opts.status, { error: "nope" });
      return json(res, 200, {
        resource: opts.resource ? opts.resource(base) : `${base}/mcp`,
        authorization_servers: authorizationServers,
        scopes_supported: ["mcp"],
        ...opts.metadataFields,
      });
    }
    const advertised = opts.metadataPath ?? "/.well-known/oauth-protected-resource/mcp";
    const metadataUrl = `${base}${advertised}`;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (bearer !== undefined && opts.requireScope !== undefined) {
      const held = (opts.requireScope.scopeOf(bearer) ?? "").split(" ");
      if (opts.requireScope.scope.split(" ").every((s) => held.includes(s)))
        return json(res, 200, { ok: true });
      res
        .writeHead(opts.requireScope.status ?? 403, {
          "www-authenticate": `Bearer error="insufficient_scope", ${opts.requireScope.unnamed ? "" : `scope="${opts.requireScope.scope}", `}resource_metadata="${metadataUrl}"`,
        })
        .end();
      return;
    }
    const challenge = opts.challenge?.(metadataUrl) ?? `Bearer resource_metadata="${metadataUrl}"`;
    res.writeHead(401, { "www-authenticate": challenge }).end();
  };
  const server: Server =
    opts.tls === undefined
      ? createServer(handler)
      : (createHttpsServer(opts.tls, handler) as unknown as Server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `${opts.tls === undefined ? "http" : "https"}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
