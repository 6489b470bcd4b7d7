import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { USER_AGENT } from "../../../src/io/version.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { oauthFakesPerTest } from "./helpers.js";

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
const hubs: McpHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
  home?.cleanup();
});

/**
 * A gateway's connect with a saved browser login that has no refresh token (GitHub-style) and no
 * `<server>.meta.json` (a token file of an older svc, or one written by hand), to a server that refuses
 * the access token.
 */
async function gatewayWithSavedLogin(issuer: string, url: string) {
  const paths = svcPaths(home.dir);
  mkdirSync(paths.mcpTokens, { recursive: true, mode: 0o700 });
  const write = (file: string, value: unknown) =>
    writeFileSync(join(paths.mcpTokens, file), JSON.stringify(value), { mode: 0o600 });
  write("srv.json", { access_token: "at-old", token_type: "Bearer", issuer, resource: url, flow: "browser" });
  write("srv.client.json", {
    client_id: "dcr-x",
    redirect_uris: ["http://127.0.0.1:5555/callback"],
    issuer,
    kind: "dcr",
  });
  const hub = new McpHub({
    servers: {
      srv: mcpServerSchema.parse({
        url,
        auth: "oauth",
        headers: { "X-Api-Key": "entry-header-value-123" },
        oauth: { cimd: false },
      }),
    },
    cacheDir: join(home.dir, "mcp-cache"),
    scope: () => ({ secrets: {}, env: {} }),
    logger: silentLogger(),
    approvals: policyApprovals("deny", silentLogger()),
    oauthProviderFor: (server, entry, { interactive }) =>
      oauthProviderFor(server, entry, { interactive, paths }),
  });
  hubs.push(hub);
  hub.start();
  return hub.settled("srv");
}

/**
 * The refusal is said at once: left to the MCP SDK's own auth flow after the 401, it fetched the
 * authorization server's metadata itself through the MCP transport (the entry's headers, another
 * User-Agent), and registered a client at an authorization server svc passes over, at each reconnect.
 */
describe("a refused access token with no refresh token and no discovery cache", () => {
  it("says to log in, and sends the authorization server no request with the entry's headers or another User-Agent", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const status = await gatewayWithSavedLogin(auth.url, rs.url);
    expect(status.lastError).toContain("there is no refresh token");
    expect(status.lastError).toContain("svc mcp login srv");
    for (const request of auth.seen) {
      expect(request.headers["x-api-key"]).toBeUndefined();
      expect(request.headers["user-agent"]).toBe(USER_AGENT);
    }
  });

  it("registers no client, also at an authorization server listed before the login's", async () => {
    home = tempHome();
    const passedOver = await as({ s256: false });
    const auth = await as();
    const rs = await resource([passedOver.url, auth.url]);
    const status = await gatewayWithSavedLogin(auth.url, rs.url);
    expect(passedOver.seen.filter((request) => request.path === "/register")).toEqual([]);
    expect(auth.seen.filter((request) => request.path === "/register")).toEqual([]);
    expect(status.lastError).toContain("svc mcp login srv");
  });
});
