import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { unreadVariableWarnings } from "../../../src/config/profileEnv.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const reads =
  "(the webhook adapter reads WEBHOOK_ENABLED, WEBHOOK_PORT and WEBHOOK_SECRET; names are case-sensitive)";

/**
 * `WEBHOOK_PROT=9000` in .env set nothing the adapter reads: the gateway listened on 8644 (or had no global
 * secret, or stayed off) and neither the start nor svc config check said why.
 */
describe(".env names one or two letters from a WEBHOOK_* variable", () => {
  it("are named with the variable meant, unless config.yaml uses them as ${NAME}", () => {
    home = tempHome();
    const env = home.write(
      ".env",
      "WEBHOOK_PROT=9000\nwebhook_secret=abc\nWEBHOOK_SECRETS=x\nWEBHOOK_ENABLED=true\nGITHUB_TOKEN=y\n",
      0o600,
    );
    const config = home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    host: 127.0.0.1\n    routes:\n      a: {secret: '${WEBHOOK_SECRETS}'}\n",
    );
    expect(unreadVariableWarnings(env, config)).toEqual([
      `${env}: WEBHOOK_PROT is not a variable svc reads — did you mean WEBHOOK_PORT? ${reads}`,
      `${env}: webhook_secret is not a variable svc reads — did you mean WEBHOOK_SECRET? ${reads}`,
    ]);
  });

  it("are warned about by svc config check", async () => {
    home = tempHome();
    const env = home.write(".env", "WEBHOOK_ENABLE=true\n", 0o600);
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toContain(
      `${env}: WEBHOOK_ENABLE is not a variable svc reads — did you mean WEBHOOK_ENABLED? ${reads}`,
    );
  });
});

/**
 * `WEBHOOK_HOST=0.0.0.0` (as other gateways and a docker `-e` take the bind address) was named as a typo of
 * WEBHOOK_PORT in .env, and ignored in silence in the environment: the adapter stayed on its configured host.
 */
describe("WEBHOOK_<setting> for a platforms.webhook setting no variable sets", () => {
  const only =
    "(the webhook adapter reads only WEBHOOK_ENABLED, WEBHOOK_PORT and WEBHOOK_SECRET from .env and the environment)";

  it("is named with the key to write in config.yaml, from .env and from the environment", async () => {
    home = tempHome();
    const env = home.write(".env", "WEBHOOK_HOST=0.0.0.0\nwebhook_rate_limit=100\n", 0o600);
    const config = `${home.dir}/config.yaml`;
    const { warnings } = await checkConfig({ home: home.dir, env: { WEBHOOK_MAX_BODY_BYTES: "10" } });
    expect(warnings).toEqual(
      expect.arrayContaining([
        `${env}: WEBHOOK_HOST is not a variable svc reads — the bind address is platforms.webhook.host in ${config}: write host: \${WEBHOOK_HOST} there to take it from this variable (or give --host to svc gateway run or start) ${only}`,
        `${env}: webhook_rate_limit is not a variable svc reads — set platforms.webhook.rate_limit in ${config} ${only}`,
        `environment variable WEBHOOK_MAX_BODY_BYTES is not a variable svc reads — set platforms.webhook.max_body_bytes in ${config} ${only}`,
      ]),
    );
    expect(warnings.join("\n")).not.toContain("did you mean WEBHOOK_PORT");
  });

  it("is not named once config.yaml takes it as a ${NAME}", () => {
    home = tempHome();
    const env = home.write(".env", "WEBHOOK_HOST=127.0.0.1\n", 0o600);
    const config = home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: ${WEBHOOK_HOST}\n",
    );
    expect(unreadVariableWarnings(env, config, { WEBHOOK_HOST: "127.0.0.1" })).toEqual([]);
  });
});

/**
 * `SVC_LOG_LEVEL=debug` (or `SVC_HOME`) in .env was ignored in silence: svc reads both from the environment
 * alone, before it reads .env (the log level is set, and .env found, by then).
 */
describe(".env names svc reads from the environment only", () => {
  it("are named with where to set them, unless config.yaml uses them as ${NAME}", async () => {
    home = tempHome();
    const env = home.write(".env", "SVC_LOG_LEVEL=debug\nSVC_HOME=/srv/svc\n", 0o600);
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toEqual(
      expect.arrayContaining([
        `${env}: SVC_LOG_LEVEL is not read from .env — svc reads it from the environment only, before .env: set it where svc is started (SVC_LOG_LEVEL=debug svc gateway run, or the environment of its service)`,
        `${env}: SVC_HOME is not read from .env — svc reads it from the environment only, before .env: set it where svc is started (SVC_HOME=/srv/svc svc gateway run, or the environment of its service)`,
      ]),
    );
    const config = home.write("config.yaml", "agent:\n  system_prompt: 'level ${SVC_LOG_LEVEL}'\n");
    expect(unreadVariableWarnings(env, config, {}).join("\n")).not.toContain("SVC_LOG_LEVEL");
  });
});

/** A `profiles/default/` directory (scripts or a .env put there for the default profile) was ignored in silence. */
describe("profiles/default/", () => {
  it("is named as not read: the default profile's directory is SVC_HOME itself", async () => {
    home = tempHome();
    home.write("profiles/default/scripts/x.sh", "echo '{}'\n");
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toContain(
      `${home.dir}/profiles/default is not read: the default profile's directory is ${home.dir} itself (its scripts/, skills/, cron/, mcp-tokens/, .env) — move what it holds there`,
    );
  });
});
