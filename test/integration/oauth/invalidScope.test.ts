import { afterEach, describe, expect, it } from "vitest";
import { createActor, waitFor } from "xstate";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

/**
 * RFC 6749 4.1.2.1 / RFC 8628 3.2: `invalid_scope` is the server refusing the scope svc asked for. Logging
 * in again asks for the same scope, so the error names that scope, where it came from and the key that
 * changes it.
 */
describe("a login refused with invalid_scope", () => {
  it("browser: names the scope asked for (the server's scopes_supported) and oauth.scope", async () => {
    home = tempHome();
    const auth = await as({ authorizeError: "invalid_scope" });
    const h = harness(home.dir, "nope", (await resource([auth.url])).url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /^nope: the authorization server refused the login: invalid_scope — svc asked for scope "mcp" \(the scopes_supported of the server's protected resource metadata\): set mcp_servers\.nope\.oauth\.scope to scopes the authorization server allows this client, then run `svc mcp login nope`$/,
    );
  });

  it("browser: a configured oauth.scope is named as the source", async () => {
    home = tempHome();
    const auth = await as({ authorizeError: "invalid_scope" });
    const h = harness(home.dir, "nope", (await resource([auth.url])).url, {
      cimd: false,
      scope: "mcp admin",
    });
    await expect(loginWith(h)).rejects.toThrow(
      /svc asked for scope "mcp admin" \(mcp_servers\.nope\.oauth\.scope\): set mcp_servers\.nope\.oauth\.scope to scopes/,
    );
  });

  it("device: the device authorization request's invalid_scope names the scope and oauth.scope", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceAuthorizationError: { status: 400, body: '{"error":"invalid_scope"}' },
    });
    const h = harness(home.dir, "dev", (await resource([auth.url])).url, { flow: "device", scope: "mcp x" });
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: "dev", job: h.job, timeoutMs: 300_000 },
    }).start();
    await waitFor(actor, (s) => s.status === "done");
    const output = actor.getSnapshot().output;
    expect(output?.ok).toBe(false);
    expect(output && !output.ok ? output.error.message : "").toMatch(
      /^dev: device authorization request failed — .*\/device answered 400: .*invalid_scope.* — svc asked for scope "mcp x" \(mcp_servers\.dev\.oauth\.scope\): set mcp_servers\.dev\.oauth\.scope to scopes the authorization server allows this client, then run `svc mcp login dev --flow device`$/,
    );
  });
});
