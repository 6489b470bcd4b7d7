import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { callTool, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";

// The first in-process command of a worker would load the CLI within a test's time; loaded here instead.
beforeAll(() => loadInProcessCli(), 180_000);

/**
 * `svc <args>` in this worker (helpers/inProcessCli.ts): these tests are about what the run is offered and
 * told, which the command prints; its agent still runs as a process of its own, against the command's endpoint.
 */
const svc = (home: TempHome, args: readonly string[]) =>
  runInProcess(args, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

/**
 * `svc cron run` runs the job in the CLI process, outside the gateway's MCP connections: its run gets the
 * built-in toolsets as the gateway's runs do, shaped by the `tools:` settings (a model run and a command
 * agent alike), and a command agent reaches them at SVC_MCP_URL with SVC_MCP_TOKEN. No MCP server's tools: a call naming
 * one of a configured server's is told why, and how the job gets them (a run in the gateway).
 */
// The first command in a worker loads the CLI's modules, which takes long on a loaded machine.
describe("svc cron run: the run's built-in tools", { timeout: 90_000 }, () => {
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

  it("a command agent's call to a configured MCP server's tool is told that svc cron run connects no MCP server, and where the job gets them", async () => {
    const home = tempHome();
    try {
      home.write(
        "agent.sh",
        '#!/bin/sh\ncurl -s -H "Authorization: Bearer $SVC_MCP_TOKEN" -H "content-type: application/json" -H "accept: application/json, text/event-stream" -d "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"$1\\",\\"arguments\\":{}}}" "$SVC_MCP_URL"\n',
        0o755,
      );
      const config = (tool: string) =>
        stringify({
          agent: { provider: "command", command: [`${home.dir}/agent.sh`, tool] },
          // Never started: svc cron run connects no MCP server.
          mcp_servers: {
            docs: { command: "/nonexistent/docs-server" },
            off: { command: "/nonexistent/off-server", enabled: false },
          },
        });
      const create = ["cron", "create", "--name", "j", "--schedule", "every 1h", "--prompt", "p"];
      home.write("config.yaml", config("mcp__docs__search"));
      expect((await svc(home, create)).code).toBe(0);
      const called = async (tool: string) => {
        home.write("config.yaml", config(tool));
        const run = await svc(home, ["cron", "run", "j"]);
        expect(run.code).toBe(0);
        return (JSON.parse(run.stdout) as { result: { isError: boolean; content: Array<{ text: string }> } })
          .result;
      };
      expect(await called("mcp__docs__search")).toEqual({
        isError: true,
        content: [
          {
            type: "text",
            text: `mcp_servers.docs's tools are not offered to svc cron run, which connects no MCP server (the connections are the gateway's): the job's runs in the gateway get them, on its schedule or fired by a cron_job route; "mcp__docs__search" was not run`,
          },
        ],
      });
      // A disabled server's tools, or a name no server registers, are unknown here as anywhere.
      for (const tool of ["mcp__off__search", "mcp__nothere__search"])
        expect((await called(tool)).content[0]?.text).toBe(
          `unknown tool "${tool}": this run does not offer it`,
        );
    } finally {
      home.cleanup();
    }
  });

  it("a model run's call to a configured MCP server's tool gets the same reason", async () => {
    const home = tempHome();
    const model = await startFakeOpenAI();
    try {
      home.write(
        "config.yaml",
        stringify({
          agent: { provider: "openai", model: "m", base_url: model.baseUrl, retries: 0 },
          mcp_servers: { docs: { command: "/nonexistent/docs-server" } },
        }),
      );
      const create = ["cron", "create", "--name", "j", "--schedule", "every 1h", "--prompt", "p"];
      expect((await svc(home, create)).code).toBe(0);
      model.script(callTool("mcp__docs__search", {}), { text: "done" });
      const run = await svc(home, ["cron", "run", "j"]);
      expect(run.code).toBe(0);
      const second = model.requests[1]?.json as { messages?: Array<{ role: string; content: unknown }> };
      const messages = second?.messages ?? [];
      expect(messages.filter((m) => m.role === "tool").map((m) => String(m.content))).toEqual([
        `mcp_servers.docs's tools are not offered to svc cron run, which connects no MCP server (the connections are the gateway's): the job's runs in the gateway get them, on its schedule or fired by a cron_job route; "mcp__docs__search" was not run`,
      ]);
    } finally {
      await model.close();
      home.cleanup();
    }
  });
});
