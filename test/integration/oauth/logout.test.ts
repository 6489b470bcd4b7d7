import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { USER_AGENT } from "../../../src/io/version.js";
import type { ProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import type { OidcServer } from "../../fakes/authServer/oidc.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { harness, loginWith, oauthFakesPerTest, startOidcWithMcp } from "./helpers.js";

/** docs/mcp-oauth.md: `svc mcp logout` revokes the saved grant (RFC 7009) and removes the saved tokens. */

let oidc: OidcServer;
let mcp: ProtectedMcp;
let stop: () => Promise<void>;
let home: TempHome;
beforeAll(async () => {
  ({ oidc, mcp, close: stop } = await startOidcWithMcp());
});
afterAll(() => stop());
afterEach(() => home?.cleanup());
const fakes = oauthFakesPerTest();

const svc = (...args: string[]) =>
  runInProcess(["mcp", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

const tokensFile = () => join(home.dir, "mcp-tokens", "notes.json");

/** config.yaml with `notes` on `url`, and a login to it saved as `svc mcp login notes` saves one. */
async function loggedIn(url: string) {
  home = tempHome();
  home.write(
    "config.yaml",
    `mcp_servers:\n  notes:\n    url: ${url}\n    auth: oauth\n    oauth: {cimd: false}\n`,
  );
  return loginWith(harness(home.dir, "notes", url, { cimd: false }));
}

describe("svc mcp logout", () => {
  it("revokes the refresh and access tokens at the authorization server that issued them, and removes the saved tokens", async () => {
    const tokens = await loggedIn(mcp.url);
    expect(await oidc.audienceOf(tokens.access_token)).toBe(mcp.url);
    expect(await oidc.provider.RefreshToken.find(tokens.refresh_token as string)).toBeDefined();
    const registration = readFileSync(join(home.dir, "mcp-tokens", "notes.client.json"), "utf8");

    const r = await svc("logout", "notes");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toBe(`notes: logged out — the grant is revoked and ${tokensFile()} removed\n`);
    expect(existsSync(tokensFile())).toBe(false);
    expect(await oidc.audienceOf(tokens.access_token)).toBeUndefined();
    expect(await oidc.provider.RefreshToken.find(tokens.refresh_token as string)).toBeUndefined();
    // The registration stays for the next login.
    expect(readFileSync(join(home.dir, "mcp-tokens", "notes.client.json"), "utf8")).toBe(registration);

    const again = await svc("logout", "notes");
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`svc: notes: not logged in — no saved login at ${tokensFile()}\n`);
  });

  it("sends Svc-Agent/<version> to the revocation endpoint: oauth.user_agent is for token-endpoint requests only", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `mcp_servers:\n  notes:\n    url: ${mcp.url}\n    auth: oauth\n    oauth: {cimd: false, user_agent: Custom-Agent/9}\n`,
    );
    await loginWith(harness(home.dir, "notes", mcp.url, { cimd: false, user_agent: "Custom-Agent/9" }));
    const agents: string[] = [];
    const seen = (ctx: { get(name: string): string }) => agents.push(ctx.get("user-agent"));
    oidc.provider.on("grant.revoked", seen);
    try {
      const r = await svc("logout", "notes");
      expect(r).toMatchObject({ code: 0, stderr: "" });
    } finally {
      oidc.provider.off("grant.revoked", seen);
    }
    expect(agents).toEqual([USER_AGENT]);
  });

  it("--local only removes the saved tokens: the grant stays valid at the authorization server", async () => {
    const tokens = await loggedIn(mcp.url);
    const r = await svc("logout", "notes", "--local");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toBe(`notes: logged out — ${tokensFile()} removed (--local: not revoked)\n`);
    expect(existsSync(tokensFile())).toBe(false);
    expect(await oidc.audienceOf(tokens.access_token)).toBe(mcp.url);
  });

  it("an authorization server without a revocation endpoint: the tokens are removed and a warning says the grant stays valid", async () => {
    const as = await fakes.as();
    const rs = await fakes.resource([as.url]);
    await loggedIn(rs.url);
    const r = await svc("logout", "notes");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`notes: logged out — ${tokensFile()} removed\n`);
    expect(r.stderr).toBe(
      `warning: notes: the grant was not revoked (${as.url} offers no revocation endpoint); it stays valid at its authorization server until it expires — revoke it there if it may have leaked\n`,
    );
    expect(existsSync(tokensFile())).toBe(false);
  });

  it("a server removed from config.yaml: its saved tokens are still removed, with the reason they are not revoked", async () => {
    const tokens = await loggedIn(mcp.url);
    home.write("config.yaml", "mcp_servers: {}\n");
    const r = await svc("logout", "notes");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`the grant was not revoked (mcp_servers.notes with auth: oauth is not in `);
    expect(existsSync(tokensFile())).toBe(false);
    expect(await oidc.audienceOf(tokens.access_token)).toBe(mcp.url);
  });

  it("--profile forgets that profile's login only", async () => {
    await loggedIn(mcp.url);
    const r = await svc("logout", "notes", "--profile", "work");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `svc: notes: not logged in for profile work — no saved login at ${join(home.dir, "profiles", "work", "mcp-tokens", "notes.json")}\n`,
    );
    expect(existsSync(tokensFile())).toBe(true);
  });
});
