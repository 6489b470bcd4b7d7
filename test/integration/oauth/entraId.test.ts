import { afterEach, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

/**
 * Microsoft Entra ID's v2.0 endpoints refuse the RFC 8707 `resource` parameter (AADSTS9010010 at the
 * authorize endpoint, AADSTS901002 at the token endpoint): the resource is named by the scope there
 * (`api://<app>/.default`), and `oauth.resource_indicator: false` leaves the parameter out of every request.
 * A tenant where only administrators consent stops every `prompt=consent` request (AADSTS90095), which
 * `oauth.consent_prompt: false` leaves out.
 */
let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const sentResource = (seen: { query?: URLSearchParams; body: URLSearchParams }[]) =>
  seen.filter((r) => r.query?.has("resource") || r.body.has("resource")).length;

describe("Microsoft Entra ID's v2.0 endpoints", () => {
  it("a browser login refused for its resource parameter says which key leaves it out", async () => {
    home = tempHome();
    const entra = await as({ refuseResource: true });
    const h = harness(home.dir, "entra", (await resource([entra.url])).url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /^entra: the authorization server refused the login: invalid_target \(AADSTS9010010: .*\) — the server refused the resource parameter \(RFC 8707\) svc sends; set mcp_servers\.entra\.oauth\.resource_indicator: false to leave it out, then run `svc mcp login entra`$/,
    );
  });

  it("a device login refused for its resource parameter (AADSTS901002) says which key leaves it out", async () => {
    home = tempHome();
    const entra = await as({ refuseResource: true, device: true });
    const h = harness(home.dir, "entradev", (await resource([entra.url])).url);
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: "entradev", job: h.job, timeoutMs: 300_000 },
      clock: new SimulatedClock(),
    }).start();
    const done = await waitFor(actor, (s) => s.status === "done");
    expect(done.output && !done.output.ok && done.output.error.message).toMatch(
      /^entradev: device authorization request failed — \S+ answered 400: .*AADSTS901002.* — the server refused the resource parameter \(RFC 8707\) svc sends; set mcp_servers\.entradev\.oauth\.resource_indicator: false to leave it out, then run `svc mcp login entradev --flow device`$/,
    );
  });

  it("with resource_indicator: false, a browser login and a refresh send no resource parameter", async () => {
    home = tempHome();
    const entra = await as({ refuseResource: true });
    const url = (await resource([entra.url])).url;
    const oauth = { cimd: false, scope: "api://svc-mcp/.default offline_access", resource_indicator: false };
    const first = await loginWith(harness(home.dir, "entra", url, oauth));
    expect(first.access_token).toBe(entra.issued[0]);
    // The login still records the resource its tokens serve, so they go to no other server.
    expect(first.resource).toBe(url);
    const job = makeJob(
      "entra",
      { url, auth: "oauth", oauth },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => Date.now() + 2 * 3600_000 },
    );
    expect((await usableTokens(job)).access_token).toBe(entra.issued[1]);
    expect(sentResource(entra.seen)).toBe(0);
  });

  it("with resource_indicator: false, a device login sends no resource parameter", async () => {
    home = tempHome();
    // Entra ID's metadata: no PKCE methods listed (a browser login passes it over) and no grant list.
    const entra = await as({
      refuseResource: true,
      device: true,
      deviceInterval: 1,
      metadata: () => ({ code_challenge_methods_supported: undefined, grant_types_supported: undefined }),
    });
    const h = harness(home.dir, "entradev", (await resource([entra.url])).url, {
      resource_indicator: false,
    });
    const clock = new SimulatedClock();
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: "entradev", job: h.job, timeoutMs: 300_000 },
      clock,
    }).start();
    const waiting = await waitFor(
      actor,
      (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }),
    );
    clock.increment(waiting.context.intervalMs);
    await waitFor(actor, (s) => s.status === "done");
    expect(actor.getSnapshot().output?.ok).toBe(true);
    expect(sentResource(entra.seen)).toBe(0);
  });

  it("consent_prompt: false leaves prompt=consent out of an authorization request asking for offline_access", async () => {
    home = tempHome();
    const scope = "api://svc-mcp/.default offline_access";
    // By default the request asks for consent with offline_access (OpenID Connect's rule for refresh tokens).
    const usual = await as();
    const asked = harness(home.dir, "asked", (await resource([usual.url])).url, { cimd: false, scope });
    await loginWith(asked);
    expect(new URL(asked.opened[0] as string).searchParams.getAll("prompt")).toEqual(["consent"]);
    const entra = await as({ consentNeedsAdmin: true });
    const url = (await resource([entra.url])).url;
    const h = harness(home.dir, "admin", url, { cimd: false, scope, consent_prompt: false });
    expect((await loginWith(h)).access_token).toBe(entra.issued[0]);
    expect(new URL(h.opened[0] as string).searchParams.has("prompt")).toBe(false);
    expect(new URL(h.opened[0] as string).searchParams.get("scope")).toBe(scope);
  });
});
