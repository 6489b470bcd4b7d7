import { afterEach, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

/** Ory Hydra: a client registered without `scope` may ask only for these. */
const HYDRA = { registeredScopesOnly: { defaultScope: "offline_access offline openid" } };

const registrations = (auth: Awaited<ReturnType<typeof as>>) =>
  auth.seen.filter((r) => r.path === "/register").map((r) => JSON.parse(r.raw) as Record<string, unknown>);

/**
 * A dynamic registration asks for the scope the login will request (as the MCP SDK's own client does):
 * servers such as Ory Hydra let a client request only the scopes it registered, and give one registered
 * without `scope` a default set that does not hold the MCP server's scopes.
 */
describe("dynamic registration registers the scope the login asks for", () => {
  it("browser login: the registration carries the resource's scopes_supported, and the server grants them", async () => {
    home = tempHome();
    const auth = await as(HYDRA);
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "hydra", rs.url, { cimd: false });
    const tokens = await loginWith(h);
    expect(registrations(auth).map((r) => r.scope)).toEqual(["mcp"]);
    expect(auth.scopeOf(tokens.access_token)).toBe("mcp");
  });

  it("a stored registration whose scope lacks a scope the login now asks for (step-up) is not reused: the login registers again with it", async () => {
    home = tempHome();
    const auth = await as(HYDRA);
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "hydra", rs.url, { cimd: false });
    await loginWith(h);
    const first = h.job.store.readClient()?.client_id;
    h.job.store.requireScope("admin");
    const tokens = await loginWith(h);
    expect(registrations(auth).map((r) => r.scope)).toEqual(["mcp", "mcp admin"]);
    expect(h.job.store.readClient()?.client_id).not.toBe(first);
    expect(auth.scopeOf(tokens.access_token)).toBe("mcp admin");
  });

  it("a stored registration whose scope covers the login's is reused", async () => {
    home = tempHome();
    const auth = await as(HYDRA);
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "hydra", rs.url, { cimd: false });
    await loginWith(h);
    const first = h.job.store.readClient()?.client_id;
    await loginWith(h);
    expect(registrations(auth)).toHaveLength(1);
    expect(h.job.store.readClient()?.client_id).toBe(first);
  });

  it("device login: the registration carries the scope the device authorization request asks for", async () => {
    home = tempHome();
    const auth = await as({ ...HYDRA, device: true, deviceInterval: 1 });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "hydra", rs.url, { flow: "device" });
    const clock = new SimulatedClock();
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: h.job.serverName, job: h.job, timeoutMs: 300_000 },
      clock,
    }).start();
    const waiting = await waitFor(
      actor,
      (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }),
    );
    if (waiting.status === "active") clock.increment(waiting.context.intervalMs);
    await waitFor(actor, (s) => s.status === "done");
    expect(actor.getSnapshot().output).toMatchObject({ ok: true });
    expect(registrations(auth).map((r) => r.scope)).toEqual(["mcp"]);
    expect(auth.seen.find((r) => r.path === "/device")?.body.get("scope")).toBe("mcp");
  });
});
