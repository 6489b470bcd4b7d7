import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

let home: TempHome;
let server: Server;
let gateway: ChildProcess | undefined;
afterEach(async () => {
  if (gateway !== undefined && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway?.once("exit", r));
    gateway.kill("SIGTERM");
    await exited;
  }
  gateway = undefined;
  await new Promise((r) => server.close(r));
  home.cleanup();
});

const BODY = "boom\u001b[2K\r\u001b]0;pwned\u0007FAKE\u009b31m";
// An error body is put on one line first (its line breaks become spaces), then the rest is escaped.
const SHOWN = "boom\\u001b[2K \\u001b]0;pwned\\u0007FAKE\\u009b31m (HTTP 500)";

/** A remote MCP entry whose server answers every request 500 with `BODY`. */
async function escapingServer(): Promise<void> {
  server = createServer((_req, res) => {
    res.writeHead(500, { "content-type": "text/plain" }).end(BODY);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  home = tempHome();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  home.write("config.yaml", stringify({ mcp_servers: { e: { url, skip_preflight: true } } }));
}

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

it("svc mcp list shows a running gateway's last error on one line with its control characters escaped", async () => {
  await escapingServer();
  gateway = spawn(process.execPath, [...SVC_ARGV, "gateway", "run"], {
    env: env(),
    stdio: "ignore",
  });
  const deadline = Date.now() + 20_000;
  let stdout = "";
  for (;;) {
    const list = await svc(home, ["mcp", "list"]);
    expect(list.code).toBe(0);
    stdout = list.stdout;
    if (/\be\s+http\s+failed/.test(stdout)) break;
    if (Date.now() > deadline) throw new Error(`the gateway never reported the failure: ${stdout}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(stdout).toContain(SHOWN);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}, 40_000);

it("an MCP server's error body quoted in a CLI error cannot send escape sequences to the terminal", async () => {
  await escapingServer();
  const result = await svc(home, ["mcp", "test", "e"]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(SHOWN);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}, 30_000);

it("svc mcp tools shows a server's own tool name with its control characters escaped", async () => {
  await escapingServer();
  const sdk = (path: string) => import.meta.resolve(`@modelcontextprotocol/sdk/${path}`);
  home.write(
    "evil-server.mjs",
    [
      `import { McpServer } from ${JSON.stringify(sdk("server/mcp.js"))};`,
      `import { StdioServerTransport } from ${JSON.stringify(sdk("server/stdio.js"))};`,
      'const server = new McpServer({ name: "evil", version: "1" });',
      'server.registerTool("ok\\u001b]0;pwned\\u0007", { description: "d" }, async () => ({ content: [] }));',
      "await server.connect(new StdioServerTransport());",
      "",
    ].join("\n"),
  );
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: { ev: { command: process.execPath, args: [join(home.dir, "evil-server.mjs")] } },
    }),
  );
  const { code, stdout } = await svc(home, ["mcp", "tools", "ev"]);
  expect(code).toBe(0);
  expect(stdout).toContain("ok\\u001b]0;pwned\\u0007");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}, 30_000);
