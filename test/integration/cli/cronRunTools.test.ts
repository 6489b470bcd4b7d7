import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * `svc cron run` runs the job in the CLI process, outside the gateway's MCP connections: its run gets the
 * built-in toolsets as the gateway's runs do, shaped by the `tools:` settings (a model run and a command
 * agent alike), and a command agent reaches them at SVC_MCP_URL with SVC_MCP_TOKEN.
 */
describe("svc cron run: the run's built-in tools", () => {
  it("a command agent lists them at SVC_MCP_URL: web_search with a backend, web_extract cut at tools.web.max_chars", async () => {
    const home = tempHome();
    try {
      home.write(
        "agent.sh",
        '#!/bin/sh\ncurl -s -H "Authorization: Bearer $SVC_MCP_TOKEN" -H "content-type: application/json" -H "accept: application/json, text/event-stream" -d \'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\' "$SVC_MCP_URL"\n',
        0o755,
      );
      home.write(
        "config.yaml",
        stringify({
          agent: { provider: "command", command: [`${home.dir}/agent.sh`] },
          tools: { web_search: { backend: "searxng", url: "http://127.0.0.1:9/" }, web: { max_chars: 500 } },
        }),
      );
      const create = ["cron", "create", "--name", "j", "--schedule", "every 1h", "--prompt", "p"];
      expect((await svc(home, create)).code).toBe(0);
      const run = await svc(home, ["cron", "run", "j"]);
      expect(run.code).toBe(0);
      const { tools } = (
        JSON.parse(run.stdout) as { result: { tools: Array<{ name: string; description: string }> } }
      ).result;
      expect(tools.map((t) => t.name)).toEqual(["web_extract", "web_search", "vision_analyze", "clarify"]);
      expect(tools.find((t) => t.name === "web_extract")?.description).toContain("cut at 500 characters");
    } finally {
      home.cleanup();
    }
  });
});
