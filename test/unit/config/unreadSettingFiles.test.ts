import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { webhookVariableTypos } from "../../../src/config/profileEnv.js";
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
    expect(webhookVariableTypos(env, config)).toEqual([
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
