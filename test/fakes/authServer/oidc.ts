import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { type ClientMetadata } from "oidc-provider";

/**
 * A real OAuth 2.1 / OpenID authorization server (`oidc-provider`) on loopback: PKCE, dynamic
 * registration, refresh tokens, resource indicators and the device flow. Interactions (login and
 * consent) complete automatically for the account "alice" so an HTTP client can play the browser.
 */
export interface OidcServer {
  readonly issuer: string;
  readonly provider: Provider;
  /** Resolves an opaque access token to its audience (the resource) or undefined when unknown/expired. */
  audienceOf(token: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export async function startOidc(
  resource: () => string,
  options: { accessTtl?: number; clients?: ClientMetadata[] } = {},
): Promise<OidcServer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "k1", alg: "RS256", use: "sig" };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    ...(options.clients === undefined ? {} : { clients: options.clients }),
    cookies: { keys: ["svc-test-cookie-key"] },
    scopes: ["openid", "offline_access", "mcp"],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      deviceFlow: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource(),
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope: "mcp",
          audience: resource(),
          accessTokenFormat: "opaque",
          accessTokenTTL: options.accessTtl ?? 3600,
        }),
      },
    },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    clientBasedCORS: () => true,
  });
  provider.on("server_error", () => {});

  const finishInteraction = async (req: IncomingMessage, res: ServerResponse) => {
    const details = await provider.interactionDetails(req, res);
    const clientId = details.params.client_id as string;
    const grant = new provider.Grant({ accountId: "alice", clientId });
    const scope = String(details.params.scope ?? "");
    if (scope) grant.addOIDCScope(scope);
    grant.addResourceScope(resource(), "mcp");
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: "alice" }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  };
  const callback = provider.callback();
  server.on("request", (req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      finishInteraction(req, res).catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      });
      return;
    }
    callback(req, res);
  });
  return {
    issuer,
    provider,
    async audienceOf(token) {
      const at = await provider.AccessToken.find(token);
      if (!at || at.isExpired) return undefined;
      return typeof at.aud === "string" ? at.aud : Array.isArray(at.aud) ? at.aud[0] : undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
