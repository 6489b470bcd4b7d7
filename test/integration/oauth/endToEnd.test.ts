import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { type McpServerEntry, mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import type { ProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import type { OidcServer } from "../../fakes/authServer/oidc.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { approveDeviceLogin, harness, loginWith, startOidcWithMcp } from "./helpers.js";

let oidc: OidcServer;
let mcp: ProtectedMcp;
let home: TempHome;

let stop: () => Promise<void>;

beforeAll(async () => {
  ({ oidc, mcp, close: stop } = await startOidcWithMcp());
});
afterAll(() => stop());
afterEach(() => home?.cleanup());

async function callWhoami(provider: ReturnType<typeof oauthProviderFor>): Promise<string> {
  const client = new Client({ name: "svc-test", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider }));
  try {
    const result = await client.callTool({ name: "whoami", arguments: {} });
    return (result.content as Array<{ text: string }>)[0]?.text ?? "";
  } finally {
    await client.close();
  }
}

/** Connects to `name` as the gateway would (non-interactive, tokens from `homeDir`) and lists its one tool. */
async function listsWhoami(name: string, parsed: McpServerEntry, homeDir: string): Promise<void> {
  const session = await connectServer(name, parsed, {
    scope: () => ({ secrets: {}, env: {} }),
    interactive: false,
    oauthProviderFor: (server, e, { interactive }) =>
      oauthProviderFor(server, e, { interactive, paths: svcPaths(homeDir) }),
  });
  try {
    expect((await session.listTools(5000)).tools.map((t) => t.name)).toEqual(["whoami"]);
  } finally {
    await session.close();
  }
}
const entry = (oauth: Record<string, unknown> = {}) => ({
  url: mcp.url,
  auth: "oauth",
  oauth: { cimd: false, ...oauth },
});

/** An interactive provider whose "browser" follows the authorization redirects; `opened` lists each URL it opened. */
function browserLogin(server: string, homeDir: string) {
  const opened: string[] = [];
  const provider = oauthProviderFor(server, entry(), {
    interactive: true,
    paths: svcPaths(homeDir),
    print: () => {},
    openBrowser: async (u) => {
      opened.push(u);
      await followAuthorization(u);
    },
  });
  return { provider, opened };
}

describe("oidc-provider + a bearer-protected MCP server", () => {
  it("browser login (PKCE, registration, resource indicator) then a tool call through the provider", async () => {
    home = tempHome();
    const h = harness(home.dir, "real", mcp.url, { cimd: false });
    const tokens = await loginWith(h);
    expect(await oidc.audienceOf(tokens.access_token)).toBe(mcp.url);
    expect(tokens.refresh_token).toBeDefined();
    const provider = oauthProviderFor("real", entry(), { interactive: false, paths: svcPaths(home.dir) });
    expect(await callWhoami(provider)).toBe("hello alice");
    expect(mcp.authHeaders.at(-1)).toBe(`Bearer ${tokens.access_token}`);
  });

  it("the MCP client core (connectServer) connects through the provider with the stored tokens", async () => {
    home = tempHome();
    const h = harness(home.dir, "core", mcp.url, { cimd: false });
    await loginWith(h);
    const parsed = mcpServerSchema.parse({
      url: mcp.url,
      auth: "oauth",
      oauth: { cimd: false },
      skip_preflight: true,
    });
    await listsWhoami("core", parsed, home.dir);
  });

  it("an Authorization header configured beside auth: oauth is never sent: each request carries the login's token once", async () => {
    home = tempHome();
    const h = harness(home.dir, "both", mcp.url, { cimd: false });
    const tokens = await loginWith(h);
    const parsed = mcpServerSchema.parse({
      url: mcp.url,
      auth: "oauth",
      oauth: { cimd: false },
      headers: { Authorization: "Bearer static-token", "X-Extra": "kept" },
    });
    const seen = mcp.authHeaders.length;
    await listsWhoami("both", parsed, home.dir);
    const sent = mcp.authHeaders.slice(seen).filter((a) => a !== "");
    expect(sent.length).toBeGreaterThan(0);
    // Neither the static token nor a 401-and-resend per request: every authorized request has the token.
    expect(sent.every((a) => a === `Bearer ${tokens.access_token}`)).toBe(true);
  });

  it("a background (non-interactive) connect without tokens fails telling the user to run svc mcp login", async () => {
    home = tempHome();
    const provider = oauthProviderFor("fresh", entry(), { interactive: false, paths: svcPaths(home.dir) });
    await expect(callWhoami(provider)).rejects.toThrow(/fresh: not logged in — run `svc mcp login fresh`/);
  });

  it("an interactive connect never starts the device flow: it points to svc mcp login --flow device", async () => {
    home = tempHome();
    const opened: string[] = [];
    const provider = oauthProviderFor("dev", entry({ flow: "device" }), {
      interactive: true,
      isTTY: true,
      paths: svcPaths(home.dir),
      print: (line) => opened.push(line),
    });
    await expect(callWhoami(provider)).rejects.toThrow(
      /dev: not logged in — run `svc mcp login dev --flow device`/,
    );
    expect(opened).toHaveLength(0);
  });

  it("an interactive first connect opens the browser, logs in and connects", async () => {
    home = tempHome();
    const { provider, opened } = browserLogin("first", home.dir);
    expect(await callWhoami(provider)).toBe("hello alice");
    expect(opened).toHaveLength(1);
  });

  it("refreshes an expired token automatically with the refresh token", async () => {
    home = tempHome();
    const h = harness(home.dir, "refresh", mcp.url, { cimd: false });
    const first = await loginWith(h);
    // Mark the stored token as expired: the provider must refresh before using it.
    h.job.store.saveTokens({ ...first, expires_at: Date.now() - 1000 });
    const provider = oauthProviderFor("refresh", entry(), { interactive: false, paths: svcPaths(home.dir) });
    expect(await callWhoami(provider)).toBe("hello alice");
    const after = h.job.store.readTokens();
    expect(after?.access_token).not.toBe(first.access_token);
    expect(after?.expires_at).toBeGreaterThan(Date.now());
    expect(mcp.authHeaders.at(-1)).toBe(`Bearer ${after?.access_token}`);
  });

  it("when refresh fails a background connect asks for svc mcp login and keeps the stored tokens", async () => {
    home = tempHome();
    const h = harness(home.dir, "broken", mcp.url, { cimd: false });
    const first = await loginWith(h);
    const stale = { ...first, refresh_token: "not-a-real-refresh-token", expires_at: Date.now() - 1000 };
    h.job.store.saveTokens(stale);
    const provider = oauthProviderFor("broken", entry(), { interactive: false, paths: svcPaths(home.dir) });
    await expect(callWhoami(provider)).rejects.toThrow(
      /broken: token refresh failed — .*answered 400.*invalid_grant.*run `svc mcp login broken`/,
    );
    expect(h.job.store.readTokens()).toEqual(stale);
  });

  it("refresh-token rotation: the rotated refresh token replaces the used one, and the next refresh uses it", async () => {
    home = tempHome();
    const h = harness(home.dir, "rotate", mcp.url, { cimd: false });
    const first = await loginWith(h);
    h.job.store.saveTokens({ ...first, expires_at: Date.now() - 1000 });
    const provider = oauthProviderFor("rotate", entry(), { interactive: false, paths: svcPaths(home.dir) });
    expect(await callWhoami(provider)).toBe("hello alice");
    const second = h.job.store.readTokens();
    expect(second?.refresh_token).toBeDefined();
    expect(second?.refresh_token).not.toBe(first.refresh_token);
    // oidc-provider rotates a public client's refresh token: the first one is spent now.
    expect((await oidc.provider.RefreshToken.find(first.refresh_token as string))?.consumed).toBeTruthy();
    h.job.store.saveTokens({ ...(second as NonNullable<typeof second>), expires_at: Date.now() - 1000 });
    expect(await callWhoami(provider)).toBe("hello alice");
    const third = h.job.store.readTokens();
    expect(third?.access_token).not.toBe(second?.access_token);
    expect(third?.refresh_token).not.toBe(second?.refresh_token);
  });

  it("an interactive connect whose refresh gets invalid_grant logs in once in the browser and connects (no refresh loop)", async () => {
    home = tempHome();
    const h = harness(home.dir, "relogin", mcp.url, { cimd: false });
    const first = await loginWith(h);
    h.job.store.saveTokens({ ...first, refresh_token: "revoked-refresh", expires_at: Date.now() - 1000 });
    const { provider, opened } = browserLogin("relogin", home.dir);
    expect(await callWhoami(provider)).toBe("hello alice");
    expect(opened).toHaveLength(1);
    const after = h.job.store.readTokens();
    expect(after?.refresh_token).not.toBe("revoked-refresh");
    expect(after?.expires_at).toBeGreaterThan(Date.now());
  });

  it("an interactive connect whose refused token cannot be refreshed logs in once in the browser and connects", async () => {
    home = tempHome();
    const h = harness(home.dir, "revoked-cli", mcp.url, { cimd: false });
    const first = await loginWith(h);
    await (await oidc.provider.AccessToken.find(first.access_token))?.destroy();
    h.job.store.saveTokens({ ...first, refresh_token: "not-a-real-refresh-token" });
    const { provider, opened } = browserLogin("revoked-cli", home.dir);
    const session = await connectServer(
      "revoked-cli",
      mcpServerSchema.parse({ url: mcp.url, auth: "oauth", oauth: { cimd: false }, skip_preflight: true }),
      { scope: () => ({ secrets: {}, env: {} }), interactive: true, oauthProviderFor: () => provider },
    );
    try {
      expect((await session.listTools(5000)).tools.map((t) => t.name)).toEqual(["whoami"]);
    } finally {
      await session.close();
    }
    expect(opened).toHaveLength(1);
    const after = h.job.store.readTokens();
    expect(after?.access_token).not.toBe(first.access_token);
    expect(mcp.authHeaders.at(-1)).toBe(`Bearer ${after?.access_token}`);
  });

  it("a token the server refuses before its expiry is refreshed once under the lock; the retry connects", async () => {
    home = tempHome();
    const h = harness(home.dir, "revoked", mcp.url, { cimd: false });
    const first = await loginWith(h);
    await (await oidc.provider.AccessToken.find(first.access_token))?.destroy();
    const provider = oauthProviderFor("revoked", entry(), { interactive: false, paths: svcPaths(home.dir) });
    await expect(callWhoami(provider)).rejects.toThrow(/Unauthorized/);
    const renewed = h.job.store.readTokens();
    expect(renewed?.access_token).not.toBe(first.access_token);
    expect(await callWhoami(provider)).toBe("hello alice");
  });

  it("device flow against oidc-provider: the user approves on the verification page, tokens work on the MCP server", async () => {
    home = tempHome();
    const h = harness(home.dir, "device", mcp.url, { scope: "mcp offline_access" });
    expect(await approveDeviceLogin(h)).toEqual({ ok: true });
    const provider = oauthProviderFor("device", entry({ scope: "mcp offline_access" }), {
      interactive: false,
      paths: svcPaths(home.dir),
    });
    expect(await callWhoami(provider)).toBe("hello alice");
  });

  it("an expired device grant without a refresh token needs an explicit device login: a CLI connect opens no browser", async () => {
    home = tempHome();
    const h = harness(home.dir, "headless", mcp.url);
    h.job.store.saveTokens({
      access_token: "expired",
      token_type: "Bearer",
      expires_at: Date.now() - 1000,
      issuer: oidc.issuer,
      flow: "device",
    });
    const opened: string[] = [];
    const provider = oauthProviderFor("headless", entry(), {
      interactive: true,
      isTTY: true,
      paths: svcPaths(home.dir),
      print: (line) => opened.push(line),
      openBrowser: async (u) => {
        opened.push(u);
      },
    });
    await expect(provider.tokens()).rejects.toThrow(
      /headless: the access token expired and there is no refresh token — run `svc mcp login headless --flow device`/,
    );
    expect(opened).toHaveLength(0);
  });
});
