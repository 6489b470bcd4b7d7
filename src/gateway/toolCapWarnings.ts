import { runToolsets } from "../actors/agent/index.js";
import { DEFAULT_WEBHOOK_TOOLSETS } from "../actors/agent/runner.js";
import type { RegisteredTool } from "../actors/mcp/toolNames.js";
import { selectToolsets } from "../agent/toolSelection.js";
import { builtinTools } from "../agent/tools/index.js";
import type { Config } from "../config/schema.js";

/** The most tools OpenAI's Chat Completions API takes in one request; it refuses the whole request past it. */
export const OPENAI_MAX_TOOLS = 128;

/**
 * Watches what runs are offered once the MCP servers' tools are registered (each connect and
 * `tools/list_changed`): with `agent.provider: openai`, a route or the cron jobs offered more than
 * `OPENAI_MAX_TOOLS` tools fail every run, so each is named in a WARN — once until the next reload.
 */
export function toolCapWatch(warn: (line: string) => void) {
  let config: Config | undefined;
  const warned = new Set<string>();
  let reloads = 0;
  const reloaded = (next: Config): void => {
    config = next;
    warned.clear();
  };
  const check = (tools: readonly RegisteredTool[]): void => {
    if (config === undefined || config.agent.provider !== "openai") return;
    const servers = Object.keys(config.mcp_servers);
    const isServer = (name: string) => servers.includes(name);
    // Routes with the same toolsets are offered the same tools: counted once.
    const counts = new Map<string, number>();
    const count = (toolsets: readonly string[]): number => {
      const key = JSON.stringify(toolsets);
      let n = counts.get(key);
      if (n === undefined) {
        const selection = selectToolsets(toolsets, servers);
        const offered = new Set(selection.mcpServers);
        n =
          builtinTools(selection.builtinToolsets, (config as Config).tools).length +
          tools.filter((tool) => offered.has(tool.server)).length;
        counts.set(key, n);
      }
      return n;
    };
    const over: string[] = [];
    for (const [name, route] of Object.entries(config.platforms.webhook.routes)) {
      // No run of its own: a deliver_only route sends its prompt, a cron_job route fires the job.
      if (route.deliver_only || route.cron_job !== undefined) continue;
      const n = count(runToolsets(route.toolsets, undefined, isServer));
      if (n > OPENAI_MAX_TOOLS && !warned.has(`route:${name}`)) {
        warned.add(`route:${name}`);
        over.push(`route ${name} (${n} tools)`);
      }
    }
    const cron = count(DEFAULT_WEBHOOK_TOOLSETS);
    if (cron > OPENAI_MAX_TOOLS && !warned.has("cron")) {
      warned.add("cron");
      over.push(`cron jobs (${cron} tools)`);
    }
    if (over.length === 0) return;
    warn(
      `[agent] runs of ${over.join(", ")} are offered more than the ${OPENAI_MAX_TOOLS} tools OpenAI's API takes in one request (agent.provider: openai): each such run fails. Name only the MCP servers a route needs in its toolsets, or list the tools a server offers in its mcp_servers.<name>.tools.include`,
    );
  };
  return {
    /** A (re)loaded config: what was said is said again when still so. */
    reloaded,
    /**
     * A config being reloaded: nothing is judged until its MCP reload is done (the function returned), since
     * until then the servers it replaces still offer their old tools (a `tools.include` just added, the
     * count before it). A later reload supersedes this one: only the last is judged.
     */
    reloading(next: Config): (tools: readonly RegisteredTool[]) => void {
      config = undefined;
      const reload = ++reloads;
      return (tools) => {
        if (reload !== reloads) return;
        reloaded(next);
        check(tools);
      };
    },
    check,
  };
}
