import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp reauth: a failed server's line", () => {
  it("shows the server's own text with its control characters escaped, as svc mcp login's error does", async () => {
    home = tempHome();
    // An authorization server whose metadata names another issuer, with an escape sequence in it.
    const server = createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.url === "/mcp") {
        res.writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        });
        res.end();
      } else if (req.url?.startsWith("/.well-known/oauth-protected-resource")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [`${base}/as`] }));
      } else if (req.url === "/.well-known/oauth-authorization-server/as") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            issuer: "https://evil.test/\u001b[2J\u001b[Hall good",
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            response_types_supported: ["code"],
            code_challenge_methods_supported: ["S256"],
          }),
        );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      home.write(
        "config.yaml",
        `mcp_servers:\n  o:\n    url: http://127.0.0.1:${port}/mcp\n    auth: oauth\n    oauth: {cimd: false}\n`,
      );
      const r = await runInProcess(["mcp", "reauth", "o"], {
        SVC_HOME: home.dir,
        PATH: process.env.PATH ?? "",
        BROWSER: "",
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^o: failed — o: no usable authorization server — /);
      expect(r.stdout).toContain('issuer "https://evil.test/\\u001b[2J\\u001b[Hall good"');
      expect(r.stdout).not.toContain("\u001b");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
