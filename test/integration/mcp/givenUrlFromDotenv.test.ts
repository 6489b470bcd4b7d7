import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { closedPort } from "../../helpers/closedPort.js";
import { serveStatelessJsonMcp } from "../../helpers/statelessJsonMcp.js";
import { useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * docs/mcp.md: a `url` a `${VAR}` gave names its host as the host of the url config.yaml writes, whatever the
 * variable's name and wherever it is set. A host (or host:port) from `.env` was hidden as a credential of the
 * entry before it could be named so: `getaddrinfo ENOTFOUND [redacted]`, with no hint of what to check.
 */
async function failure(
  url: string,
  dotenv: string,
  env: Record<string, string> = {},
  more = "",
): Promise<string> {
  ctx.home.write("config.yaml", `mcp_servers:\n  web:\n    url: "${url}"\n    skip_preflight: true\n${more}`);
  ctx.home.write(".env", dotenv);
  const { config, scope } = loadConfig({ home: ctx.home.dir, env });
  return connectServer("web", config.mcp_servers.web as McpServerEntry, {
    scope: () => scope,
    interactive: false,
  }).then(
    async (session) => {
      await session.close();
      return "connected";
    },
    (err: Error) => err.message,
  );
}

describe("a url whose host a variable of .env gave", () => {
  it("a host DNS does not know is named as the host of the url as written, with what to check", async () => {
    const host = `<the host of "http://$\{MCP_HOST}/mcp" (the value it gives is not shown)>`;
    expect(await failure(`http://$\{MCP_HOST}/mcp`, "MCP_HOST=svc-test.invalid\n")).toBe(
      `mcp_servers.web: fetch failed: getaddrinfo ENOTFOUND ${host} — the host name ${host} is not known (DNS): check the host in mcp_servers.web.url`,
    );
  });

  it("a loopback port nothing listens on is named so, with what to check", async () => {
    const port = await closedPort();
    const host = `<the host of "http://$\{MCP_HOSTPORT}/mcp" (the value it gives is not shown)>`;
    expect(await failure(`http://$\{MCP_HOSTPORT}/mcp`, `MCP_HOSTPORT=127.0.0.1:${port}\n`)).toBe(
      `mcp_servers.web: fetch failed: connect ECONNREFUSED ${host}:${port} — nothing listens on port ${port} of ${host}: start the server, or check mcp_servers.web.url`,
    );
  });
});

describe("protocol: stateless, a url whose host a variable gave, nothing answering there", () => {
  // The probe's and the legacy retry's failures are composed into one message: a host from .env was hidden in
  // each before it could be named (`connect ECONNREFUSED [redacted]`), with no hint; one from the environment
  // was named. A host DNS does not know got no hint either way: its name was read with the `)` after it.
  const host = `<the host of "http://$\{MCP_HOST}/mcp" (the value it gives is not shown)>`;
  const both = (failed: string) =>
    `mcp_servers.web: server/discover failed (fetch failed: ${failed}) and the legacy initialize retry failed (fetch failed: ${failed})`;
  const stateless = "    protocol: stateless\n";

  it.each(["the environment", ".env"])(
    "from %s: a port nothing listens on names the host as written, with what to check",
    async (where) => {
      const port = await closedPort();
      const value = `127.0.0.1:${port}`;
      const error = await failure(
        `http://$\{MCP_HOST}/mcp`,
        where === ".env" ? `MCP_HOST=${value}\n` : "",
        where === ".env" ? {} : { MCP_HOST: value },
        stateless,
      );
      expect(error).toBe(
        `${both(`connect ECONNREFUSED ${host}:${port}`)} — nothing listens on port ${port} of ${host}: start the server, or check mcp_servers.web.url`,
      );
    },
  );

  it.each(["the environment", ".env"])(
    "from %s: a host DNS does not know is named as written, with what to check",
    async (where) => {
      const error = await failure(
        `http://$\{MCP_HOST}/mcp`,
        where === ".env" ? "MCP_HOST=svc-test.invalid\n" : "",
        where === ".env" ? {} : { MCP_HOST: "svc-test.invalid" },
        stateless,
      );
      expect(error).toBe(
        `${both(`getaddrinfo ENOTFOUND ${host}`)} — the host name ${host} is not known (DNS): check the host in mcp_servers.web.url`,
      );
    },
  );
});

describe("a call to a server whose host and port a variable of .env gave, after the server went away", () => {
  // The whole url from one variable, or its host:port: the call's failure quoted the host (`connect ECONNREFUSED
  // <host>:<port> — nothing listens on port N of <host>`); it names it as the host of the url config.yaml writes.
  it.each([
    { written: `$\{WEB_URL}`, variable: "WEB_URL", value: (url: URL) => url.href },
    { written: `http://$\{MCP_HOSTPORT}/mcp`, variable: "MCP_HOSTPORT", value: (url: URL) => url.host },
  ])(
    "a call once the server went away names the host of $written as written, with what to check",
    async ({ written, variable, value }) => {
      const first = await startStreamableHttp();
      const url = new URL(first.url);
      ctx.home.write("config.yaml", `mcp_servers:\n  web:\n    url: "${written}"\n`);
      ctx.home.write(".env", `${variable}=${value(url)}\n`);
      const { config } = loadConfig({ home: ctx.home.dir, env: {} });
      const h = ctx.hub(ctx.home, { web: config.mcp_servers.web as McpServerEntry });
      expect((await h.settled("web")).state).toBe("connected");
      await first.close();
      const failure = await h.call("web", "echo", { text: "x" }).then(
        () => new Error("the call succeeded"),
        (err: Error) => err,
      );
      const host = `<the host of "${written}" (the value it gives is not shown)>`;
      const { port } = url;
      expect(failure.message).toBe(
        `mcp_servers.web: "echo" failed: fetch failed: connect ECONNREFUSED ${host}:${port} — nothing listens on port ${port} of ${host}: start the server, or check mcp_servers.web.url`,
      );
    },
  );
});

describe("a server whose url's host and port a variable gave, refusing the first tools/list", () => {
  // The server's own error quotes its address. From .env it was hidden (`upstream http://[redacted]/catalog`),
  // from the environment quoted as the variable gave it: the listing's failure came after the connect, which
  // names the url as written, and was said without it.
  it.each(["the environment", ".env"])("from %s: names the host as written", async (where) => {
    let address = "";
    const server = await serveStatelessJsonMcp(() => {
      const mcp = new McpServer({ name: "refusing", version: "1" });
      mcp.registerTool("echo", {}, () => ({ content: [] }));
      mcp.server.setRequestHandler(ListToolsRequestSchema, () => {
        throw new McpError(-32603, `upstream http://${address}/catalog refused the listing`);
      });
      return mcp;
    });
    try {
      const url = new URL(server.url);
      address = url.host;
      ctx.home.write("config.yaml", `mcp_servers:\n  web:\n    url: "http://$\{MCP_HOSTPORT}/mcp"\n`);
      ctx.home.write(".env", where === ".env" ? `MCP_HOSTPORT=${url.host}\n` : "");
      const env = where === ".env" ? {} : { MCP_HOSTPORT: url.host };
      const { config } = loadConfig({ home: ctx.home.dir, env });
      const h = ctx.hub(ctx.home, { web: config.mcp_servers.web as McpServerEntry }, { env });
      const host = `<the host of "http://$\{MCP_HOSTPORT}/mcp" (the value it gives is not shown)>`;
      expect((await h.settled("web")).lastError).toBe(
        `mcp_servers.web: tools/list failed: MCP error -32603: upstream http://${host}:${url.port}/catalog refused the listing`,
      );
    } finally {
      await server.close();
    }
  });
});
