import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * docs/webhook-auth.md: a webhook secret written as a shell's `$NAME` is judged on the text that wrote it,
 * never on a value a variable gave: config.yaml's own text (`secret: ${GS}` with `.env`'s `GS='$Abc…'` is
 * no such form, as svc advises writing a secret with a `$`), or, when WEBHOOK_SECRET gave the global secret,
 * that variable's as the environment or `.env` wrote it, named as that variable.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const BARE = "a $ followed by a name";
const DOLLAR_SECRET = "$Abcdefghijklmnopqrstu";

const warningsOf = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("Warning: "));

function homeWith(config: Record<string, unknown>, env?: string): TempHome {
  const made = tempHome();
  made.write("config.yaml", stringify(config), 0o600);
  if (env !== undefined) made.write(".env", env, 0o600);
  return made;
}

describe("svc config check: a secret written $NAME, judged as written", { timeout: 60_000 }, () => {
  it("a global and a route secret that config.yaml writes ${NAME}, whose .env value starts with $, are not named", async () => {
    home = homeWith(
      webhookConfig({ gh: { secret: "route-own-secret-123" }, pr: { secret: "${PR}" } }, { secret: "${GS}" }),
      `GS='${DOLLAR_SECRET}'\nPR='$PrSecretValue'\n`,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain(BARE);
    expect(warningsOf(result.stderr)).toEqual([]);
  });

  it("config.yaml's own $NAME is still named, for the global secret and a route's", async () => {
    home = homeWith(
      webhookConfig(
        { gh: { secret: "route-own-secret-123" }, pr: { secret: "$PR_SECRET" } },
        { secret: "$GS" },
      ),
      `GS='${DOLLAR_SECRET}'\nOTHER='$x'\n`,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(warningsOf(result.stderr)).toEqual([
      `Warning: ${home.dir}/config.yaml: platforms.webhook.routes.pr.secret is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only $\{NAME} (with braces): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as $\{NAME}, in quotes (secret: "$\{NAME}")`,
      expect.stringContaining(
        `Warning: ${home.dir}/config.yaml: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; every subscription without a secret of its own uses it) is a $ followed by a name`,
      ),
    ]);
  });

  it("WEBHOOK_SECRET in 'single quotes' in .env is taken as written: not named; written $NAME unquoted, named as that variable", async () => {
    const config = webhookConfig({ gh: { secret: "route-own-secret-123" } });
    home = homeWith(config, `WEBHOOK_SECRET='${DOLLAR_SECRET}'\n`);
    const quoted = await svc(home, ["config", "check"]);
    expect(quoted.code).toBe(0);
    expect(quoted.stderr).not.toContain(BARE);
    home.cleanup();

    home = homeWith(config, "WEBHOOK_SECRET=$GLOBAL_SEC\n");
    const unquoted = await svc(home, ["config", "check"]);
    expect(unquoted.code).toBe(0);
    expect(warningsOf(unquoted.stderr)).toEqual([
      `Warning: ${home.dir}/.env: WEBHOOK_SECRET (the global secret; every subscription without a secret of its own uses it) is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only $\{NAME} (with braces) in .env: the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as $\{NAME} (NAME set on a line above it, or in the environment), or in 'single quotes' if this text is the secret itself`,
    ]);
    expect(unquoted.stderr).not.toContain("platforms.webhook.secret");
    expect(unquoted.stderr).not.toContain("GLOBAL_SEC");
    home.cleanup();

    // Its line writes ${GS}: the value GS gave is text, as in config.yaml.
    home = homeWith(config, `GS='${DOLLAR_SECRET}'\nWEBHOOK_SECRET=\${GS}\n`);
    const substituted = await svc(home, ["config", "check"]);
    expect(substituted.code).toBe(0);
    expect(substituted.stderr).not.toContain(BARE);
  });

  it("a global and a route secret that config.yaml writes ${NAME}, whose .env line writes $NAME unquoted (the secret is that text), are named as that variable", async () => {
    home = homeWith(
      webhookConfig(
        {
          gh: { secret: "route-own-secret-123" },
          pr: { secret: "${RS}" },
          qa: { secret: "${QS:-fallback-secret-1}" },
        },
        { secret: "${GS}" },
      ),
      `GS=$Abcdefghijklmnopqrstu\nRS="$RouteSecretValue"\nQS=$QaSecretValue\n`,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const inEnvFile = (variable: string, what: string) =>
      `Warning: ${home?.dir}/.env: ${variable} (${what}) is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only $\{NAME} (with braces) in .env: the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as $\{NAME} (NAME set on a line above it, or in the environment), or in 'single quotes' if this text is the secret itself`;
    expect(warningsOf(result.stderr)).toEqual([
      inEnvFile("RS", "substituted by platforms.webhook.routes.pr.secret; route pr uses it"),
      inEnvFile("QS", "substituted by platforms.webhook.routes.qa.secret; route qa uses it"),
      inEnvFile(
        "GS",
        "substituted by platforms.webhook.secret, the global secret; every subscription without a secret of its own uses it",
      ),
    ]);
    expect(result.stderr).not.toContain("Abcdefghijklmnopqrstu");
    expect(result.stderr).not.toContain("RouteSecretValue");
  });

  it("a secret that config.yaml writes ${NAME}, NAME set in the environment as $NAME, is named as that variable", async () => {
    home = homeWith(webhookConfig({ gh: {}, pr: { secret: "${RS}" } }, { secret: "${GS}" }));
    const result = await svc(home, ["config", "check"], {
      env: { GS: DOLLAR_SECRET, RS: "$RouteSecretValue" },
    });
    expect(result.code).toBe(0);
    const inEnvironment = (variable: string, what: string) =>
      `Warning: environment variable ${variable} (${what}) is a $ followed by a name, as a shell or docker compose writes a variable, but nothing replaced it (the tool that started svc passed it as written, as systemd's Environment= does): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — give ${variable} the secret itself`;
    expect(warningsOf(result.stderr)).toEqual([
      inEnvironment("GS", "substituted by platforms.webhook.secret, the global secret; route gh uses it"),
      inEnvironment("RS", "substituted by platforms.webhook.routes.pr.secret; route pr uses it"),
    ]);
    expect(result.stderr).not.toContain("Abcdefghijklmnopqrstu");
  });

  it("WEBHOOK_SECRET in the environment, which nothing renders, is named as that variable, not a config.yaml key", async () => {
    // config.yaml writes no platforms.webhook.secret; a route falls back to the global secret.
    home = homeWith(webhookConfig({ gh: {} }));
    const result = await svc(home, ["config", "check"], { env: { WEBHOOK_SECRET: DOLLAR_SECRET } });
    expect(result.code).toBe(0);
    expect(warningsOf(result.stderr)).toEqual([
      "Warning: environment variable WEBHOOK_SECRET (the global secret; route gh uses it) is a $ followed by a name, as a shell or docker compose writes a variable, but nothing replaced it (the tool that started svc passed it as written, as systemd's Environment= does): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — give WEBHOOK_SECRET the secret itself",
    ]);
    expect(result.stderr).not.toContain("platforms.webhook.secret");
    expect(result.stderr).not.toContain("Abcdefghijklmnopqrstu");
  });
});
