import { afterEach, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

// Servers that serialize every field of their model (pydantic without exclude_none, Go structs without
// omitempty) answer a field without a value as `null` rather than leaving it out.
let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const withNulls = (t: Record<string, unknown>) => ({ ...t, scope: null, id_token: null });

describe("OAuth answers whose fields without a value are written null", () => {
  it("a login and a refresh read a token response with refresh_token, scope and id_token null as one without them", async () => {
    home = tempHome();
    let answers = 0;
    const auth = await as({
      // The login's answer carries its refresh token; the refresh's answers null for it (not rotated).
      tokenResponse: (t) => (++answers === 1 ? withNulls(t) : { ...withNulls(t), refresh_token: null }),
    });
    const rs = await resource([auth.url]);
    const first = await loginWith(harness(home.dir, "nulls", rs.url, { cimd: false }));
    expect(first.access_token).toBe(auth.issued[0]);
    expect(first).not.toHaveProperty("scope");
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "nulls",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later },
    );
    const renewed = await usableTokens(job);
    expect(renewed.access_token).toBe(auth.issued[1]);
    expect(renewed.refresh_token).toBe(first.refresh_token);
  });

  it("a token response whose expires_in is no number names the endpoint and its answer, not a schema dump", async () => {
    home = tempHome();
    const auth = await as({ tokenResponse: (t) => ({ ...t, expires_in: "soon" }) });
    const rs = await resource([auth.url]);
    await expect(loginWith(harness(home.dir, "soon", rs.url, { cimd: false }))).rejects.toThrow(
      /^soon: token exchange failed — http:\/\/127\.0\.0\.1:\d+\/token answered 200: \{.*"expires_in":"soon".*\} — run `svc mcp login soon` to try again$/,
    );
  });

  it("a device login reads a device authorization answer with verification_uri_complete null and a token response with nulls", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceInterval: 1,
      deviceResponse: (fields) => ({ ...fields, verification_uri_complete: null }),
      tokenResponse: (t) => ({ ...withNulls(t), refresh_token: null }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "devnulls", rs.url);
    const clock = new SimulatedClock();
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: "devnulls", job: h.job, timeoutMs: 300_000 },
      clock,
    }).start();
    const waiting = await waitFor(
      actor,
      (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }),
    );
    clock.increment(waiting.context.intervalMs);
    await waitFor(actor, (s) => s.status === "done");
    expect(actor.getSnapshot().output?.ok).toBe(true);
    expect(h.printed.join("\n")).not.toContain("Or open this link directly");
    expect(h.job.store.readTokens()).toMatchObject({ access_token: auth.issued[0], flow: "device" });
    expect(h.job.store.readTokens()).not.toHaveProperty("refresh_token");
  });

  it("a registration answer with client_secret, grant_types and response_types null registers a public client with what svc asked for", async () => {
    home = tempHome();
    const auth = await as({
      registrationResponse: (answer) => ({
        ...answer,
        client_secret: null,
        client_secret_expires_at: null,
        grant_types: null,
        response_types: null,
        client_uri: null,
        token_endpoint_auth_method: "",
      }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "dcrnulls", rs.url, { cimd: false });
    await loginWith(h);
    const client = h.job.store.readClient();
    expect(client).toMatchObject({ grant_types: ["authorization_code", "refresh_token"] });
    expect(client).not.toHaveProperty("client_secret");
    const exchange = auth.seen.find((r) => r.body.get("grant_type") === "authorization_code");
    expect(exchange?.headers.authorization).toBeUndefined();
    expect(exchange?.body.get("client_id")).toBe(client?.client_id);
  });

  it("protected-resource and authorization-server metadata with fields written null or empty are read without them", async () => {
    home = tempHome();
    const auth = await as({
      metadata: () => ({
        revocation_endpoint: "",
        service_documentation: "",
        introspection_endpoint: null,
        ui_locales_supported: null,
      }),
    });
    const rs = await resource([auth.url], {
      metadataFields: { jwks_uri: "", resource_name: null, bearer_methods_supported: null },
    });
    const h = harness(home.dir, "sparse", rs.url, { cimd: false });
    expect((await loginWith(h)).access_token).toBe(auth.issued[0]);
    expect(h.job.store.readMetadata()?.authorizationServerMetadata).not.toHaveProperty("revocation_endpoint");
  });
});
