import { statSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { type SdkAuthMcp, startSdkAuthMcp } from "../../fakes/authServer/sdkAuth.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, testSystem } from "./helpers.js";

/**
 * The MCP SDK's own authorization server (mcpAuthRouter) in front of a Streamable HTTP MCP server
 * guarded by the SDK's requireBearerAuth, which checks each token's expiry and audience (RFC 8707).
 */
let home: TempHome;
let server: SdkAuthMcp;
const hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
  await server?.close();
  home?.cleanup();
});

function gatewayHub(name: string): McpHub {
  const hub = new McpHub({
    servers: { [name]: mcpServerSchema.parse({ url: server.url, auth: "oauth", oauth: { cimd: false } }) },
    cacheDir: `${home.dir}/mcp-cache`,
    scope: () => ({ secrets: {}, env: {} }),
    logger: silentLogger(),
    approvals: policyApprovals("deny", silentLogger()),
    oauthProviderFor: (s, e, { interactive }) =>
      oauthProviderFor(s, e, { interactive, paths: svcPaths(home.dir) }),
  });
  hubs.push(hub);
  hub.start();
  return hub;
}
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]?.text;

async function loggedIn(name: string) {
  home = tempHome();
  server = await startSdkAuthMcp();
  const h = harness(home.dir, name, server.url, { cimd: false });
  const tokens = await loginWith(h);
  return { h, tokens };
}

describe("the MCP SDK's authorization server and bearer auth", () => {
  it("a browser login gets a token for the server's URL as audience, saved 0600; the gateway's calls use it", async () => {
    const { h, tokens } = await loggedIn("sdk");
    expect(statSync(h.job.store.tokensPath).mode & 0o777).toBe(0o600);
    expect(statSync(h.job.store.clientPath).mode & 0o777).toBe(0o600);
    expect(statSync(h.job.store.dir).mode & 0o777).toBe(0o700);
    expect(tokens.resource).toBe(server.url);
    const hub = gatewayHub("sdk");
    expect((await hub.settled("sdk")).state).toBe("connected");
    expect(text(await hub.call("sdk", "whoami", {}))).toBe("hello alice");
  });

  it("access tokens refused mid-run: calls sent together all succeed on one refresh (the SDK rotates refresh tokens)", async () => {
    await loggedIn("sdk");
    const hub = gatewayHub("sdk");
    expect((await hub.settled("sdk")).state).toBe("connected");
    server.invalidateAccessTokens();
    const calls = await Promise.all([1, 2, 3, 4].map(() => hub.call("sdk", "whoami", {})));
    expect(calls.map(text)).toEqual(["hello alice", "hello alice", "hello alice", "hello alice"]);
    expect(server.refreshes).toBe(1);
    expect(server.refreshResources).toEqual([server.url]);
  });

  it("a refresh token revoked at the server: the call fails asking for svc mcp login, naming no token", async () => {
    const { tokens } = await loggedIn("sdk");
    const hub = gatewayHub("sdk");
    expect((await hub.settled("sdk")).state).toBe("connected");
    server.invalidateAccessTokens();
    server.invalidateRefreshTokens();
    const error = await hub.call("sdk", "whoami", {}).then(
      () => new Error("the call succeeded"),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/run `svc mcp login sdk`/);
    expect(error.message).not.toContain(tokens.access_token);
    expect(error.message).not.toContain(tokens.refresh_token);
  });

  it("an authorization server that restarted and forgot its clients: the call's error names the refused client, not a missing file", async () => {
    await loggedIn("sdk");
    const hub = gatewayHub("sdk");
    expect((await hub.settled("sdk")).state).toBe("connected");
    server.restart();
    const error = await hub.call("sdk", "whoami", {}).then(
      () => new Error("the call succeeded"),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/token refresh failed — \S+\/token answered 400: .*invalid_client/);
    expect(error.message).toMatch(/run `svc mcp login sdk`/);
    expect(error.message).not.toMatch(/registration is missing/);
  });

  it("step-up: the SDK's 403 insufficient_scope fails a gateway call naming the scope; the next login is granted it", async () => {
    const { h } = await loggedIn("sdk");
    const hub = gatewayHub("sdk");
    expect((await hub.settled("sdk")).state).toBe("connected");
    await expect(hub.call("sdk", "purge", {})).rejects.toThrow(
      /needs scope "mcp:tools mcp:admin" for this request — run `svc mcp login sdk`/,
    );
    const again = harness(home.dir, "sdk", server.url, { cimd: false });
    expect((await loginWith(again)).scope).toBe("mcp:tools mcp:admin");
    expect(text(await hub.call("sdk", "purge", {}))).toBe("purged");
    expect(h.opened[0]).toContain("scope=mcp%3Atools&");
  });

  it("a login that reuses the stored registration says what to do when the server has forgotten it (its page shows the error, not svc)", async () => {
    const { h } = await loggedIn("sdk");
    expect(h.printed.join("\n")).not.toMatch(/reuses the client registration/);
    server.restart();
    const again = harness(home.dir, "sdk", server.url, { cimd: false });
    const system = testSystem();
    const login = runLogin(again.job, { flow: "browser", system, isTTY: true }).catch((e: Error) => e);
    await vi.waitFor(() => expect(again.opened).toHaveLength(1));
    expect(again.printed.join("\n")).toMatch(
      /reuses the client registration of an earlier login; if the page says the client or its redirect URI is unknown .* stop with Ctrl-C and run `svc mcp login sdk`, which registers a new one/,
    );
    system.shutdown();
    await login;
  });

  it("an issuer other than the one the server advertises (localhost for 127.0.0.1) is refused before any token is issued", async () => {
    home = tempHome();
    server = await startSdkAuthMcp({
      advertisedIssuer: (issuer) => new URL(issuer.href.replace("127.0.0.1", "localhost")),
    });
    const h = harness(home.dir, "sdk", server.url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /metadata issuer "http:\/\/127\.0\.0\.1:\d+\/" does not match the advertised URL/,
    );
    expect(h.opened).toEqual([]);
    expect(server.issued).toEqual([]);
  });
});
