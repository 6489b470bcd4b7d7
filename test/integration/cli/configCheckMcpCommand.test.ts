import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const config = (mcpServers: Record<string, unknown>) =>
  stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } }, mcp_servers: mcpServers });

describe("svc config check: a stdio MCP server whose command cannot be started here", () => {
  it("warns for a name on no PATH directory and a path to nothing; the check still passes", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      config({
        typo: { command: "npxx", args: ["-y", "pkg"] },
        gone: { command: "/opt/nowhere/server" },
        node: { command: process.execPath, args: ["server.js"] },
        off: { command: "npxx", enabled: false },
      }),
    );
    const file = join(home.dir, "config.yaml");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.typo.command: "npxx" was not found on PATH — the gateway starts, but every connect of this server fails: check command (and PATH)\n`,
    );
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.gone.command: "/opt/nowhere/server" does not exist — the gateway starts`,
    );
    expect(res.stderr).not.toContain("mcp_servers.node.");
    expect(res.stderr).not.toContain("mcp_servers.off.");
  });

  it("never quotes what a ${VAR} of the entry takes from .env (a secret, as svc mcp test hides it)", async () => {
    home = tempHome();
    home.write("config.yaml", config({ bin: { command: "${SERVER_DIR}/server" } }));
    home.write(".env", "SERVER_DIR=/opt/hk-secret-7731\n", 0o600);
    const file = join(home.dir, "config.yaml");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.bin.command: "$\{SERVER_DIR}/server" (the value it gives is not shown) does not exist — the gateway starts`,
    );
    expect(res.stderr).not.toContain("hk-secret-7731");
  });

  it("names a command or TLS file a variable of the environment gave (no credential name) as config.yaml writes it", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      config({
        cm: { command: `/opt/$\{SRV_DIR}/server` },
        one: { command: `$\{SRV_BIN}` },
        tls: { url: "https://127.0.0.1:1/mcp", client_cert: `/nonexist/$\{CERT_NAME}.pem` },
      }),
    );
    const file = join(home.dir, "config.yaml");
    const env = { SRV_DIR: "SECRETV-DIR", SRV_BIN: "SECRETV-13", CERT_NAME: "SECRETV-CERT" };
    const res = await svc(home, ["config", "check"], { env });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.cm.command: "/opt/$\{SRV_DIR}/server" (the value it gives is not shown) does not exist — the gateway starts`,
    );
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.one.command: "$\{SRV_BIN}" (the value it gives is not shown) was not found on PATH — the gateway starts`,
    );
    expect(res.stderr).toContain(
      `Warning: ${file}: mcp_servers.tls: client_cert file not found: "/nonexist/$\{CERT_NAME}.pem" (the value it gives is not shown) — the gateway starts`,
    );
    expect(res.stdout + res.stderr).not.toContain("SECRETV");
  });

  it("a whole command line as command is named as one, never quoting its words (one may be a key)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      config({
        ctx: { command: "npx -y ctx7 --api-key ctx-key-91" },
        up: { command: "npx -y @upstash/context7-mcp --api-key ctx-key-92" },
      }),
    );
    const file = join(home.dir, "config.yaml");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(0);
    for (const name of ["ctx", "up"])
      expect(res.stderr).toContain(
        `Warning: ${file}: mcp_servers.${name}.command: is a whole command line ("npx" and 4 more words), which is started as one program name, not split into words — the gateway starts, but every connect of this server fails: write the program alone as command and each other word as an item of args\n`,
      );
    expect(res.stderr).not.toMatch(/ctx-key-9/);
  });

  it("looks the name up in the entry's own env.PATH, which its process gets instead of the gateway's", async () => {
    home = tempHome();
    const empty = mkdtempSync(join(tmpdir(), "svc-empty-path-"));
    try {
      home.write("config.yaml", config({ fs: { command: "node", env: { PATH: empty } } }));
      const res = await svc(home, ["config", "check"]);
      expect(res.stderr).toContain(
        `mcp_servers.fs.command: "node" was not found on PATH — the gateway starts, but every connect of this server fails: check command (and the entry's env.PATH, which replaces the gateway's PATH for its process)`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("leaves a relative path and an unset variable to the connect, which names them", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      config({ rel: { command: "./bin/server.sh" }, v: { command: "${SERVER_BIN_UNSET}" } }),
    );
    const res = await svc(home, ["config", "check"]);
    expect(res.stderr).not.toContain("mcp_servers.rel.command");
    expect(res.stderr).not.toContain("mcp_servers.v.command");
  });
});
