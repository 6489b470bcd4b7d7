import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

// The README's route: its secret is ${GITHUB_WEBHOOK_SECRET}, which the user puts in .env.
const readmeRoute = stringify({
  platforms: {
    webhook: {
      enabled: true,
      host: "127.0.0.1",
      routes: { github: { secret: "${GITHUB_WEBHOOK_SECRET}", events: ["pull_request"] } },
    },
  },
});

describe("a ${VAR} set nowhere, but .env sets a name one or two letters from it, or the same in other case", () => {
  it("names the .env line's name beside the route's secret", async () => {
    home = tempHome();
    home.write("config.yaml", readmeRoute);
    home.write(".env", "github_webhook_secret=abc\n", 0o600);
    const env = join(home.dir, ".env");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `platforms.webhook.routes.github.secret: \${GITHUB_WEBHOOK_SECRET} is not set — set GITHUB_WEBHOOK_SECRET in ${env} or the environment (${env} sets github_webhook_secret — did you mean that name? a \${NAME} must match it exactly, case included)`,
    );

    home.write(".env", "GITHUB_WEBHOOK_SECRETS=abc\n", 0o600);
    expect((await svc(home, ["config", "check"])).stderr).toContain(
      `(${env} sets GITHUB_WEBHOOK_SECRETS — did you mean that name?`,
    );
  });

  it("names it beside agent.api_key too, after what else to do", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        agent: { provider: "openai", model: "m", api_key: "${OPENAI_API_KEY}" },
        platforms: { webhook: { enabled: true, host: "127.0.0.1" } },
      }),
    );
    home.write(".env", "OPENAI_APIKEY=sk-x\n", 0o600);
    const env = join(home.dir, ".env");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `agent.api_key: \${OPENAI_API_KEY} is not set — set OPENAI_API_KEY in ${env} or the environment, or remove api_key for a local endpoint (${env} sets OPENAI_APIKEY — did you mean that name?`,
    );
  });

  it("names it in svc config check's warning of an MCP server's variable", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1" } },
        mcp_servers: {
          remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${MY_TOKEN}" } },
        },
      }),
    );
    home.write(".env", "MY_TOKN=abc\n", 0o600);
    const env = join(home.dir, ".env");
    const res = await svc(home, ["config", "check"]);
    expect(res.stderr).toContain(
      `mcp_servers.remote: \${MY_TOKEN} is not set — add MY_TOKEN=... to ${env} or the environment (${env} sets MY_TOKN — did you mean that name?`,
    );
  });

  it("says nothing more when no name of .env is close (or there is no .env)", async () => {
    home = tempHome();
    home.write("config.yaml", readmeRoute);
    const bare = await svc(home, ["config", "check"]);
    expect(bare.stderr).toContain("${GITHUB_WEBHOOK_SECRET} is not set — set GITHUB_WEBHOOK_SECRET in ");
    expect(bare.stderr).not.toContain("did you mean");
    home.write(".env", "GITHUB_TOKEN=abc\nWEBHOOK_PORT=9000\n", 0o600);
    expect((await svc(home, ["config", "check"])).stderr).not.toContain("did you mean");
  });
});

describe("a route's ${VAR} secret set nowhere while a global secret is set (svc gateway setup's WEBHOOK_SECRET)", () => {
  it("adds that the route may leave its secret out and use the global one", async () => {
    home = tempHome();
    home.write("config.yaml", readmeRoute);
    home.write(".env", "WEBHOOK_SECRET=0123456789abcdef\n", 0o600);
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `platforms.webhook.routes.github.secret: \${GITHUB_WEBHOOK_SECRET} is not set — set GITHUB_WEBHOOK_SECRET in ${join(home.dir, ".env")} or the environment; or leave secret out of this route to use the global secret (platforms.webhook.secret or WEBHOOK_SECRET, which is set)\n`,
    );
  });
});
