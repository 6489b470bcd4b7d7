import { afterEach, describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import type { OAuthSettings } from "../../../src/io/oauth/settings.js";
import { startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { approveDeviceLogin, harness, loginWith, oauthFakesPerTest } from "./helpers.js";

/**
 * A saved login found unusable while a gateway's tool call runs — a refresh refused (invalid_grant), a configured
 * client refused at that refresh (invalid_client), a newly issued token the server refuses too: the call fails
 * saying what to do, and the server does not stay `connected` with nothing logged — it is failed at once with that
 * reason (one WARN, the status `svc mcp list` and the `svc_mcp_servers` gauge read), as a reconnect failing so
 * leaves it, and a later login is picked up at its next retry.
 */
let home: TempHome;
const { as, closeLater } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const MAX_BACKOFF_MS = 300_000;
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]?.text;
const refusedLine =
  /^\[mcp\] mcp_servers\.notes: token refresh failed — http:\/\/127\.0\.0\.1:\d+\/token answered 400: .*invalid_grant.* — run `svc mcp login notes --flow device`$/;

/** A gateway's hub for server `notes` on a simulated clock, with what it logged at WARN and above. */
async function gatewayHub(url: string, oauth: OAuthSettings) {
  const log = captureLogger();
  const clock = new SimulatedClock();
  const hub = new McpHub({
    servers: { notes: mcpServerSchema.parse({ url, auth: "oauth", oauth }) },
    cacheDir: `${home.dir}/mcp-cache`,
    scope: () => ({ secrets: {}, env: {} }),
    logger: log.logger,
    approvals: policyApprovals("deny", log.logger),
    clock,
    oauthProviderFor: (server, e, { interactive }) =>
      oauthProviderFor(server, e, { interactive, paths: svcPaths(home.dir), logger: log.logger }),
  });
  closeLater(() => hub.stop());
  hub.start();
  expect((await hub.settled("notes")).state).toBe("connected");
  return {
    hub,
    // The backoff's next retry, however far: the clock moved a second at a time (a connect's own timeout,
    // a minute, is never passed).
    async nextRetry() {
      for (let waited = 0; waited <= MAX_BACKOFF_MS; waited += 1000) {
        clock.increment(1000);
        if (hub.status()[0]?.state !== "failed") break;
      }
      return hub.settled("notes");
    },
    warned: () =>
      log
        .lines()
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((l) => l.level >= 40),
    /**
     * Waits until the server has been failed `times` times in all, the call's failure included: each failed
     * connect says its failure again, at DEBUG when it is the one already warned about.
     */
    async failedTimes(times: number) {
      const failures = () => log.messages().filter((m) => m.startsWith("[mcp] mcp_servers.notes: ")).length;
      // vitest's 1 s default: a connect's failure after a refused refresh took longer on a loaded machine.
      await vi.waitFor(() => expect(failures()).toBe(times), { timeout: 15_000 });
    },
  };
}

/** The call fails with `why`; the server is failed with it (its status, the gauge), logged once at WARN. */
async function failsOnceWith(gateway: Awaited<ReturnType<typeof gatewayHub>>, why: RegExp, line: RegExp) {
  const { hub, warned } = gateway;
  await expect(hub.call("notes", "whoami", {})).rejects.toThrow(why);
  const status = (await hub.settled("notes")) as { state: string; lastError?: string };
  expect(status.state).toBe("failed");
  expect(status.lastError).toMatch(why);
  expect(hub.gaugeStates()).toEqual(["failed"]);
  expect(warned().map((l) => l.msg)).toEqual([expect.stringMatching(line)]);
}

describe("a refresh refused during a tool call", () => {
  it.each([
    ["the server refuses the access token (revoked)", "revoked"],
    ["the access token expired", "expired"],
  ] as const)(
    "%s: the call asks for a login, the server is failed with why, logged once; a new login is picked up",
    async (_, how) => {
      home = tempHome();
      const settings: {
        device: true;
        deviceInterval: number;
        refreshError?: { status: number; body: string };
      } = {
        device: true,
        deviceInterval: 1,
      };
      const auth = await as(settings);
      const mcp = await startProtectedMcp(
        () => auth.url,
        async (token) => auth.issued.includes(token) && auth.active(token),
      );
      closeLater(mcp.close);
      const h = harness(home.dir, "notes", mcp.url, { flow: "device" });
      expect(await approveDeviceLogin(h, { onPage: false })).toEqual({ ok: true });
      const gateway = await gatewayHub(mcp.url, { flow: "device" });
      const { hub, nextRetry, warned, failedTimes } = gateway;

      settings.refreshError = {
        status: 400,
        body: JSON.stringify({ error: "invalid_grant", error_description: "grant revoked" }),
      };
      const first = h.job.store.readTokens();
      if (first === undefined) throw new Error("no saved login");
      if (how === "revoked") auth.revokeAccess(first.access_token);
      else h.job.store.saveTokens({ ...first, expires_at: Date.now() - 1000 });

      const asksLogin =
        /notes: token refresh failed — .*invalid_grant.* — run `svc mcp login notes --flow device`/;
      await failsOnceWith(gateway, asksLogin, refusedLine);

      // Later calls (and the background retries) fail the same way, without sending the refused refresh token
      // again, and are not warned about again.
      await expect(hub.call("notes", "whoami", {})).rejects.toThrow(asksLogin);
      // The connect that call asked for (made once the failed session is closed), then the backoff's retry.
      await failedTimes(2);
      await nextRetry();
      await failedTimes(3);
      expect(warned()).toHaveLength(1);
      const refreshes = auth.seen.filter((r) => r.body.get("grant_type") === "refresh_token");
      expect(refreshes).toHaveLength(1);

      // `svc mcp login notes --flow device` while the gateway runs: its next retry connects with the new login.
      delete settings.refreshError;
      expect(await approveDeviceLogin(h, { onPage: false })).toEqual({ ok: true });
      expect((await nextRetry()).state).toBe("connected");
      expect(text(await hub.call("notes", "whoami", {}))).toBe("hello alice");
    },
  );

  it.each([
    ["invalid_client", 401],
    ["incorrect_client_credentials", 200],
  ] as const)(
    "a configured client refused at that refresh (%s): the call names the keys to check and the login, the server is failed with it, logged once; a new login is picked up",
    async (error, status) => {
      home = tempHome();
      const settings: { refreshError?: { status: number; body: string } } = {};
      const auth = await as(settings);
      const mcp = await startProtectedMcp(
        () => auth.url,
        async (token) => auth.issued.includes(token) && auth.active(token),
      );
      closeLater(mcp.close);
      const oauth = { client_id: "pre-1", client_secret: "rotated-away", cimd: false };
      const h = harness(home.dir, "notes", mcp.url, oauth);
      await loginWith(h);
      const gateway = await gatewayHub(mcp.url, oauth);
      const { hub, nextRetry, warned, failedTimes } = gateway;

      settings.refreshError = { status, body: JSON.stringify({ error }) };
      auth.revokeAccess(h.job.store.readTokens()?.access_token ?? "");

      const checkClient = new RegExp(
        `notes: token refresh failed — \\S+ answered ${status}: .*${error}.* — check mcp_servers\\.notes\\.oauth\\.client_id, client_secret and token_endpoint_auth_method, then run \`svc mcp login notes\``,
      );
      await failsOnceWith(
        gateway,
        checkClient,
        new RegExp(`^\\[mcp\\] mcp_servers\\.${checkClient.source}$`),
      );

      // Later calls and the background retries fail the same way without asking the token endpoint again.
      await expect(hub.call("notes", "whoami", {})).rejects.toThrow(checkClient);
      // The connect that call asked for (made once the failed session is closed), then the backoff's retry.
      await failedTimes(2);
      await nextRetry();
      await failedTimes(3);
      expect(warned()).toHaveLength(1);
      expect(auth.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);

      // The client fixed on the authorization server's side, then `svc mcp login notes`: the next retry connects.
      delete settings.refreshError;
      await loginWith(h);
      expect((await nextRetry()).state).toBe("connected");
      expect(text(await hub.call("notes", "whoami", {}))).toBe("hello alice");
    },
  );

  it("a newly issued token the server refuses too: the call asks for a login, the server is failed with why, logged once; a new login is picked up", async () => {
    home = tempHome();
    const auth = await as();
    // A resource server that refuses every token for a while (its setup broken), as one that trusts another
    // issuer or expects another audience does.
    let refusing = false;
    const mcp = await startProtectedMcp(
      () => auth.url,
      async (token) => !refusing && auth.issued.includes(token) && auth.active(token),
    );
    closeLater(mcp.close);
    const oauth = { cimd: false };
    const h = harness(home.dir, "notes", mcp.url, oauth);
    await loginWith(h);
    const gateway = await gatewayHub(mcp.url, oauth);
    const { hub, nextRetry, warned, failedTimes } = gateway;

    refusing = true;
    auth.revokeAccess(h.job.store.readTokens()?.access_token ?? "");
    const refusedToo =
      /notes: the server refused a newly issued access token too — .* then run `svc mcp login notes`/;
    await failsOnceWith(gateway, refusedToo, new RegExp(`^\\[mcp\\] mcp_servers\\.${refusedToo.source}$`));

    // Later calls and the background retries fail the same way without another refresh.
    await expect(hub.call("notes", "whoami", {})).rejects.toThrow(refusedToo);
    // The connect that call asked for (made once the failed session is closed), then the backoff's retry.
    await failedTimes(2);
    await nextRetry();
    await failedTimes(3);
    expect(warned()).toHaveLength(1);
    expect(auth.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);

    // The server's setup fixed, then `svc mcp login notes`: the next retry connects with the new login.
    refusing = false;
    await loginWith(h);
    expect((await nextRetry()).state).toBe("connected");
    expect(text(await hub.call("notes", "whoami", {}))).toBe("hello alice");
  });
});
