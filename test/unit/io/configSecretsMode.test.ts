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

/**
 * The rule for mcp_servers entries was the config-wide one (`*_token`, `*_secret`, `*_password`, `api_key`):
 * a 0644 config.yaml with `OPENAI_API_KEY: sk-...` in an entry's env, an `X-Api-Key` or `X-Auth-Token`
 * header, an `?api_key=` url or `--api-key <key>` argument (all of which svc mcp add narrows the file to
 * 0600 for), or a Redis password in state.redis_url, passed in silence.
 */
describe("credentials written out in mcp_servers entries and state.redis_url", () => {
  it("are named as svc mcp add reads them", () => {
    expect(
      writtenSecretPaths({
        mcp_servers: {
          openai: { command: "x", env: { OPENAI_API_KEY: "sk-x", LOG_LEVEL: "debug", DB: "${DB}" } },
          api: { url: "https://h/mcp", headers: { "X-Api-Key": "k1", "X-Auth-Token": "t1", Accept: "x" } },
          query: { url: "https://h/mcp?api_key=k2&mode=x" },
          ctx: { command: "npx", args: ["-y", "ctx7", "--api-key", "k3"] },
          pg: {
            command: "pg",
            args: ["postgresql://u:pw@db/x"],
            env: { DATABASE_URL: "postgres://u:pw@db/y" },
          },
          vars: {
            url: "https://h/mcp?api_key=${K}",
            headers: { "X-Api-Key": "${K}" },
            args: ["--token", "${T}"],
          },
          oauth: { url: "https://h/mcp", oauth: { client_id: "c", client_secret: "s" } },
        },
        state: { backend: "redis", redis_url: "redis://:pw@127.0.0.1:6379/0" },
      }),
    ).toEqual([
      "mcp_servers.openai.env.OPENAI_API_KEY",
      "mcp_servers.api.headers.X-Api-Key",
      "mcp_servers.api.headers.X-Auth-Token",
      "mcp_servers.query.url (its ?api_key=)",
      "mcp_servers.ctx.args[3] (an option's credential)",
      "mcp_servers.pg.args[0] (a URL's password)",
      "mcp_servers.pg.env.DATABASE_URL (a URL's password)",
      "mcp_servers.oauth.oauth.client_secret",
      "state.redis_url",
    ]);
  });

  it("a redis_url with a ?password= option counts; one without a credential or from ${VAR} does not", () => {
    expect(writtenSecretPaths({ state: { redis_url: "redis://h:6379/0?password=pw" } })).toEqual([
      "state.redis_url",
    ]);
    expect(writtenSecretPaths({ state: { redis_url: "redis://h:6379/0" } })).toEqual([]);
    expect(writtenSecretPaths({ state: { redis_url: "${REDIS_URL}" } })).toEqual([]);
  });

  it("a credential-named env or headers value written as a number counts", () => {
    expect(
      writtenSecretPaths({ mcp_servers: { a: { url: "https://h/mcp", headers: { "X-Api-Key": 123456 } } } }),
    ).toEqual(["mcp_servers.a.headers.X-Api-Key"]);
  });

  it("svc config check warns about such a 0644 file, naming the key and not the value", async () => {
    home = tempHome();
    const file = home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  openai: { command: x, env: { OPENAI_API_KEY: sk-value-1234 } }",
        "platforms:",
        "  webhook: { enabled: true, host: 127.0.0.1, secret: '${S}' }",
        "",
      ].join("\n"),
      0o644,
    );
    const { warnings } = await checkConfig({ home: home.dir, env: { S: "x" } });
    expect(warnings).toContain(
      `${file} holds secrets (mcp_servers.openai.env.OPENAI_API_KEY) but is readable by other users (mode 0644) — chmod 600 ${file}, or keep them in .env and write \${NAME} in their place`,
    );
    expect(warnings.join("\n")).not.toContain("sk-value-1234");
  });
});
