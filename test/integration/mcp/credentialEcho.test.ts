import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { gatewayPerTest } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/**
 * A server refusing a request often quotes what it refused ("invalid token Bearer sk-..."), and the
 * connect error svc logs carries the server's answer. The token (from .env, rendered into the header)
 * must not reach the gateway log nor the CLI's error output.
 */
const TOKEN = "sk-live-0123456789abcdef";
const gw = gatewayPerTest();
let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe("an MCP server echoing the Authorization header it refused", () => {
  it("the gateway log shows the refusal with the credential [redacted]", async () => {
    api = await startFakeApi((r) => ({
      status: 401,
      json: { error: `invalid token ${String(r.headers.authorization)}` },
    }));
    const url = `${api.url}/mcp`;
    const g = await gw.start({
      config: {
        platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: {} } },
        mcp_servers: { m: { url, headers: { Authorization: `Bearer $\{MCP_TOKEN}` } } },
      },
      files: { ".env": `MCP_TOKEN=${TOKEN}\n` },
    });
    await vi.waitFor(
      () => {
        const refused = g.logs().find((l) => l.msg.startsWith("[mcp] mcp_servers.m:"));
        expect(refused?.msg).toContain("invalid token Bearer [redacted]");
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(api.requests.some((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(JSON.stringify(g.logs())).not.toContain(TOKEN);
  });

  it("svc mcp test prints the refusal with the credential [redacted]", async () => {
    api = await startFakeApi((r) => ({
      status: 401,
      json: { error: `invalid token ${String(r.headers.authorization)}` },
    }));
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        `mcp_servers:\n  m:\n    url: ${api.url}/mcp\n    headers: { Authorization: "Bearer \${MCP_TOKEN}" }\n`,
      );
      home.write(".env", `MCP_TOKEN=${TOKEN}\n`);
      const result = await svc(home, ["mcp", "test", "m"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("invalid token Bearer [redacted]");
      expect(result.stdout + result.stderr).not.toContain(TOKEN);
      expect(api.requests.some((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    } finally {
      home.cleanup();
    }
  });
});

describe("credentials other than Authorization, echoed back", () => {
  const KEY = "ak-9f8e7d6c5b4a3921";
  const secretOnly = (home: ReturnType<typeof tempHome>, config: string) => {
    home.write("config.yaml", config);
    home.write(".env", `MCP_KEY=${KEY}\n`);
  };

  it("an X-Api-Key value quoted in a 403 is [redacted] in svc mcp test", async () => {
    api = await startFakeApi((r) => ({
      status: 403,
      json: { error: `key ${String(r.headers["x-api-key"])} is not valid` },
    }));
    const home = tempHome();
    try {
      secretOnly(
        home,
        `mcp_servers:\n  m:\n    url: ${api.url}/mcp\n    headers: { X-Api-Key: "\${MCP_KEY}" }\n`,
      );
      const result = await svc(home, ["mcp", "test", "m"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("key [redacted] is not valid");
      expect(result.stdout + result.stderr).not.toContain(KEY);
      expect(api.requests.some((r) => r.headers["x-api-key"] === KEY)).toBe(true);
    } finally {
      home.cleanup();
    }
  });

  it("an Authorization: Key <key> written in config.yaml, the key alone quoted in a 401: [redacted] in svc mcp test", async () => {
    api = await startFakeApi((r) => {
      const sent = String(r.headers.authorization);
      return { status: 401, json: { error: `invalid api key '${sent.slice(sent.indexOf(" ") + 1)}'` } };
    });
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        `mcp_servers:\n  m:\n    url: ${api.url}/mcp\n    headers: { Authorization: "Key ${KEY}" }\n`,
      );
      const result = await svc(home, ["mcp", "test", "m"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("invalid api key '[redacted]'");
      expect(result.stdout + result.stderr).not.toContain(KEY);
      expect(api.requests.some((r) => r.headers.authorization === `Key ${KEY}`)).toBe(true);
    } finally {
      home.cleanup();
    }
  });

  it("an Authorization: Basic header, its password quoted in a 401: [redacted] in svc mcp test", async () => {
    const password = "basic-pw-4b5c6d7e8f";
    api = await startFakeApi((r) => {
      const sent = String(r.headers.authorization).replace(/^Basic /, "");
      const pass = Buffer.from(sent, "base64").toString().split(":")[1];
      return { status: 401, json: { error: `wrong password ${String(pass)}` } };
    });
    const home = tempHome();
    try {
      const basic = Buffer.from(`deploy-bot:${password}`).toString("base64");
      home.write(
        "config.yaml",
        `mcp_servers:\n  m:\n    url: ${api.url}/mcp\n    headers: { Authorization: "Basic \${MCP_BASIC}" }\n`,
      );
      home.write(".env", `MCP_BASIC=${basic}\n`);
      const result = await svc(home, ["mcp", "test", "m"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("wrong password [redacted]");
      expect(result.stdout + result.stderr).not.toContain(password);
    } finally {
      home.cleanup();
    }
  });

  it("a stdio server printing its API key on stderr before exiting: the key is [redacted], the rest shown", async () => {
    const home = tempHome();
    try {
      const script = 'process.stderr.write("bad key: " + process.env.API_KEY + "\\n"); process.exit(3)';
      secretOnly(
        home,
        `mcp_servers:\n  s:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", ${JSON.stringify(script)}]\n    env: { API_KEY: "\${MCP_KEY}" }\n`,
      );
      const result = await svc(home, ["mcp", "test", "s"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("bad key: [redacted]");
      expect(result.stdout + result.stderr).not.toContain(KEY);
    } finally {
      home.cleanup();
    }
  });

  it("an API key given as an argument (--api-key <key>, as Context7 takes it): [redacted] in svc mcp test's output", async () => {
    const home = tempHome();
    try {
      const script =
        'process.stderr.write("unknown option " + process.argv.slice(1).join(" ") + "\\n"); process.exit(3)';
      home.write(
        "config.yaml",
        `mcp_servers:\n  s:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", ${JSON.stringify(script)}, "--", "--api-key", "${KEY}"]\n`,
      );
      const result = await svc(home, ["mcp", "test", "s"]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain("--api-key [redacted])");
      expect(result.stderr).toContain("unknown option --api-key [redacted]");
      expect(result.stdout + result.stderr).not.toContain(KEY);
    } finally {
      home.cleanup();
    }
  });
});
