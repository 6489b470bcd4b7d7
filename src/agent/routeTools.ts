import { runToolsets } from "../actors/agent/index.js";
import type { RegisteredTool } from "../actors/mcp/toolNames.js";
import { selectToolsets } from "./toolSelection.js";

export interface RunsView {
  readonly provider: string;
  /**
   * The routes served (`platforms.webhook.routes`, then the subscriptions) with their `toolsets` and the keys
   * that mean no run of theirs.
   */
  readonly routes: Readonly<
    Record<
      string,
      {
        readonly toolsets?: readonly string[] | undefined;
        readonly deliver_only?: boolean | undefined;
        readonly cron_job?: string | undefined;
      }
    >
  >;
  readonly servers: readonly string[];
  /** The server's `trust`, rendered. */
  readonly trusted: boolean;
  readonly approvals: "deny" | "allow";
}

/**
 * What `svc mcp tools <server>` adds under the table for a model provider: which routes' runs are offered
 * the server's tools (cron jobs use the default toolsets, so they get every server; routes that start no
 * run, `deliver_only` and `cron_job` ones, are in neither list) and which tools an
 * unattended run refuses because they need approval: for a model provider, and for a command agent, which
 * reaches the same tools at its run's MCP endpoint (`SVC_MCP_URL`). Nothing for echo, whose runs call no tool.
 */
export function runsNote(server: string, tools: readonly RegisteredTool[], view: RunsView): string {
  if (view.provider === "echo") return "";
  const isServer = (name: string) => view.servers.includes(name);
  const offered: string[] = [];
  const withheld: string[] = [];
  for (const [name, route] of Object.entries(view.routes)) {
    // No agent runs for such a route: a deliver_only route sends its rendered prompt, a cron_job route fires
    // the job, whose run is one of the cron jobs' (with the job's toolsets, not the route's).
    if (route.deliver_only === true || route.cron_job !== undefined) continue;
    const toolsets = runToolsets(route.toolsets, undefined, isServer);
    (selectToolsets(toolsets, view.servers).mcpServers.includes(server) ? offered : withheld).push(name);
  }
  const lines = [
    `Agent runs (agent.provider ${view.provider}): offered to cron jobs${offered.length > 0 ? ` and routes ${offered.join(", ")}` : ""}${withheld.length > 0 ? `; not to routes ${withheld.join(", ")} (their toolsets name no_mcp or other servers)` : ""}`,
  ];
  const refused = view.trusted || view.approvals === "allow" ? [] : tools.filter((t) => !t.readOnly);
  if (refused.length > 0)
    lines.push(
      `Refused in runs (untrusted server, no readOnlyHint, gateway.approvals: deny): ${refused.map((t) => t.name).join(", ")}`,
    );
  return `${lines.join("\n")}\n`;
}
