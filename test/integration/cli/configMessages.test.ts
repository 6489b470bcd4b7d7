import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const webhook = (settings: Record<string, unknown>) =>
  stringify({ platforms: { webhook: { enabled: true, port: 0, ...settings } } });

describe("svc gateway run refuses a bad configuration with file, key and fix", { timeout: 90_000 }, () => {
  it("a route name that cannot be a URL path segment says what a valid name is", async () => {
    home = tempHome();
    home.write("config.yaml", webhook({ host: "127.0.0.1", routes: { "git hub": { secret: "s" } } }));
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `${join(home.dir, "config.yaml")}: platforms.webhook.routes.git hub: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)`,
    );
    expect(res.stderr).not.toContain("Invalid key in record");
    // Like every other command's errors (docs/cli.md): prefixed svc:.
    expect(res.stderr.startsWith(`svc: ${join(home.dir, "config.yaml")}: `)).toBe(true);
  });

  it("INSECURE_NO_AUTH as the global secret off loopback names platforms.webhook.secret / WEBHOOK_SECRET, not the route's key", async () => {
    home = tempHome();
    home.write("config.yaml", webhook({ host: "0.0.0.0", routes: { open: {} } }));
    home.write(".env", "WEBHOOK_SECRET=INSECURE_NO_AUTH\n");
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "platforms.webhook.secret (global secret or WEBHOOK_SECRET, used by route open and every subscription without a secret of its own): INSECURE_NO_AUTH is only allowed on a loopback bind",
    );
    expect(res.stderr).toContain("set a real secret or bind to 127.0.0.1");
    expect(res.stderr).not.toContain("routes.open.secret");
  });

  it("INSECURE_NO_AUTH as the global secret off loopback is refused also when every static route has its own secret: subscriptions fall back to it", async () => {
    home = tempHome();
    home.write("config.yaml", webhook({ host: "0.0.0.0", routes: { signed: { secret: "s" } } }));
    home.write(".env", "WEBHOOK_SECRET=INSECURE_NO_AUTH\n");
    home.write("webhook_subscriptions.json", JSON.stringify({ nosec: { prompt: "p", enabled: true } }));
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "platforms.webhook.secret (global secret or WEBHOOK_SECRET, used by every subscription without a secret of its own): INSECURE_NO_AUTH is only allowed on a loopback bind",
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
  it("a secret whose ${VAR} is not set is refused (its literal text would be the HMAC key)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      webhook({
        host: "127.0.0.1",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
        secret: "${env:GLOBAL_HOOK_SECRET}",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
        routes: { github: { secret: "${GITHUB_WEBHOOK_SECRET}" }, other: {} },
      }),
    );
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    const config = join(home.dir, "config.yaml");
    const env = join(home.dir, ".env");
    expect(res.stderr).toContain(
      `${config}: platforms.webhook.routes.github.secret: \${GITHUB_WEBHOOK_SECRET} is not set — set GITHUB_WEBHOOK_SECRET in ${env} or the environment`,
    );
    expect(res.stderr).toContain(
      `${config}: platforms.webhook.secret: \${GLOBAL_HOOK_SECRET} is not set — set GLOBAL_HOOK_SECRET in ${env} or the environment`,
    );
    expect(res.stdout).not.toContain("Listening");
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
  it("a global secret whose ${VAR} is not set is refused also when every static route has its own: subscriptions fall back to it", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      webhook({
        host: "127.0.0.1",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
        secret: "${GLOBAL_HOOK_SECRET_UNSET}",
        routes: { own: { secret: "route-own-secret-value" } },
      }),
    );
    home.write("webhook_subscriptions.json", JSON.stringify({ nosecret: { prompt: "p", enabled: true } }));
    const config = join(home.dir, "config.yaml");
    const expected = `${config}: platforms.webhook.secret: \${GLOBAL_HOOK_SECRET_UNSET} is not set — set GLOBAL_HOOK_SECRET_UNSET in ${join(home.dir, ".env")} or the environment`;
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(expected);
    expect(check.code).toBe(1);
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(expected);
    expect(res.stdout).not.toContain("Listening");
  });

  it("an unset global secret is not refused with the webhook adapter off when no route uses it", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: false,
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
            secret: "${GLOBAL_HOOK_SECRET_UNSET}",
          },
        },
        mcp_servers: { quiet: { command: "true" } },
      }),
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).not.toContain("GLOBAL_HOOK_SECRET_UNSET");
    expect(check.code).toBe(0);
  });

  it("a problem with a key written under platforms.webhook.extra is reported there, not at the merged key", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      webhook({
        host: "127.0.0.1",
        prot: 1,
        extra: { port: "9000", colour: "blue", routes: { a: { secret: 5 } } },
      }),
    );
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    const config = join(home.dir, "config.yaml");
    expect(res.stderr).toContain(`${config}: platforms.webhook.extra.port: expected a number, got "9000"`);
    expect(res.stderr).toContain(
      `${config}: platforms.webhook.extra.routes.a.secret: expected a string, got a number (not shown: the key holds a secret)`,
    );
    expect(res.stderr).toContain(`${config}: platforms.webhook.extra: unknown key "colour"`);
    expect(res.stderr).toContain(`${config}: platforms.webhook: unknown key "prot"`);
  });

  it("a secret YAML reads as a number says to quote it, without showing the secret", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          telegram: { enabled: true, token: 7700112233 },
          sms: { enabled: true, account_sid: "AC1", auth_token: 4455667788, from: "+1" },
          webhook: { enabled: true, port: 0, host: "127.0.0.1", routes: { a: { secret: 31415926535 } } },
        },
      }),
    );
    const res = await svc(home, ["gateway", "run"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "platforms.webhook.routes.a.secret: expected a string, got a number (not shown: the key holds a secret) — put it in quotes if it is meant as text",
    );
    expect(res.stderr).toContain("platforms.telegram.token: expected a string, got a number (not shown");
    expect(res.stderr).toContain("platforms.sms.auth_token: expected a string, got a number (not shown");
    for (const secret of ["31415926535", "7700112233", "4455667788"])
      expect(res.stderr).not.toContain(secret);
  });
});

describe("files that cannot be read are named", { timeout: 90_000 }, () => {
  it(".env and gateway.pid (here directories: EISDIR, which root cannot chmod away)", async () => {
    home = tempHome();
    const other = tempHome();
    try {
      mkdirSync(join(home.dir, ".env"));
      mkdirSync(join(other.dir, "gateway.pid"));
      const env = await svc(home, ["webhook", "list"]);
      const pid = await svc(other, ["gateway", "status"]);
      expect(env.code).toBe(1);
      expect(env.stderr).toMatch(new RegExp(`^svc: ${join(home.dir, ".env")}: cannot be read \\(EISDIR`));
      expect(pid.code).toBe(1);
      expect(pid.stderr).toMatch(
        new RegExp(
          `^svc: ${join(other.dir, "gateway.pid")}: cannot be read \\(EISDIR.*remove it if no gateway is running`,
        ),
      );
    } finally {
      other.cleanup();
    }
  });

  it("a config.yaml that is a directory, at svc gateway setup: named with what to do, before any question", async () => {
    home = tempHome();
    mkdirSync(join(home.dir, "config.yaml"));
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--generate-secret"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      new RegExp(
        `^svc: ${join(home.dir, "config.yaml")}: cannot be read \\(EISDIR.*\\) — it is a directory: move it away and write the file in its place`,
      ),
    );
  });
});
