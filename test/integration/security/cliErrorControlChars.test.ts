import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";

const MAIN = join(import.meta.dirname, "../../../src/cli/main.ts");

let home: TempHome;
let server: Server;
afterEach(async () => {
  await new Promise((r) => server.close(r));
  home.cleanup();
});

it("an MCP server's error body quoted in a CLI error cannot send escape sequences to the terminal", async () => {
  // Erases the line, retitles the window (OSC ... BEL), then a C1 CSI.
  server = createServer((_req, res) => {
    res
      .writeHead(500, { "content-type": "text/plain" })
      .end("boom\u001b[2K\r\u001b]0;pwned\u0007FAKE\u009b31m");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  home = tempHome();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  home.write("config.yaml", stringify({ mcp_servers: { e: { url, skip_preflight: true } } }));
  const result = await promisify(execFile)(process.execPath, ["--import", "tsx", MAIN, "mcp", "test", "e"], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
  }).catch((err: { stdout: string; stderr: string; code: number }) => err);
  expect((result as { code?: number }).code).toBe(1);
  expect(result.stderr).toContain("boom\\u001b[2K\\u000d\\u001b]0;pwned\\u0007FAKE\\u009b31m (HTTP 500)");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}, 30_000);
