import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { loggedReply, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postSignedIssue } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/**
 * `agent.provider: command` with routes selecting `web_search` and no `tools.web_search`: the agent's runs are
 * offered no `web_search` at SVC_MCP_URL, as model runs are offered none. Said as for a model provider — a WARN
 * for a route naming it (at start and by `svc config check`), one INFO line naming the routes on the default
 * toolset — and a call of it through the endpoint is told why it was not run, not only "unknown tool". Real
 * sockets on 127.0.0.1, the SDK client in the command.
 */

const SECRET = "hook-secret-command-searchless";
const AGENT = await bundledFixture(
  new URL("../../fixtures/agent/mcpClientAgent.mjs", import.meta.url).pathname,
);
const ROUTES = {
  named: { prompt: "{call}", toolsets: ["web_search", "web_extract"], deliver: "log" },
  plain: { prompt: "{call}", deliver: "log" },
  own: { prompt: "{call}", toolsets: ["web_extract"], deliver: "log" },
};
const CONFIG = webhookConfig(
  ROUTES,
  { secret: SECRET, rate_limit: 1000 },
  { agent: { provider: "command", command: [process.execPath, AGENT] } },
);
const named = (file: string) =>
  `[agent] ${file}: platforms.webhook.routes.named.toolsets: "web_search" needs a search backend, and tools.web_search names none, so runs of the route are offered no web_search (the command agent still sees it in SVC_TOOLSETS) — set tools.web_search (backend: searxng, brave or tavily), or remove it`;
const NOT_OFFERED =
  'this run is not offered web_search: tools.web_search names no search backend — the gateway\'s config.yaml needs tools.web_search (backend: searxng, brave or tavily) to offer it; "web_search" was not run';

let gw: TestGateway;
let home: TempHome | undefined;

beforeAll(async () => {
  gw = await startTestGateway({ config: CONFIG });
});

afterAll(async () => {
  await gw?.stop();
  home?.cleanup();
});

const call = (tool: string) => ({ call: JSON.stringify({ call: tool, arguments: { query: "q" } }) }) as const;

async function webSearchFrom(route: string, id: string) {
  const res = await postSignedIssue(gw.url(`/webhooks/${route}`), SECRET, call("web_search"), id);
  expect(res.status).toBe(202);
  return loggedReply<{
    tools: Array<{ name: string }>;
    result: { content: Array<{ text: string }>; isError?: boolean };
  }>(gw, id);
}

describe("a command agent's routes selecting web_search while tools.web_search names no backend", () => {
  it("are named at start: a WARN for the route naming it, one INFO line for those on the default toolset", async () => {
    const file = `${gw.home.dir}/config.yaml`;
    const lines = (level: number) =>
      gw
        .logs()
        .filter((l) => l.level === level && l.msg.startsWith(`[agent] ${file}: `))
        .map((l) => l.msg);
    await vi.waitFor(() => expect(lines(40)).toEqual([named(file)]), { timeout: 10_000 });
    expect(lines(30)).toEqual([
      `[agent] ${file}: runs of plain get the default webhook toolset without web_search (the command agent still sees it in SVC_TOOLSETS): tools.web_search names no search backend — set tools.web_search (backend: searxng, brave or tavily) to offer it`,
    ]);
  });

  it("are named by svc config check", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(CONFIG), 0o600);
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `Warning: ${named(`${home.dir}/config.yaml`).slice("[agent] ".length)}\n`,
    );
  });

  it("get, for a call of web_search at SVC_MCP_URL, why it was not run", async () => {
    for (const [route, id] of [
      ["named", "sw-1"],
      ["plain", "sw-2"],
    ] as const) {
      const { tools, result } = await webSearchFrom(route, id);
      expect(tools.map((t) => t.name)).not.toContain("web_search");
      expect(tools.map((t) => t.name)).toContain("web_extract");
      expect(result.isError).toBe(true);
      expect(result.content.map((c) => c.text)).toEqual([NOT_OFFERED]);
    }
  });

  it("a route whose toolsets do not select web_search keeps the generic answer", async () => {
    const { result } = await webSearchFrom("own", "sw-3");
    expect(result.isError).toBe(true);
    expect(result.content.map((c) => c.text)).toEqual([
      'unknown tool "web_search": this run does not offer it',
    ]);
  });
});
