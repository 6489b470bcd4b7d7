import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A call to a remote server whose url a `${VAR}` gave, once the server went away: the call's failure quoted
 * the url's host (`connect ECONNREFUSED <host>:<port> — nothing listens on port N of <host>`); it names it as
 * the host of the url config.yaml writes, as the connect's failure does.
 */
describe(`a call to a server whose url a $\{VAR} gave, after the server went away`, () => {
  it("names the url's host as the host of the file's text", async () => {
    const first = await startStreamableHttp();
    const port = Number(new URL(first.url).port);
    ctx.home.write("config.yaml", `mcp_servers:\n  web:\n    url: "$\{WEB_URL}"\n`);
    ctx.home.write(".env", `WEB_URL=${first.url}\n`);
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, { web: config.mcp_servers.web as McpServerEntry });
    expect((await h.settled("web")).state).toBe("connected");
    await first.close();
    const failure = await h.call("web", "echo", { text: "x" }).then(
      () => new Error("the call succeeded"),
      (err: Error) => err,
    );
    const host = `<the host of "$\{WEB_URL}" (the value it gives is not shown)>`;
    expect(failure.message).toBe(
      `mcp_servers.web: "echo" failed: fetch failed: connect ECONNREFUSED ${host}:${port} — nothing listens on port ${port} of ${host}: start the server, or check mcp_servers.web.url`,
    );
  });
});
