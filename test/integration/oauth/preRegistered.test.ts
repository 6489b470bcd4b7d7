import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import type { ProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import type { OidcServer } from "../../fakes/authServer/oidc.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { approveDeviceLogin, harness, loginWith, startOidcWithMcp } from "./helpers.js";

/**
 * Spec 2.4: a pre-registered client (`oauth.client_id`, `client_secret`, `token_endpoint_auth_method`)
 * against a real authorization server (oidc-provider) that accepts each client only with its registered
 * authentication method.
 */
const METHODS = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "none"] as const;
const SECRET = "a-pre-registered-secret-that-is-long-enough-for-hs256";

let oidc: OidcServer;
let mcp: ProtectedMcp;
let stop: () => Promise<void>;
let home: TempHome;

beforeAll(async () => {
  ({
    oidc,
    mcp,
    close: stop,
  } = await startOidcWithMcp({
    clients: METHODS.map((method) => ({
      client_id: `svc-${method}`,
      ...(method === "none" ? {} : { client_secret: SECRET }),
      token_endpoint_auth_method: method,
      application_type: "native",
      redirect_uris: ["http://127.0.0.1/callback"],
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
      response_types: ["code"],
    })),
  }));
});
afterAll(() => stop());
afterEach(() => home?.cleanup());

const configured = (method: (typeof METHODS)[number]) => ({
  client_id: `svc-${method}`,
  ...(method === "none" ? {} : { client_secret: SECRET }),
  token_endpoint_auth_method: method,
});

describe("pre-registered client with each token_endpoint_auth_method (oidc-provider)", () => {
  for (const method of METHODS) {
    it(`${method}: browser login (code exchange) and refresh authenticate with the configured method`, async () => {
      home = tempHome();
      const h = harness(home.dir, "pre", mcp.url, configured(method));
      const tokens = await loginWith(h);
      expect(await oidc.audienceOf(tokens.access_token)).toBe(mcp.url);
      expect(tokens.refresh_token).toBeDefined();
      const refreshed = await usableTokens(h.job, { rejected: tokens.access_token });
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(await oidc.audienceOf(refreshed.access_token)).toBe(mcp.url);
    });
  }

  for (const method of ["client_secret_post", "client_secret_jwt"] as const) {
    it(`${method}: device authorization and token polling authenticate with the configured method`, async () => {
      home = tempHome();
      const h = harness(home.dir, "dev", mcp.url, { ...configured(method), scope: "mcp offline_access" });
      expect(await approveDeviceLogin(h)).toEqual({ ok: true });
      expect(await oidc.audienceOf(h.job.store.readTokens()?.access_token ?? "")).toBe(mcp.url);
    });
  }

  it("a login with a configured client clears the dynamic registration an earlier login left on disk", async () => {
    home = tempHome();
    await loginWith(harness(home.dir, "switch", mcp.url, { cimd: false }));
    const h = harness(home.dir, "switch", mcp.url, configured("client_secret_basic"), { freshClient: true });
    expect(h.job.store.readClient()?.client_id).toMatch(/./);
    await loginWith(h);
    // The stale registration is gone: removing client_id later registers anew instead of reviving it.
    expect(h.job.store.readClient()).toBeUndefined();
    expect(await oidc.audienceOf(h.job.store.readTokens()?.access_token ?? "")).toBe(mcp.url);
  });
});
