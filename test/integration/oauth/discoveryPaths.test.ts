import { afterEach, describe, expect, it } from "vitest";
import { discoverForFlow } from "../../../src/io/oauth/discovery.js";
import { oauthFetches } from "../../../src/io/oauth/fetch.js";
import { startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
import { type FakeApi, type FakeReply, type RecordedRequest, startFakeApi } from "../../fakes/httpFake.js";

const closers: FakeApi[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.close();
});

function asMetadata(issuer: string, extra: Record<string, unknown> = {}) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    ...extra,
  };
}

/**
 * One origin serving both the MCP resource (401 without a resource_metadata hint) and a tenant
 * authorization server whose issuer has a path; `routes` maps exact paths to answers, anything else 404.
 */
async function site(routes: (base: string) => Record<string, FakeReply>): Promise<FakeApi> {
  let table: Record<string, FakeReply> = {};
  const api = await startFakeApi((req: RecordedRequest) => table[req.path] ?? { status: 404, json: {} });
  closers.push(api);
  table = routes(api.url);
  return api;
}

const unauthorized: FakeReply = { status: 401, headers: { "www-authenticate": "Bearer" }, json: {} };

/** A Keycloak realm: protected-resource metadata at the root, OpenID Connect discovery under the realm. */
function keycloakRealm(extra: (base: string) => Record<string, unknown> = () => ({})) {
  return site((base) => ({
    "/mcp": unauthorized,
    "/.well-known/oauth-protected-resource": {
      json: { resource: `${base}/mcp`, authorization_servers: [`${base}/realms/dev`] },
    },
    "/realms/dev/.well-known/openid-configuration": {
      json: asMetadata(`${base}/realms/dev`, {
        jwks_uri: `${base}/realms/dev/certs`,
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        ...extra(base),
      }),
    },
  }));
}
describe("discovery locations (RFC 9728 / RFC 8414 / OpenID Connect)", () => {
  it("finds protected-resource metadata at the path-inserted well-known URL and tenant metadata at the RFC 8414 path-inserted URL", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/tenant`] },
      },
      "/.well-known/oauth-authorization-server/tenant": { json: asMetadata(`${base}/tenant`) },
    }));
    const meta = await discoverForFlow("t", `${api.url}/mcp`, "browser", oauthFetches());
    expect(meta.authorizationServerUrl).toBe(`${api.url}/tenant`);
    expect(meta.authorizationServerMetadata.issuer).toBe(`${api.url}/tenant`);
    expect(meta.resourceMetadata?.resource).toBe(`${api.url}/mcp`);
  });

  it("a well-known URL answering an HTML page with 200 (a web app's catch-all route) or a 5xx is passed over for the next one, OpenID Connect discovery included", async () => {
    const oidc = (base: string) => ({
      json: asMetadata(`${base}/realms/dev`, {
        jwks_uri: `${base}/realms/dev/certs`,
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      }),
    });
    for (const first of [
      { headers: { "content-type": "text/html" }, text: "<!doctype html><div id=app></div>" },
      { status: 502, text: "Bad Gateway" },
    ] satisfies FakeReply[]) {
      const api = await site((base) => ({
        "/mcp": unauthorized,
        "/.well-known/oauth-protected-resource": {
          json: { resource: `${base}/mcp`, authorization_servers: [`${base}/realms/dev`] },
        },
        "/.well-known/oauth-authorization-server/realms/dev": first,
        "/realms/dev/.well-known/openid-configuration": oidc(base),
      }));
      const meta = await discoverForFlow("kc", `${api.url}/mcp`, "browser", oauthFetches());
      expect(meta.authorizationServerMetadata.issuer).toBe(`${api.url}/realms/dev`);
    }
  });

  it("a metadata URL redirecting within its origin is followed; one redirecting to another origin is not followed (the next URL is tried)", async () => {
    const other = await site((base) => ({
      "/.well-known/oauth-authorization-server/tenant": { json: asMetadata(`${base}/tenant`) },
    }));
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/tenant`] },
      },
      "/.well-known/oauth-authorization-server/tenant": {
        status: 302,
        headers: { location: `${other.url}/.well-known/oauth-authorization-server/tenant` },
        text: "",
      },
      "/tenant/.well-known/openid-configuration": {
        status: 301,
        headers: { location: "/tenant/oidc.json" },
        text: "",
      },
      "/tenant/oidc.json": {
        json: asMetadata(`${base}/tenant`, {
          token_endpoint: `${base}/tenant/t`,
          jwks_uri: `${base}/tenant/certs`,
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      },
    }));
    const meta = await discoverForFlow("t", `${api.url}/mcp`, "browser", oauthFetches());
    expect(meta.authorizationServerMetadata.token_endpoint).toBe(`${api.url}/tenant/t`);
    expect(other.requests).toHaveLength(0);
  });

  it("protected-resource metadata: a path-inserted URL answering an HTML page with 200 or a 5xx is passed over for the root one", async () => {
    for (const first of [
      { headers: { "content-type": "text/html" }, text: "<!doctype html><div id=app></div>" },
      { status: 503, text: "Service Unavailable" },
    ] satisfies FakeReply[]) {
      const api = await site((base) => ({
        "/mcp": unauthorized,
        "/.well-known/oauth-protected-resource/mcp": first,
        "/.well-known/oauth-protected-resource": {
          json: { resource: `${base}/mcp`, authorization_servers: [`${base}/tenant`] },
        },
        "/.well-known/oauth-authorization-server/tenant": { json: asMetadata(`${base}/tenant`) },
      }));
      const meta = await discoverForFlow("t", `${api.url}/mcp`, "browser", oauthFetches());
      expect(meta.authorizationServerUrl).toBe(`${api.url}/tenant`);
      expect(meta.resourceMetadata?.resource).toBe(`${api.url}/mcp`);
    }
  });

  it("falls back to OpenID Connect discovery appended to the issuer path (Keycloak realms)", async () => {
    const api = await keycloakRealm();
    const meta = await discoverForFlow("kc", `${api.url}/mcp`, "browser", oauthFetches());
    expect(meta.authorizationServerMetadata.issuer).toBe(`${api.url}/realms/dev`);
    expect(meta.resourceMetadata?.resource).toBe(`${api.url}/mcp`);
  });

  it("OpenID Connect metadata keeps the fields the SDK's OpenID schema drops: the device endpoint (Keycloak) and RFC 9207's flag", async () => {
    const api = await keycloakRealm((base) => ({
      grant_types_supported: ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"],
      device_authorization_endpoint: `${base}/realms/dev/device`,
      authorization_response_iss_parameter_supported: true,
    }));
    const meta = await discoverForFlow("kc", `${api.url}/mcp`, "device", oauthFetches());
    const fields = meta.authorizationServerMetadata as unknown as Record<string, unknown>;
    expect(fields.device_authorization_endpoint).toBe(`${api.url}/realms/dev/device`);
    expect(fields.authorization_response_iss_parameter_supported).toBe(true);
    expect(fields.jwks_uri).toBe(`${api.url}/realms/dev/certs`);
  });

  it("metadata at an advertised well-known URL (path-scoped) is validated: a missing field is named, not a TypeError later", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: {
          resource: `${base}/mcp`,
          authorization_servers: [`${base}/.well-known/oauth-authorization-server/tenant`],
        },
      },
      "/.well-known/oauth-authorization-server/tenant": {
        json: asMetadata(`${base}/tenant`, { response_types_supported: undefined }),
      },
    }));
    await expect(discoverForFlow("ps", `${api.url}/mcp`, "browser", oauthFetches())).rejects.toThrow(
      /^ps: OAuth discovery failed — http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server\/tenant: metadata unusable \(response_types_supported: expected array, received undefined\)/,
    );
  });

  it("metadata found but invalid is named in the discovery error (which fields), not hidden behind the 404s before it", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/realms/dev`] },
      },
      "/realms/dev/.well-known/openid-configuration": { json: asMetadata(`${base}/realms/dev`) },
    }));
    const err = (await discoverForFlow("kc", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/^kc: OAuth discovery failed — GET \S+ → 404/);
    expect(err.message).toMatch(
      /; http:\/\/127\.0\.0\.1:\d+\/realms\/dev: metadata unusable \(jwks_uri: expected string, received undefined, subject_types_supported: /,
    );
    expect(err.message).not.toContain("\n");
  });

  it("protected-resource metadata found but invalid is named in the discovery error, not hidden behind the origin's 404s", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": { json: { authorization_servers: [`${base}/as`] } },
    }));
    const err = (await discoverForFlow("prm", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/^prm: OAuth discovery failed — GET \S+ → 404/);
    expect(err.message).toContain(
      `; ${api.url}/.well-known/oauth-protected-resource/mcp: protected resource metadata unusable (resource: expected string, received undefined)`,
    );
  });

  it("an authorization_servers entry that is not a URL is named in the discovery error", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: ["auth.example.com"] },
      },
    }));
    const err = (await discoverForFlow("nourl", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/^nourl: OAuth discovery failed — /);
    expect(err.message).toContain(
      `; ${api.url}/.well-known/oauth-protected-resource/mcp: protected resource metadata unusable (authorization_servers.0: Invalid URL`,
    );
  });

  it("protected-resource metadata the 401 challenge names at its well-known URL, found invalid, is named once", async () => {
    // The usual MCP server: its challenge's resource_metadata is the path-inserted well-known URL, which
    // the well-known discovery tried after it fetches again.
    const api = await site((base) => ({
      "/mcp": {
        status: 401,
        headers: {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        },
        json: {},
      },
      "/.well-known/oauth-protected-resource/mcp": { json: { authorization_servers: [`${base}/as`] } },
    }));
    const err = (await discoverForFlow("once", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    const line = `${api.url}/.well-known/oauth-protected-resource/mcp: protected resource metadata unusable (resource: expected string, received undefined)`;
    expect(err.message).toContain(line);
    expect(err.message.split(line).length - 1).toBe(1);
  });

  it("refuses tenant metadata whose issuer is the bare origin (RFC 8414 3.3 mismatch), naming both", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/tenant`] },
      },
      "/.well-known/oauth-authorization-server/tenant": { json: asMetadata(base) },
    }));
    await expect(discoverForFlow("mix", `${api.url}/mcp`, "browser", oauthFetches())).rejects.toThrow(
      /^mix: no usable authorization server — http:\/\/127\.0\.0\.1:\d+\/tenant: metadata issuer "http:\/\/127\.0\.0\.1:\d+" does not match/,
    );
  });

  it("refuses a server advertising only the plain PKCE method", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [base] },
      },
      "/.well-known/oauth-authorization-server": {
        json: asMetadata(base, { code_challenge_methods_supported: ["plain"] }),
      },
    }));
    await expect(discoverForFlow("plain", `${api.url}/mcp`, "browser", oauthFetches())).rejects.toThrow(
      /does not advertise PKCE S256 in code_challenge_methods_supported\. Fix: ask the server's operator to correct its authorization server metadata \(svc needs an issuer that matches the advertised URL, the code response type, PKCE S256 and https endpoints\), or check mcp_servers\.plain\.url\.$/,
    );
  });

  it("skips a server without the code response type (it would refuse the browser login's request) for the next one listed", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/implicit`, `${base}/coded`] },
      },
      "/.well-known/oauth-authorization-server/implicit": {
        json: asMetadata(`${base}/implicit`, { response_types_supported: ["token"] }),
      },
      "/.well-known/oauth-authorization-server/coded": { json: asMetadata(`${base}/coded`) },
    }));
    const meta = await discoverForFlow("rtypes", `${api.url}/mcp`, "browser", oauthFetches());
    expect(meta.authorizationServerUrl).toBe(`${api.url}/coded`);

    const only = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [base] },
      },
      "/.well-known/oauth-authorization-server": {
        json: asMetadata(base, { response_types_supported: ["token"] }),
      },
    }));
    await expect(discoverForFlow("implicit", `${only.url}/mcp`, "browser", oauthFetches())).rejects.toThrow(
      /^implicit: no usable authorization server — http:\/\/127\.0\.0\.1:\d+: does not list the code response type in response_types_supported\. Fix: ask the server's operator/,
    );
  });

  it("when no listed server will do, one whose metadata could not be fetched is named with its fetch statuses, not left out", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [`${base}/gone`, `${base}/plainonly`] },
      },
      "/.well-known/oauth-authorization-server/plainonly": {
        json: asMetadata(`${base}/plainonly`, { code_challenge_methods_supported: ["plain"] }),
      },
    }));
    const err = (await discoverForFlow("twoas", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(
      /^twoas: no usable authorization server — http:\/\/127\.0\.0\.1:\d+\/gone: no metadata found \(GET http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server\/gone → 404; GET \S+\/\.well-known\/openid-configuration\/gone → 404; GET \S+\/gone\/\.well-known\/openid-configuration → 404; GET \S+\/gone\/\.well-known\/oauth-authorization-server → 404\); http:\/\/127\.0\.0\.1:\d+\/plainonly: does not advertise PKCE S256/,
    );
  });

  it("metadata answered 200 with an HTML page is named in the discovery error (not 'no metadata found')", async () => {
    const api = await site((base) => ({
      "/mcp": unauthorized,
      "/.well-known/oauth-protected-resource/mcp": {
        json: { resource: `${base}/mcp`, authorization_servers: [base] },
      },
      "/.well-known/oauth-authorization-server": {
        headers: { "content-type": "text/html" },
        text: "<html>login portal</html>",
      },
    }));
    const err = (await discoverForFlow("portal", `${api.url}/mcp`, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(
      // The next URL was tried too: its status leads, the page follows.
      /^portal: OAuth discovery failed — GET http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration → 404; http:\/\/127\.0\.0\.1:\d+: metadata unusable \(.*JSON/,
    );
  });

  it("follows resource_metadata from the 401 of a server that protects only POST (GET answers 405)", async () => {
    const api = await site(() => ({}));
    const routes = new Map<string, FakeReply>([
      ["GET", { status: 405, json: { error: "method not allowed" } }],
      [
        "POST",
        {
          status: 401,
          headers: {
            "www-authenticate": `Bearer resource_metadata="${api.url}/custom/prm.json", scope="mcp:read"`,
          },
          json: {},
        },
      ],
    ]);
    const fallback = { status: 404, json: {} };
    api.setHandler((req) => {
      if (req.path === "/mcp") return routes.get(req.method) ?? fallback;
      if (req.path === "/custom/prm.json")
        return { json: { resource: `${api.url}/mcp`, authorization_servers: [`${api.url}/tenant`] } };
      if (req.path === "/.well-known/oauth-authorization-server/tenant")
        return { json: asMetadata(`${api.url}/tenant`) };
      return fallback;
    });
    const meta = await discoverForFlow("post", `${api.url}/mcp`, "browser", oauthFetches());
    expect(meta.authorizationServerUrl).toBe(`${api.url}/tenant`);
    expect(meta.challengedScope).toBe("mcp:read");
    const probe = api.requests.find((r) => r.path === "/mcp" && r.method === "POST");
    expect(probe?.headers.authorization).toBeUndefined();
  });
});

describe("RFC 8414 metadata appended to the issuer path (Okta custom authorization servers)", () => {
  const stops: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    while (stops.length) await stops.pop()?.close();
  });

  /** A custom authorization server at `/oauth2/default`; `claimed` is the issuer its document names. */
  async function oktaLike(claimed = "/oauth2/default") {
    const as = await startFakeAs({
      metadataAppendedOnly: true,
      issuer: (base) => `${base}/oauth2/default`,
      metadata: (base) => ({ issuer: `${base}${claimed}` }),
    });
    stops.push(as);
    const resource = await startFakeResource([`${as.url}/oauth2/default`]);
    stops.push(resource);
    return { as, resource };
  }

  it("is tried as a fourth URL, after the three the MCP spec lists in their order, and used", async () => {
    const { as, resource } = await oktaLike();
    const meta = await discoverForFlow("okta", resource.url, "browser", oauthFetches());
    expect(meta.authorizationServerUrl).toBe(`${as.url}/oauth2/default`);
    expect(meta.authorizationServerMetadata.issuer).toBe(`${as.url}/oauth2/default`);
    expect(as.seen.map((s) => s.path)).toEqual([
      "/.well-known/oauth-authorization-server/oauth2/default",
      "/.well-known/openid-configuration/oauth2/default",
      "/oauth2/default/.well-known/openid-configuration",
      "/oauth2/default/.well-known/oauth-authorization-server",
    ]);
  });

  it("is held to the issuer check: a document there naming another issuer is refused", async () => {
    const { as, resource } = await oktaLike("/oauth2/other");
    const err = (await discoverForFlow("okta", resource.url, "browser", oauthFetches()).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toBe(
      `okta: no usable authorization server — ${as.url}/oauth2/default: metadata issuer "${as.url}/oauth2/other" does not match the advertised URL. Fix: ask the server's operator to correct its authorization server metadata (svc needs an issuer that matches the advertised URL, the code response type, PKCE S256 and https endpoints), or check mcp_servers.okta.url.`,
    );
  });
});
