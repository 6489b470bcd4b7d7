import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from "@modelcontextprotocol/sdk/server/auth/provider.js";
import {
  createOAuthMetadata,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthClientInformationFull } from "@modelcontextprotocol/sdk/shared/auth.js";
import express from "express";

interface Grant {
  readonly clientId: string;
  readonly scopes: string[];
  readonly resource: string | undefined;
}

/** The MCP SDK's own authorization server (mcpAuthRouter) and a Streamable HTTP MCP server behind its requireBearerAuth. */
export interface SdkAuthMcp {
  readonly url: string;
  readonly issuer: string;
  /** Access tokens issued so far, and every refresh token and access token revoked at /revoke. */
  readonly issued: string[];
  readonly revoked: string[];
  readonly refreshes: number;
  /** The `resource` each refresh request carried (undefined when it carried none). */
  readonly refreshResources: Array<string | undefined>;
  /** Seconds each access token lives (the clock is the real one: the SDK's bearer check reads Date.now()). */
  accessLifetime: number;
  /** Makes every access token issued so far invalid, as a key rotation or a revocation at the server would. */
  invalidateAccessTokens(): void;
  /** Makes every refresh token issued so far invalid (revoked by an administrator). */
  invalidateRefreshTokens(): void;
  /** Forgets every client, code and token, as an in-memory authorization server does when it restarts. */
  restart(): void;
  close(): Promise<void>;
}

class SdkProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly clientsStore = {
    getClient: async (id: string) => this.clients.get(id),
    registerClient: async (client: OAuthClientInformationFull) => {
      this.clients.set(client.client_id, client);
      return client;
    },
  };
  readonly codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  readonly access = new Map<string, Grant & { expiresAt: number }>();
  readonly refresh = new Map<string, Grant>();
  readonly issued: string[] = [];
  readonly revoked: string[] = [];
  refreshes = 0;
  readonly refreshResources: Array<string | undefined> = [];
  accessLifetime = 3600;

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: express.Response) {
    const code = randomUUID();
    this.codes.set(code, { clientId: client.client_id, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set("code", code);
    if (params.state !== undefined) target.searchParams.set("state", params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string) {
    const entry = this.codes.get(code);
    if (!entry) throw new InvalidGrantError("unknown code");
    return entry.params.codeChallenge;
  }

  private issue(grant: Grant) {
    const access_token = randomUUID();
    const refresh_token = randomUUID();
    this.access.set(access_token, { ...grant, expiresAt: Date.now() + this.accessLifetime * 1000 });
    this.refresh.set(refresh_token, grant);
    this.issued.push(access_token);
    return {
      access_token,
      token_type: "bearer",
      expires_in: this.accessLifetime,
      refresh_token,
      scope: grant.scopes.join(" "),
    };
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string) {
    const entry = this.codes.get(code);
    if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError("unknown code");
    this.codes.delete(code);
    return this.issue({
      clientId: client.client_id,
      scopes: entry.params.scopes ?? [],
      resource: entry.params.resource?.href,
    });
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    token: string,
    scopes?: string[],
    resource?: URL,
  ) {
    const grant = this.refresh.get(token);
    if (!grant || grant.clientId !== client.client_id)
      throw new InvalidGrantError("refresh token is invalid");
    this.refresh.delete(token);
    this.refreshes++;
    this.refreshResources.push(resource?.href);
    return this.issue({
      ...grant,
      scopes: scopes ?? grant.scopes,
      resource: resource?.href ?? grant.resource,
    });
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.access.get(token);
    if (!grant) throw new InvalidTokenError("unknown token");
    return {
      token,
      clientId: grant.clientId,
      scopes: grant.scopes,
      expiresAt: Math.floor(grant.expiresAt / 1000),
      ...(grant.resource ? { resource: new URL(grant.resource) } : {}),
    };
  }

  async revokeToken(_client: OAuthClientInformationFull, request: { token: string }) {
    this.revoked.push(request.token);
    this.refresh.delete(request.token);
    this.access.delete(request.token);
  }
}

async function listen(app: express.Express): Promise<{ server: Server; base: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * `advertisedIssuer` makes the MCP server's metadata name the authorization server by another URL than its
 * issuer (`localhost` for `127.0.0.1`, a common misconfiguration): the issuer check must refuse it.
 */
export async function startSdkAuthMcp(
  options: { requiredScopes?: string[]; advertisedIssuer?: (issuer: URL) => URL } = {},
): Promise<SdkAuthMcp> {
  const provider = new SdkProvider();
  const noLimit = { rateLimit: false as const };
  const asApp = express();
  const asListening = await listen(asApp);
  const issuerUrl = new URL(`${asListening.base}/`);
  asApp.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      scopesSupported: ["mcp:tools", "mcp:admin"],
      authorizationOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
      tokenOptions: noLimit,
    }),
  );

  const mcpApp = express();
  const mcpListening = await listen(mcpApp);
  const url = `${mcpListening.base}/mcp`;
  const resourceMetadataUrl = `${mcpListening.base}/.well-known/oauth-protected-resource/mcp`;
  mcpApp.use(
    mcpAuthMetadataRouter({
      oauthMetadata: createOAuthMetadata({
        provider,
        issuerUrl: options.advertisedIssuer?.(issuerUrl) ?? issuerUrl,
        scopesSupported: ["mcp:tools", "mcp:admin"],
      }),
      resourceServerUrl: new URL(url),
      scopesSupported: ["mcp:tools"],
    }),
  );
  const transports = new Map<string, StreamableHTTPServerTransport>();
  // `purge` needs the mcp:admin scope too: the SDK's bearer check answers 403 insufficient_scope for it (step-up).
  const adminAuth = requireBearerAuth({
    verifier: provider,
    requiredScopes: ["mcp:tools", "mcp:admin"],
    resourceMetadataUrl,
    expectedResource: new URL(url),
  });
  mcpApp.all(
    "/mcp",
    express.json(),
    (req, res, next) => {
      const body = req.body as { method?: string; params?: { name?: string } } | undefined;
      if (body?.method === "tools/call" && body.params?.name === "purge") adminAuth(req, res, next);
      else next();
    },
    requireBearerAuth({
      verifier: provider,
      requiredScopes: options.requiredScopes ?? ["mcp:tools"],
      resourceMetadataUrl,
      expectedResource: new URL(url),
    }),
    async (req, res) => {
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        const mcp = new McpServer({ name: "sdk-protected", version: "1.0.0" });
        mcp.registerTool("whoami", { description: "says hello" }, async () => ({
          content: [{ type: "text", text: "hello alice" }],
        }));
        mcp.registerTool("purge", { description: "needs mcp:admin" }, async () => ({
          content: [{ type: "text", text: "purged" }],
        }));
        await mcp.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, req.body);
    },
  );

  return {
    url,
    issuer: issuerUrl.href,
    issued: provider.issued,
    revoked: provider.revoked,
    refreshResources: provider.refreshResources,
    get refreshes() {
      return provider.refreshes;
    },
    get accessLifetime() {
      return provider.accessLifetime;
    },
    set accessLifetime(seconds: number) {
      provider.accessLifetime = seconds;
    },
    invalidateAccessTokens: () => provider.access.clear(),
    invalidateRefreshTokens: () => provider.refresh.clear(),
    restart: () => {
      for (const store of [provider.clients, provider.codes, provider.access, provider.refresh])
        store.clear();
    },
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => {});
      for (const { server } of [mcpListening, asListening]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
