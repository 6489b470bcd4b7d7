import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { oidcWithMcpPerFile } from "./helpers.js";

/**
 * Spec 2.1 `connect_timeout` bounds the connection; spec 5.3 "first connect opens a browser window"
 * and the browser login may take up to five minutes (section 8). The person logging in is not the
 * server being slow: time spent in the browser does not count against connect_timeout.
 */
const shared = oidcWithMcpPerFile();
let home: TempHome;
const hubs: McpHub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
  home?.cleanup();
});

describe("an interactive first connect of an auth: oauth server", () => {
  it("waits for a browser login that takes longer than connect_timeout, then connects", async () => {
    home = tempHome();
    const opened: string[] = [];
    // The connection's timers (connect_timeout among them) run on this clock, moved by the test.
    const clock = new SimulatedClock();
    const hub = new McpHub({
      servers: {
        slowuser: mcpServerSchema.parse({
          url: shared.mcp.url,
          auth: "oauth",
          oauth: { cimd: false },
          connect_timeout: 1,
        }),
      },
      cacheDir: `${home.dir}/mcp-cache`,
      scope: () => ({ secrets: {}, env: {} }),
      logger: silentLogger(),
      approvals: policyApprovals("deny", silentLogger()),
      interactive: true,
      clock,
      oauthProviderFor: (server, e, { interactive }) =>
        oauthProviderFor(server, e, {
          interactive,
          isTTY: true,
          paths: svcPaths(home.dir),
          print: () => {},
          openBrowser: async (u) => {
            opened.push(u);
            // The person takes 2.5 s to log in: longer than connect_timeout (1 s). A connect bounded
            // by connect_timeout alone would fail here with "connect timed out after 1 s".
            clock.increment(2500);
            await followAuthorization(u);
          },
        }),
    });
    hubs.push(hub);
    hub.start();
    const status = await hub.settled("slowuser", { connect: true });
    expect(opened).toHaveLength(1);
    expect(status).toMatchObject({ state: "connected", toolCount: 1 });
    expect((await hub.call("slowuser", "whoami", {})).content).toEqual([
      { type: "text", text: "hello alice" },
    ]);
  });
});
