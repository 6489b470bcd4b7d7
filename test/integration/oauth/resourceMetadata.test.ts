import { afterEach, describe, expect, it } from "vitest";
import { startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

/** RFC 9728 protected-resource metadata as a real MCP server publishes it (spec 5.3 "metadata discovery"). */
let home: TempHome;
const { as, resource, closeLater } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

describe("protected resource metadata (RFC 9728)", () => {
  const namesNone = (name: string, metadataUrl: string) =>
    `${name}: OAuth discovery failed — ${metadataUrl}: protected resource metadata lists no authorization_servers — the server's operator must name its authorization server`;

  it.each([
    ["an empty authorization_servers", { authorization_servers: [] }],
    ["no authorization_servers", { authorization_servers: undefined }],
  ])(
    "a document with %s fails the login naming it: the MCP server's origin is not taken for the authorization server (no metadata asked there, no registration POSTed to it)",
    async (_, metadataFields) => {
      home = tempHome();
      const auth = await as();
      const mcp = await startProtectedMcp(
        () => auth.url,
        async (token) => auth.issued.includes(token),
        undefined,
        { metadataFields },
      );
      closeLater(mcp.close);
      const h = harness(home.dir, "srv", mcp.url, { cimd: false });
      const origin = new URL(mcp.url).origin;
      await expect(loginWith(h)).rejects.toThrow(
        namesNone("srv", `${origin}/.well-known/oauth-protected-resource/mcp`),
      );
      expect(mcp.requests.filter((r) => /oauth-authorization-server|openid-configuration/.test(r))).toEqual(
        [],
      );
      expect(mcp.requests).not.toContain("POST /register");
      expect(auth.seen).toEqual([]);
      expect(h.opened).toHaveLength(0);
      expect(h.job.store.readMetadata()).toBeUndefined();
    },
  );

  it("names the document the 401 challenge pointed to when it lists no authorization server; the device flow fails the same way", async () => {
    home = tempHome();
    const rs = await resource([], { metadataPath: "/meta/prm.json" });
    const metadataUrl = `${new URL(rs.url).origin}/meta/prm.json`;
    const h = harness(home.dir, "custom", rs.url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(namesNone("custom", metadataUrl));
    await expect(loginWith(h, "device")).rejects.toThrow(namesNone("custom", metadataUrl));
    expect(rs.seen.filter((r) => r.method === "POST")).toEqual([]);
    expect(rs.seen.filter((r) => r.path.includes("oauth-authorization-server"))).toEqual([]);
  });

  it("follows the resource_metadata URL of the server's 401 challenge (section 5.1), not only well-known paths", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], { metadataPath: "/meta/prm.json" });
    const h = harness(home.dir, "custom", rs.url, { cimd: false });
    const tokens = await loginWith(h);
    expect(tokens.access_token).toBe(auth.issued[0]);
    expect(h.job.store.readTokens()?.issuer).toBe(auth.url);
    expect(rs.seen.some((r) => r.path === "/meta/prm.json")).toBe(true);
    // The authorization server came from the document, not from the "origin is its own AS" fallback.
    expect(new URL(h.opened[0] as string).origin).toBe(auth.url);
  });

  it("finds resource_metadata in a Bearer challenge that is not the first one of the header (RFC 9110 11.6.1)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], {
      metadataPath: "/meta/prm.json",
      challenge: (m) => `DPoP algs="ES256 PS256", bearer realm="mcp", resource_metadata="${m}"`,
    });
    const h = harness(home.dir, "second", rs.url, { cimd: false });
    await loginWith(h);
    expect(rs.seen.some((r) => r.path === "/meta/prm.json")).toBe(true);
    expect(new URL(h.opened[0] as string).origin).toBe(auth.url);
  });

  it("requests the scope the 401 challenge names before the metadata's scopes_supported; oauth.scope wins over both", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], {
      challenge: (m) =>
        `Bearer error="invalid_token", scope="files:read files:write", resource_metadata="${m}"`,
    });
    const h = harness(home.dir, "scoped", rs.url, { cimd: false });
    await loginWith(h);
    expect(new URL(h.opened[0] as string).searchParams.get("scope")).toBe("files:read files:write");
    const configured = harness(home.dir, "configured", rs.url, { cimd: false, scope: "mine" });
    await loginWith(configured);
    expect(new URL(configured.opened[0] as string).searchParams.get("scope")).toBe("mine");
  });

  it("refuses metadata whose resource does not cover the configured URL (section 3.3)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], { resource: () => "https://other.example/mcp" });
    const h = harness(home.dir, "foreign", rs.url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /foreign: the server's protected resource metadata names resource "https:\/\/other\.example\/mcp", which does not cover http:\/\/127\.0\.0\.1:\d+\/mcp — login refused/,
    );
    expect(h.opened).toHaveLength(0);
    expect(auth.seen.some((r) => r.path === "/register" || r.path === "/token")).toBe(false);
  });

  it("accepts a resource identifier that differs only by a trailing slash (FastMCP mounted at root) and sends it as is", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], { resource: (base) => `${base}/mcp/` });
    const h = harness(home.dir, "slash", rs.url, { cimd: false });
    await loginWith(h);
    expect(new URL(h.opened[0] as string).searchParams.get("resource")).toBe(`${rs.url}/`);
  });

  it("still refuses a resource on a sibling path (/mcp2 for /mcp)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], { resource: (base) => `${base}/mcp2` });
    await expect(loginWith(harness(home.dir, "sibling", rs.url, { cimd: false }))).rejects.toThrow(
      /does not cover/,
    );
  });

  it("accepts a resource identifier that is the server's origin (the URL's path lies under it)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url], { resource: (base) => base });
    const h = harness(home.dir, "origin", rs.url, { cimd: false });
    await loginWith(h);
    expect(new URL(h.opened[0] as string).searchParams.get("resource")).toBe(new URL(rs.url).origin);
  });
});
