import { chmodSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { configSecretsReadableByOthers, writtenSecretPaths } from "../../../src/io/secretFileModes.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const CONFIG = [
  "platforms:",
  "  webhook:",
  "    enabled: true",
  "    host: 127.0.0.1",
  "    routes:",
  "      github: { secret: s3cret-value }",
  "      gitlab: { secret: '${GITLAB_SECRET}' }",
  "      local: { secret: INSECURE_NO_AUTH }",
  "",
].join("\n");

/**
 * A readable .env is warned about because it holds secrets; a config.yaml with a route secret written out
 * (as most examples do, in a file an editor creates 0644) exposed the same HMAC key to every user of the
 * machine without a word.
 */
describe("config.yaml holding a credential written out, readable by other users", () => {
  it("is named with the key (never the value) by svc config check, and not once it is 0600", async () => {
    home = tempHome();
    const file = home.write("config.yaml", CONFIG, 0o644);
    home.write(".env", "GITLAB_SECRET=x\n", 0o600);
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toContain(
      `${file} holds secrets (platforms.webhook.routes.github.secret) but is readable by other users (mode 0644) — chmod 600 ${file}, or keep them in .env and write \${NAME} in their place`,
    );
    expect(warnings.join("\n")).not.toContain("s3cret-value");
    chmodSync(file, 0o600);
    expect(configSecretsReadableByOthers(file)).toBeUndefined();
  });

  it("counts only credentials written out: not ${VAR}, INSECURE_NO_AUTH or a whpk_ public key", () => {
    expect(
      writtenSecretPaths({
        platforms: {
          telegram: { token: "123:abc" },
          webhook: {
            secret: "${S}",
            routes: { a: { secret: "whpk_abc" }, b: { secret: "INSECURE_NO_AUTH" } },
          },
        },
        mcp_servers: {
          gh: { env: { GITHUB_TOKEN: "ghp_x", LOG: "1" }, headers: { Authorization: "Bearer ${T}" } },
        },
      }),
    ).toEqual(["platforms.telegram.token", "mcp_servers.gh.env.GITHUB_TOKEN"]);
  });
});
