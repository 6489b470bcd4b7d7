import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/**
 * A route (config.yaml's, or a subscription whose toolsets were written by hand) whose toolsets name an MCP
 * server with enabled: false: the server registers no tool, so the route's runs get none of it. Said at start,
 * at each load of the subscriptions, and by `svc config check`, as other toolsets a run gets nothing for are.
 */
const OFF_SERVER = { command: process.execPath, args: ["--version"], enabled: false };
const AGENT = { provider: "command", command: [process.execPath, "--version"] };
const SUBSCRIPTIONS = JSON.stringify({
  picked: { secret: "subscription-secret-for-probe", toolsets: ["offline_docs", "terminal"] },
  direct: {
    secret: "subscription-secret-for-probe",
    toolsets: ["offline_docs"],
    deliver_only: true,
    deliver: "telegram",
  },
});
const problem =
  '"offline_docs" names mcp_servers.offline_docs, which has enabled: false, so runs of the route are offered none of its tools — set mcp_servers.offline_docs.enabled: true, or remove it from the list';

let gw: TestGateway | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home?.cleanup();
  home = undefined;
});

describe("toolsets naming a disabled MCP server", () => {
  it("are warned about at start (config.yaml routes) and at each load of the subscriptions", async () => {
    gw = await startTestGateway({
      files: { "webhook_subscriptions.json": SUBSCRIPTIONS },
      config: webhookConfig(
        { ci: { secret: "route-secret-for-probe", toolsets: ["offline_docs"] } },
        {},
        { agent: AGENT, mcp_servers: { offline_docs: OFF_SERVER } },
      ),
    });
    const live = gw;
    await vi.waitFor(
      () =>
        expect(live.logs().map((l) => l.msg)).toEqual(
          expect.arrayContaining([
            `[agent] ${live.home.dir}/config.yaml: platforms.webhook.routes.ci.toolsets: ${problem}`,
            `[webhook] dynamic subscription picked: toolsets: ${problem}`,
          ]),
        ),
      { timeout: 10_000 },
    );
    // A deliver_only record starts no run: its toolsets are named as having no effect instead.
    expect(
      live.logs().some((l) => l.msg.startsWith("[webhook] dynamic subscription direct: toolsets: ")),
    ).toBe(false);
  });

  it("are named by svc config check, a subscription's too", async () => {
    home = tempHome();
    home.write("webhook_subscriptions.json", SUBSCRIPTIONS, 0o600);
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          { ci: { secret: "route-secret-for-probe", toolsets: ["offline_docs"] } },
          { host: "127.0.0.1" },
          { agent: AGENT, mcp_servers: { offline_docs: OFF_SERVER } },
        ),
      ),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `Warning: ${home.dir}/config.yaml: platforms.webhook.routes.ci.toolsets: ${problem}\n`,
    );
    expect(result.stderr).toContain(
      `Warning: ${home.dir}/webhook_subscriptions.json: picked.toolsets: ${problem}\n`,
    );
    expect(result.stderr).not.toContain('direct.toolsets: "offline_docs" names');
  });
});
