import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const ACCESS = "at-6f1c2e9b0d4a4b7e";

let home: TempHome;
let server: Server;
let hub: McpHub;
afterEach(async () => {
  await hub.stop();
  await new Promise((r) => server.close(r));
  home.cleanup();
});

it("an OAuth access token the MCP server quotes in an error body is redacted in lastError and the log", async () => {
  // A server failing every request and quoting the credential it was sent, without its Bearer prefix.
  server = createServer((req, res) => {
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `internal failure handling credential ${token}` }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  home = tempHome();
  const paths = svcPaths(home.dir);
  mkdirSync(paths.mcpTokens, { recursive: true });
  writeFileSync(
    join(paths.mcpTokens, "o.json"),
    JSON.stringify({ access_token: ACCESS, token_type: "Bearer", expires_at: Date.now() + 3_600_000 }),
  );
  writeFileSync(join(paths.mcpTokens, "o.client.json"), JSON.stringify({ client_id: "cid" }));
  const log = captureLogger();
  hub = new McpHub({
    servers: {
      o: mcpServerSchema.parse({ url, auth: "oauth", skip_preflight: true, oauth: { cimd: false } }),
    },
    cacheDir: join(home.dir, "mcp-cache"),
    scope: () => ({ secrets: {}, env: {} }),
    logger: log.logger,
    approvals: policyApprovals("deny", silentLogger()),
    oauthProviderFor: (name, entry, { interactive }) => oauthProviderFor(name, entry, { interactive, paths }),
  });
  hub.start();
  const status = await hub.settled("o");
  expect(status.state).toBe("failed");
  expect(status.lastError).toContain("internal failure handling credential [redacted]");
  expect(log.lines().join("\n")).toContain("credential [redacted]");
  expect(`${status.lastError}\n${log.lines().join("\n")}`).not.toContain(ACCESS);
});
