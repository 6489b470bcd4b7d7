import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { connectedOAuthGateway, oauthFakesPerTest } from "./helpers.js";

/**
 * A token refresh answered 4xx by something other than the authorization server (a firewall's page, a proxy's
 * 404, a 400 with an empty body): no OAuth error, so the grant may be fine. In a gateway, a token not yet
 * expired keeps serving its calls; an expired one fails the call saying the saved login is kept, the server
 * is not failed for a login, and once the token endpoint answers again the refresh goes through, no login.
 */
let home: TempHome;
const fakes = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]?.text;

const noOAuthError = [
  [
    "a firewall's 403 page",
    { status: 403, body: "<html>Request blocked by firewall</html>", contentType: "text/html" },
  ],
  ["a 400 with an empty body", { status: 400, body: "", contentType: "text/plain" }],
  ["a proxy's 404", { status: 404, body: "Not Found", contentType: "text/plain" }],
] as const;

describe("a token refresh answered 4xx without an OAuth error, in a gateway", () => {
  it.each(noOAuthError)(
    "%s: a token in its last minute keeps serving the calls; the server stays connected, the saved login untouched",
    async (_, refreshError) => {
      home = tempHome();
      const g = await connectedOAuthGateway(home, fakes);
      // In its last minute of an hour's lifetime.
      const expiring = { ...g.saved, obtained_at: Date.now() - 3570_000, expires_at: Date.now() + 30_000 };
      g.store.saveTokens(expiring);
      g.settings.refreshError = refreshError;

      expect(text(await g.hub.call("notes", "whoami", {}))).toBe("hello alice");
      expect(text(await g.hub.call("notes", "whoami", {}))).toBe("hello alice");
      // One refresh: the next is tried after 30 s, not at each request.
      expect(g.refreshes()).toBe(1);
      expect(g.hub.status()[0]?.state).toBe("connected");
      expect(g.store.readTokens()).toEqual(expiring);
      expect(g.warned()).toEqual([
        expect.objectContaining({
          msg: "[oauth] token refresh failed; using the current token, and trying again in 30 s",
          err: expect.stringMatching(
            new RegExp(`^notes: token refresh failed — \\S+/token answered ${refreshError.status}`),
          ),
        }),
      ]);
      expect(g.warned()[0]?.err).not.toMatch(/svc mcp login/);
    },
  );

  it.each(noOAuthError)(
    "%s: an expired token fails the call saying the saved login is kept, without failing the server for a login; once the token endpoint answers, the refresh goes through",
    async (_, refreshError) => {
      home = tempHome();
      const g = await connectedOAuthGateway(home, fakes);
      g.store.saveTokens({ ...g.saved, expires_at: Date.now() - 1000 });
      g.settings.refreshError = refreshError;

      const err = (await g.hub.call("notes", "whoami", {}).catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(
        new RegExp(
          `notes: token refresh failed — \\S+/token answered ${refreshError.status}.* — the saved login is kept; svc tries again on the next connect`,
        ),
      );
      expect(err.message).not.toMatch(/svc mcp login/);
      expect(g.hub.status()[0]?.state).toBe("connected");
      expect(g.warned().map((l) => l.msg)).not.toContainEqual(expect.stringMatching(/svc mcp login/));

      // The firewall lets the token endpoint through again: the next call refreshes, no login.
      delete g.settings.refreshError;
      expect(text(await g.hub.call("notes", "whoami", {}))).toBe("hello alice");
      expect(g.refreshes()).toBe(2);
      expect(g.logins()).toBe(1);
      expect(g.store.readTokens()?.access_token).toBe(g.auth.issued[1]);
    },
  );
});
