import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";
import { connectedOAuthGateway, oauthFakesPerTest } from "./helpers.js";

/**
 * A token endpoint that answers a refresh with a page of its own (a firewall's 403, a proxy's 503) may quote
 * the request it refused. svc names the answer by its status and a redacted excerpt; the MCP SDK's own error
 * for it ("Invalid OAuth error response: … Raw body: <the page>") never reaches a tool call's error (what the
 * agent is told), the log or `svc mcp list`.
 */
let home: TempHome;
const fakes = oauthFakesPerTest();
// The CLI's first load in this worker, outside any test's 30 s.
beforeAll(() => loadInProcessCli("mcp"), 120_000);
afterEach(() => home?.cleanup());

const PAGE =
  "<html><head><title>Request blocked</title></head><body><p>Your request was blocked.</p>" +
  "<pre>POST /token grant_type=refresh_token&client_secret=SEKRET123&refresh_token=RT-SEKRET</pre></body></html>";
const SECRETS = /SEKRET123|RT-SEKRET/;

const pages = [
  ["a firewall's 403 page", { status: 403, body: PAGE, contentType: "text/html" }],
  ["a proxy's 503 page", { status: 503, body: PAGE, contentType: "text/html" }],
] as const;

describe("a token endpoint's error page that quotes the refresh request", () => {
  it.each(pages)(
    "%s: the tool call's error, the log and svc mcp list name the answer without the page's secrets",
    async (_, refreshError) => {
      home = tempHome();
      const { harness: h, hub, log, mcp, saved, settings } = await connectedOAuthGateway(home, fakes);

      // A token in its last minute keeps serving: the failed refresh is logged.
      h.job.store.saveTokens({
        ...saved,
        obtained_at: Date.now() - 3570_000,
        expires_at: Date.now() + 30_000,
      });
      settings.refreshError = refreshError;
      await hub.call("notes", "whoami", {});
      expect(log.messages()).toContain(
        "[oauth] token refresh failed; using the current token, and trying again in 30 s",
      );

      // An expired one fails the call, whose error is what the agent gets.
      h.job.store.saveTokens({ ...saved, expires_at: Date.now() - 1000 });
      const err = (await hub.call("notes", "whoami", {}).catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(
        new RegExp(
          `notes: token refresh failed — \\S+/token answered ${refreshError.status}: <html>.*client_secret=\\[redacted\\]&refresh_token=\\[redacted\\].* — the saved login is kept; svc tries again on the next connect$`,
        ),
      );
      expect(err.message).not.toMatch(/Raw body|Invalid OAuth error response/);
      expect(err.message).not.toMatch(SECRETS);
      expect(log.lines().join("\n")).not.toMatch(SECRETS);

      home.write(
        "config.yaml",
        `mcp_servers:\n  notes:\n    url: ${mcp.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
      );
      const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
      const list = await runInProcess(["mcp", "list"], {
        ...Object.fromEntries(inherited),
        SVC_HOME: home.dir,
      });
      expect(list.stdout).toMatch(
        new RegExp(
          `notes .*failed: notes: token refresh failed — \\S+/token answered ${refreshError.status}`,
        ),
      );
      expect(list.stdout + list.stderr).not.toMatch(SECRETS);
    },
  );
});

describe("a token endpoint's OAuth error that quotes the tokens svc holds", () => {
  // A refresh sends the refresh token, never the access token: the answer quotes both.
  const refused = (refresh: string, access: string) => ({
    status: 400,
    body: JSON.stringify({
      error: "invalid_grant",
      error_description: `refresh_token ${refresh} is unknown; access ${access}`,
    }),
  });
  const HELD = /BOGUSACCESS_|BOGUSREFRESH_/;

  it("the tool call's error, the log and svc mcp test show the saved access token [redacted], as the refresh token sent", async () => {
    home = tempHome();
    const { hub, log, mcp, saved, settings, store } = await connectedOAuthGateway(home, fakes);
    store.saveTokens({
      ...saved,
      access_token: "at-BOGUSACCESS_123456789",
      refresh_token: "rt-BOGUSREFRESH_987654321",
      expires_at: 1000,
    });
    settings.refreshError = refused("rt-BOGUSREFRESH_987654321", "at-BOGUSACCESS_123456789");
    const err = (await hub.call("notes", "whoami", {}).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /notes: token refresh failed — \S+\/token answered 400: \{"error":"invalid_grant","error_description":"refresh_token \[redacted\] is unknown; access \[redacted\]"\}/,
    );
    expect(log.lines().join("\n")).toContain("access [redacted]");
    expect(`${err.message}\n${log.lines().join("\n")}`).not.toMatch(HELD);

    // Other tokens, so the command's refresh is sent (a refused refresh token is not sent again).
    store.saveTokens({
      ...saved,
      access_token: "at-BOGUSACCESS_24680",
      refresh_token: "rt-BOGUSREFRESH_13579",
      expires_at: 1000,
    });
    settings.refreshError = refused("rt-BOGUSREFRESH_13579", "at-BOGUSACCESS_24680");
    home.write(
      "config.yaml",
      `mcp_servers:\n  notes:\n    url: ${mcp.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
    );
    const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
    const tested = await runInProcess(["mcp", "test", "--all"], {
      ...Object.fromEntries(inherited),
      SVC_HOME: home.dir,
    });
    expect(tested.stdout + tested.stderr).toContain("is unknown; access [redacted]");
    expect(tested.stdout + tested.stderr).not.toMatch(HELD);
  });
});
