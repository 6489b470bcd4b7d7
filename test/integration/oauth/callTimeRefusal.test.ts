import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { approveDeviceLogin, harness, oauthFakesPerTest } from "./helpers.js";

/**
 * A refresh refused (invalid_grant) while a gateway's tool call runs: the call fails asking for a login, and
 * the server does not stay `connected` with nothing logged — it is failed at once with that reason (one WARN,
 * the status `svc mcp list` and the `svc_mcp_servers` gauge read), as a reconnect failing so leaves it, and a later
 * login is picked up at its next retry.
 */
let home: TempHome;
const { as, closeLater } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const MAX_BACKOFF_MS = 300_000;
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]?.text;
const refusedLine =
  /^\[mcp\] mcp_servers\.notes: token refresh failed — http:\/\/127\.0\.0\.1:\d+\/token answered 400: .*invalid_grant.* — run `svc mcp login notes --flow device`$/;

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

      const log = captureLogger();
      const clock = new SimulatedClock();
      const hub = new McpHub({
        servers: { notes: mcpServerSchema.parse({ url: mcp.url, auth: "oauth", oauth: { flow: "device" } }) },
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
      // The backoff's next retry, however far: the clock moved a second at a time (a connect's own timeout,
      // a minute, is never passed).
      const nextRetry = async () => {
        for (let waited = 0; waited <= MAX_BACKOFF_MS; waited += 1000) {
          clock.increment(1000);
          if (hub.status()[0]?.state !== "failed") break;
        }
        return hub.settled("notes");
      };

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
      await expect(hub.call("notes", "whoami", {})).rejects.toThrow(asksLogin);
      const status = (await hub.settled("notes")) as { state: string; lastError?: string };
      expect(status.state).toBe("failed");
      expect(status.lastError).toMatch(asksLogin);
      expect(hub.gaugeStates()).toEqual(["failed"]);
      const warned = () =>
        log
          .lines()
          .map((line) => JSON.parse(line) as { level: number; msg: string })
          .filter((l) => l.level >= 40);
      expect(warned().map((l) => l.msg)).toEqual([expect.stringMatching(refusedLine)]);

      // Later calls (and the background retries) fail the same way, without sending the refused refresh token
      // again, and are not warned about again.
      await expect(hub.call("notes", "whoami", {})).rejects.toThrow(asksLogin);
      await nextRetry();
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
});
