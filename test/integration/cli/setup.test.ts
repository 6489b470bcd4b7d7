import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const CONFIG = `# my gateway
agent:
  provider: echo # the default
platforms:
  webhook:
    enabled: false   # off for now
    host: 127.0.0.1
    port: 9000
    routes:
      github:
        secret: \${GH_SECRET}  # from .env
        prompt: "PR {number}"
`;

describe("svc gateway setup", { timeout: 90_000 }, () => {
  it("non-interactive: writes WEBHOOK_* to .env (0600) keeping other lines, mirrors enabled/port into config.yaml keeping comments", async () => {
    home = tempHome();
    home.write(".env", "# secrets\nGH_SECRET=abc\nexport WEBHOOK_PORT=1\n");
    home.write("config.yaml", CONFIG);
    const res = await svc(home, [
      "gateway",
      "setup",
      "--non-interactive",
      "--enable",
      "--port",
      "9100",
      "--generate-secret",
    ]);
    expect(res.code).toBe(0);
    const secret = /Global webhook secret: ([0-9a-f]{64})/.exec(res.stdout)?.[1];
    expect(secret).toBeDefined();
    const env = readFileSync(join(home.dir, ".env"), "utf8");
    expect(env).toBe(
      `# secrets\nGH_SECRET=abc\nexport WEBHOOK_PORT=9100\nWEBHOOK_ENABLED=true\nWEBHOOK_SECRET=${secret}\n`,
    );
    expect(statSync(join(home.dir, ".env")).mode & 0o777).toBe(0o600);
    const yaml = readFileSync(join(home.dir, "config.yaml"), "utf8");
    expect(yaml).toContain("# my gateway");
    expect(yaml).toContain("provider: echo # the default");
    expect(yaml).toMatch(/enabled: true\s+# off for now/);
    expect(yaml).toContain("port: 9100");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
    expect(yaml).toContain("secret: ${GH_SECRET}  # from .env");
    expect(yaml).not.toContain(secret as string);
    const loaded = loadConfig({ home: home.dir, env: {} });
    expect(loaded.config.platforms.webhook).toMatchObject({ enabled: true, port: 9100, secret });
    expect(loaded.config.platforms.webhook.routes.github?.secret).toBe("abc");
  });

  it("keeps the current secret unless asked to generate or given one; --disable turns the adapter off", async () => {
    home = tempHome();
    home.write(".env", "WEBHOOK_SECRET=keep-me\n");
    await svc(home, ["gateway", "setup", "--non-interactive", "--disable"]);
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toBe(
      "WEBHOOK_SECRET=keep-me\nWEBHOOK_ENABLED=false\nWEBHOOK_PORT=8644\n",
    );
    await svc(home, ["gateway", "setup", "--non-interactive", "--secret", "mine with spaces"]);
    expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.secret).toBe("mine with spaces");
  });

  it("the port and global secret of config.yaml are the current values: kept, not replaced by 8644 and a new secret", async () => {
    home = tempHome();
    const asking = tempHome();
    const yaml =
      "platforms:\n  webhook:\n    enabled: false\n    port: 9000\n    secret: senders-know-this\n";
    home.write("config.yaml", yaml);
    asking.write("config.yaml", yaml);
    try {
      const [flags, asked] = await Promise.all([
        svc(home, ["gateway", "setup", "--non-interactive", "--enable"]),
        svc(asking, ["gateway", "setup"], { input: "\n\n\n" }),
      ]);
      expect(flags.code).toBe(0);
      expect(flags.stdout).not.toContain("Global webhook secret");
      expect(readFileSync(join(home.dir, ".env"), "utf8")).toBe("WEBHOOK_ENABLED=true\nWEBHOOK_PORT=9000\n");
      expect(asked.stdout).toContain("Port [9000]:");
      expect(asked.stdout).toContain("[k]eep the current one");
      for (const dir of [home.dir, asking.dir])
        expect(loadConfig({ home: dir, env: {} }).config.platforms.webhook).toMatchObject({
          enabled: true,
          port: 9000,
          secret: "senders-know-this",
        });
    } finally {
      asking.cleanup();
    }
  });

  it("the global secret of a config.yaml the gateway refuses (a bad WEBHOOK_PORT, a misspelt key) is kept, not overridden by a new one", async () => {
    home = tempHome();
    const misspelt = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: false\n    port: 9000\n    secret: senders-know-this\n",
    );
    home.write(".env", "WEBHOOK_PORT=abc\n");
    misspelt.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    secret: senders-know-this\n    routes:\n      a: {evnts: [push]}\n",
    );
    try {
      // One after another, so both run in this worker (at once, one was a process of its own).
      const badPort = await svc(home, ["gateway", "setup", "--non-interactive"]);
      const badKey = await svc(misspelt, ["gateway", "setup", "--non-interactive"]);
      for (const res of [badPort, badKey]) {
        expect(res.code).toBe(0);
        expect(res.stdout).not.toContain("Global webhook secret");
      }
      expect(readFileSync(join(home.dir, ".env"), "utf8")).toBe("WEBHOOK_PORT=9000\nWEBHOOK_ENABLED=true\n");
      expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.secret).toBe(
        "senders-know-this",
      );
      expect(readFileSync(join(misspelt.dir, ".env"), "utf8")).not.toContain("WEBHOOK_SECRET");
    } finally {
      misspelt.cleanup();
    }
  });

  it("a port 0 of config.yaml (a free port at each start) is kept by a setup that leaves the port alone, not replaced by 8644", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 0\n",
    );
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--generate-secret"]);
    expect(res.code).toBe(0);
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toMatch(/^WEBHOOK_ENABLED=true\nWEBHOOK_PORT=0\n/);
    expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.port).toBe(0);
  });

  it("an empty section (`webhook:` alone) is filled in; a section that is not a mapping is named and nothing is written", async () => {
    home = tempHome();
    const broken = tempHome();
    home.write("config.yaml", "# top\nplatforms:\n  webhook:  # the receiver\nagent:\n  provider: echo\n");
    broken.write("config.yaml", "platforms:\n  webhook: 5\n");
    try {
      const filled = await svc(home, ["gateway", "setup", "--non-interactive", "--port", "9001"]);
      const refused = await svc(broken, ["gateway", "setup", "--non-interactive"]);
      expect(filled.code).toBe(0);
      expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(
        "# top\nplatforms:\n  webhook:\n    # the receiver\n    enabled: true\n    port: 9001\nagent:\n  provider: echo\n",
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `svc: ${join(broken.dir, "config.yaml")}: platforms.webhook: expected a mapping, got 5 — fix it before running setup\n`,
      );
      // No .env with a generated secret that was never shown.
      expect(existsSync(join(broken.dir, ".env"))).toBe(false);
    } finally {
      broken.cleanup();
    }
  });

  it("a --port out of range is refused as a usage error (exit 2) also beside a config.yaml setup cannot edit", async () => {
    home = tempHome();
    home.write("config.yaml", "platforms:\n  webhook: 5\n");
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--port", "70000"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('svc: --port: expected a port number (1-65535), got "70000"\n');
  });

  it("with a platforms.webhook.extra mapping (whose keys win) the values go there, and the message names that key", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: false\n    port: 9000\n    extra:\n      host: 127.0.0.1\n",
    );
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--port", "9002"]);
    expect(res.code).toBe(0);
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(
      "platforms:\n  webhook:\n    enabled: false\n    port: 9000\n    extra:\n      host: 127.0.0.1\n      enabled: true\n      port: 9002\n",
    );
    expect(res.stdout).toContain(
      `Updated platforms.webhook.extra.enabled and port in ${join(home.dir, "config.yaml")} (other settings and comments kept)`,
    );
  });

  it("--disable that leaves the gateway nothing to run (no config.yaml, no MCP server, no cron job) says it will not start, as svc gateway run would", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--disable"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      `Note: the gateway will not start until this is fixed:\n${join(home.dir, ".env")}: WEBHOOK_ENABLED is false — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run.`,
    );
    expect(res.stdout).not.toContain("The webhook adapter is disabled.");
    // With an MCP server the gateway runs for it alone: disabling the adapter is then no problem.
    home.write("config.yaml", "mcp_servers:\n  a:\n    command: node\n");
    const mcpOnly = await svc(home, ["gateway", "setup", "--non-interactive", "--disable"]);
    expect(mcpOnly.stdout).not.toContain("will not start");
    expect(mcpOnly.stdout).toContain("The webhook adapter is disabled.");
  });

  it("interactive: answers on stdin (defaults: enable, port, generate a secret)", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup"], { input: "\n9200\n\n" });
    expect(res.code).toBe(0);
    // Piped answers are not echoed: each prompt ends its own line, the result starts a new one.
    expect(res.stdout).toMatch(
      /^Enable the webhook adapter\? \[Y\/n\] \nPort \[8644\]: \nGlobal secret: .*\? \[g\] \nWrote /,
    );
    const env = readFileSync(join(home.dir, ".env"), "utf8");
    expect(env).toMatch(/^WEBHOOK_ENABLED=true\nWEBHOOK_PORT=9200\nWEBHOOK_SECRET=[0-9a-f]{64}\n$/);
  });

  it("interactive: a wrong port or an empty entered secret is explained and asked again", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup"], { input: "y\nabc\n70000\n9300\ne\n\nmine\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('port: expected a port number (1-65535), got "abc"\nPort [8644]: ');
    expect(res.stdout).toContain('got "70000"\nPort [8644]: ');
    expect(res.stdout).toContain("the secret cannot be empty\nSecret: ");
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toBe(
      "WEBHOOK_ENABLED=true\nWEBHOOK_PORT=9300\nWEBHOOK_SECRET=mine\n",
    );
  });
});
