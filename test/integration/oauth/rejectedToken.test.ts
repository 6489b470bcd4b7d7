import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import { startFakeAs } from "../../fakes/authServer/fakeAs.js";
import { type ProtectedMcp, startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { type OidcServer, startOidc } from "../../fakes/authServer/oidc.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pinnedPortsForFile } from "../../helpers/pinnedPortsLock.js";
import { harness, loginWith, startOidcWithMcp } from "./helpers.js";

// A first login to a server takes a pinned callback port (test/helpers/pinnedPortsLock.ts).
pinnedPortsForFile();

/**
 * Spec 5.3: tokens are "refreshed automatically; re-authorization only when refresh fails". A token
 * the MCP server refuses (revoked, rotated keys) must be refreshed and the refused request sent again
 * with the new token — the user's tool call or connect does not fail because of it.
 */
let oidc: OidcServer;
let mcp: ProtectedMcp;
let home: TempHome;
let stop: () => Promise<void>;
const hubs: McpHub[] = [];

beforeAll(async () => {
  ({ oidc, mcp, close: stop } = await startOidcWithMcp());
});
afterAll(() => stop());
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
  home?.cleanup();
});

function oauthHub(name: string): McpHub {
  const hub = new McpHub({
    servers: { [name]: mcpServerSchema.parse({ url: mcp.url, auth: "oauth", oauth: { cimd: false } }) },
    cacheDir: `${home.dir}/mcp-cache`,
    scope: () => ({ secrets: {}, env: {} }),
    logger: silentLogger(),
    approvals: policyApprovals("deny", silentLogger()),
    oauthProviderFor: (server, e, { interactive }) =>
      oauthProviderFor(server, e, { interactive, paths: svcPaths(home.dir) }),
  });
  hubs.push(hub);
  hub.start();
  return hub;
}

const revoke = async (token: string) => (await oidc.provider.AccessToken.find(token))?.destroy();
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]?.text;

describe("a token the MCP server refuses before its expiry (HTTP 401)", () => {
  it("is refreshed and the connect succeeds on the first attempt", async () => {
    home = tempHome();
    const first = await loginWith(harness(home.dir, "fresh", mcp.url, { cimd: false }));
    await revoke(first.access_token);
    const hub = oauthHub("fresh");
    const status = await hub.settled("fresh");
    expect(status).toMatchObject({ state: "connected", toolCount: 1 });
    expect(mcp.authHeaders.at(-1)).not.toBe(`Bearer ${first.access_token}`);
  });

  it("mid-session: the tool call is sent again with the refreshed token and succeeds", async () => {
    home = tempHome();
    const h = harness(home.dir, "mid", mcp.url, { cimd: false });
    const first = await loginWith(h);
    const hub = oauthHub("mid");
    expect((await hub.settled("mid")).state).toBe("connected");
    await revoke(first.access_token);
    expect(text(await hub.call("mid", "whoami", {}))).toBe("hello alice");
    const renewed = h.job.store.readTokens();
    expect(renewed?.access_token).not.toBe(first.access_token);
    expect(mcp.authHeaders.at(-1)).toBe(`Bearer ${renewed?.access_token}`);
  });

  it("when the refresh fails too, the call fails telling the user to run svc mcp login", async () => {
    home = tempHome();
    const h = harness(home.dir, "dead", mcp.url, { cimd: false });
    const first = await loginWith(h);
    const hub = oauthHub("dead");
    expect((await hub.settled("dead")).state).toBe("connected");
    await revoke(first.access_token);
    h.job.store.saveTokens({ ...first, refresh_token: "not-a-real-refresh-token" });
    await expect(hub.call("dead", "whoami", {})).rejects.toThrow(/run `svc mcp login dead`/);
  });

  it("without a stored client registration, a refused token asks for a login; nothing registers a client behind svc's back", async () => {
    home = tempHome();
    const h = harness(home.dir, "noclient", mcp.url, { cimd: false });
    const first = await loginWith(h);
    await revoke(first.access_token);
    // The registration is gone (deleted, or dropped after the server refused it with invalid_client).
    h.job.store.clearClient();
    let registrations = 0;
    const count = () => {
      registrations++;
    };
    oidc.provider.on("registration_create.success", count);
    try {
      const hub = oauthHub("noclient");
      const status = await hub.settled("noclient");
      expect(status.state).not.toBe("connected");
      expect(JSON.stringify(status)).toMatch(
        /noclient: the client registration is missing — run `svc mcp login noclient`/,
      );
      expect(registrations).toBe(0);
      expect(h.job.store.readClient()).toBeUndefined();
    } finally {
      oidc.provider.off("registration_create.success", count);
    }
  });

  it("a server that refuses even a newly issued token: the connect says so and what to check, without looping", async () => {
    home = tempHome();
    let deafUrl = "";
    const ownAs = await startOidc(() => deafUrl);
    const deaf = await startProtectedMcp(
      () => ownAs.issuer,
      async () => false,
    );
    deafUrl = deaf.url;
    try {
      await loginWith(harness(home.dir, "deaf", deaf.url, { cimd: false }));
      const parsed = mcpServerSchema.parse({
        url: deaf.url,
        auth: "oauth",
        oauth: { cimd: false },
        skip_preflight: true,
      });
      const opened: string[] = [];
      for (const interactive of [false, true]) {
        const err = (await connectServer("deaf", parsed, {
          scope: () => ({ secrets: {}, env: {} }),
          interactive,
          oauthProviderFor: (server, e) =>
            oauthProviderFor(server, e, {
              interactive,
              paths: svcPaths(home.dir),
              print: () => {},
              openBrowser: async (u) => {
                opened.push(u);
                await followAuthorization(u);
              },
            }),
        }).catch((e: unknown) => e)) as Error;
        expect(err.message).toMatch(
          /deaf: the server refused a newly issued access token too — the authorization server may issue tokens for another resource \(RFC 8707 resource indicators\).* then run `svc mcp login deaf`/,
        );
      }
      // The interactive connect logged in once (its refresh token was fine, so only when that
      // token was refused too would a login help; it is not repeated).
      expect(opened.length).toBeLessThanOrEqual(1);
    } finally {
      await deaf.close();
      await ownAs.close();
    }
  });

  it("a refusal of the newly issued token quoting it where its description is cut at 200 characters: none of it is shown", async () => {
    home = tempHome();
    const as = await startFakeAs();
    // Its description's character 200 falls inside the token it quotes.
    const quoting = (token: string | undefined) =>
      `error="invalid_token", error_description="${"x".repeat(190)} ${token} is not for this resource"`;
    const deaf = await startProtectedMcp(
      () => as.url,
      async () => false,
      undefined,
      { challenge: quoting },
    );
    try {
      await loginWith(harness(home.dir, "deaf", deaf.url));
      const parsed = mcpServerSchema.parse({ url: deaf.url, auth: "oauth", skip_preflight: true });
      const err = (await connectServer("deaf", parsed, {
        scope: () => ({ secrets: {}, env: {} }),
        interactive: false,
        oauthProviderFor: (server, e) =>
          oauthProviderFor(server, e, { interactive: false, paths: svcPaths(home.dir) }),
      }).catch((e: unknown) => e)) as Error;
      // The refresh issued the second token, which the server refused too.
      const renewed = as.issued[1] as string;
      expect(err.message).toContain(
        `deaf: the server refused a newly issued access token too (invalid_token: ${`${"x".repeat(190)} [redacted] is not`.slice(0, 200)}) — `,
      );
      expect(err.message).not.toContain(renewed.slice(0, 9));
    } finally {
      await deaf.close();
      await as.close();
    }
  });

  it("closing a session whose token has expired meanwhile sends the DELETE without a refresh", async () => {
    home = tempHome();
    const as = await startFakeAs();
    const server = await startProtectedMcp(
      () => as.url,
      async (token) => as.issued.includes(token),
    );
    try {
      await loginWith(harness(home.dir, "srv", server.url));
      let now = Date.now();
      const parsed = mcpServerSchema.parse({ url: server.url, auth: "oauth", skip_preflight: true });
      const session = await connectServer("srv", parsed, {
        scope: () => ({ secrets: {}, env: {} }),
        interactive: false,
        oauthProviderFor: (name, e) =>
          oauthProviderFor(name, e, { interactive: false, paths: svcPaths(home.dir), now: () => now }),
      });
      now += 2 * 3600_000;
      await session.close();
      // A refresh there could rotate the refresh token while a stopping process exits before saving it.
      expect(as.seen.filter((s) => s.body.get("grant_type") === "refresh_token")).toHaveLength(0);
      expect(server.authHeaders.at(-1)).toBe(`Bearer ${as.issued[0]}`);
    } finally {
      await server.close();
      await as.close();
    }
  });

  it("a reconnect that sends the token the server refused when fresh fails the same way without refreshing again", async () => {
    home = tempHome();
    const as = await startFakeAs();
    const deaf = await startProtectedMcp(
      () => as.url,
      async () => false,
    );
    try {
      await loginWith(harness(home.dir, "deaf", deaf.url));
      const parsed = mcpServerSchema.parse({ url: deaf.url, auth: "oauth", skip_preflight: true });
      const refreshes = () => as.seen.filter((s) => s.body.get("grant_type") === "refresh_token").length;
      const messages: string[] = [];
      // The gateway's reconnects: each connect makes its own provider, as a background connect does.
      for (let attempt = 0; attempt < 3; attempt++) {
        const err = (await connectServer("deaf", parsed, {
          scope: () => ({ secrets: {}, env: {} }),
          interactive: false,
          oauthProviderFor: (server, e) =>
            oauthProviderFor(server, e, { interactive: false, paths: svcPaths(home.dir) }),
        }).catch((e: unknown) => e)) as Error;
        messages.push(err.message);
      }
      for (const message of messages)
        expect(message).toMatch(/deaf: the server refused a newly issued access token too/);
      // One refresh (at the first connect, whose stored token was refused); none at the reconnects.
      expect(refreshes()).toBe(1);
    } finally {
      await deaf.close();
      await as.close();
    }
  });

  it("a server that moved to another authorization server: a background connect names both and asks for a login, at every reconnect; a CLI-driven one logs in there", async () => {
    home = tempHome();
    const before = await startFakeAs();
    const after = await startFakeAs();
    let current = before;
    const server = await startProtectedMcp(
      () => current.url,
      async (token) => current.issued.includes(token),
    );
    try {
      await loginWith(harness(home.dir, "moved", server.url));
      current = after;
      const parsed = mcpServerSchema.parse({ url: server.url, auth: "oauth", skip_preflight: true });
      for (let attempt = 0; attempt < 2; attempt++) {
        const err = (await connectServer("moved", parsed, {
          scope: () => ({ secrets: {}, env: {} }),
          interactive: false,
          oauthProviderFor: (name, e) =>
            oauthProviderFor(name, e, { interactive: false, paths: svcPaths(home.dir) }),
        }).catch((e: unknown) => e)) as Error;
        expect(err.message).toContain(
          `moved: the server now names ${after.url} as its authorization server, not ${before.url}, which issued the saved login — run \`svc mcp login moved\``,
        );
      }
      // A CLI-driven connect logs in at the new one and connects.
      const opened: string[] = [];
      const printed: string[] = [];
      const session = await connectServer("moved", parsed, {
        scope: () => ({ secrets: {}, env: {} }),
        interactive: true,
        oauthProviderFor: (name, e) =>
          oauthProviderFor(name, e, {
            interactive: true,
            isTTY: true,
            paths: svcPaths(home.dir),
            print: (line) => printed.push(line),
            openBrowser: async (u) => {
              opened.push(u);
              await followAuthorization(u);
            },
          }),
      });
      await session.close();
      expect(opened.map((u) => new URL(u).origin)).toEqual([after.url]);
      expect(printed[0]).toBe(
        `moved: the server now names ${after.url} as its authorization server, not ${before.url}, which issued the saved login — logging in there`,
      );
    } finally {
      await server.close();
      await before.close();
      await after.close();
    }
  });
});
