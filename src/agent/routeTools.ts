import { runToolsets } from "../actors/agent/index.js";
import { DEFAULT_WEBHOOK_TOOLSETS } from "../actors/agent/runner.js";
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
        /** The profile its runs run as (the default one when unset). */
        readonly profile?: string | undefined;
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
 * the server's tools (cron jobs use the default toolsets, so they get every server — but for one named like
 * a toolset of that set, `web_search`, which they then get alone; routes that start no
 * run, `deliver_only` and `cron_job` ones, are in neither list) and which tools an
 * unattended run refuses because they need approval: for a model provider, and for a command agent, which
 * reaches the same tools at its run's MCP endpoint (`SVC_MCP_URL`). Nothing for echo, whose runs call no tool.
 */
export function runsNote(server: string, tools: readonly RegisteredTool[], view: RunsView): string {
  if (view.provider === "echo") return "";
  const isServer = (name: string) => view.servers.includes(name);
  const offered: string[] = [];
  const withheld: string[] = [];
  // Routes without toolsets that are not offered it: as cron jobs, their default set names another server.
  const byDefault: string[] = [];
  for (const [name, route] of Object.entries(view.routes)) {
    // No agent runs for such a route: a deliver_only route sends its rendered prompt, a cron_job route fires
    // the job, whose run is one of the cron jobs' (with the job's toolsets, not the route's).
    if (route.deliver_only === true || route.cron_job !== undefined) continue;
    const toolsets = runToolsets(route.toolsets, undefined, isServer);
    if (selectToolsets(toolsets, view.servers).mcpServers.includes(server)) offered.push(name);
    else (route.toolsets === undefined ? byDefault : withheld).push(name);
  }
  // Cron runs get the default set, which picks a server named like one of its toolsets (`web_search`) alone.
  const defaultServers = selectToolsets(DEFAULT_WEBHOOK_TOOLSETS, view.servers).mcpServers;
  const cron = defaultServers.includes(server);
  const to = [
    ...(cron ? ["cron jobs"] : []),
    ...(offered.length > 0 ? [`routes ${offered.join(", ")}`] : []),
  ];
  const notByDefault = [
    ...(cron ? [] : ["cron jobs"]),
    ...(byDefault.length > 0 ? [`routes ${byDefault.join(", ")}`] : []),
  ];
  const notTo = [
    ...(notByDefault.length > 0
      ? [
          `${notByDefault.join(" and ")} (the default toolsets name the MCP server${defaultServers.length === 1 ? "" : "s"} ${defaultServers.join(", ")}, which they get alone)`,
        ]
      : []),
    ...(withheld.length > 0
      ? [`routes ${withheld.join(", ")} (their toolsets name no_mcp or other servers)`]
      : []),
  ];
  const said = [
    ...(to.length > 0 ? [`offered to ${to.join(" and ")}`] : []),
    ...notTo.map((n, i) => `${to.length === 0 && i === 0 ? "not offered to" : "not to"} ${n}`),
  ];
  const lines = [`Agent runs (agent.provider ${view.provider}): ${said.join("; ")}`];
  const refused = view.trusted || view.approvals === "allow" ? [] : tools.filter((t) => !t.readOnly);
  if (refused.length > 0)
    lines.push(
      `Refused in runs (untrusted server, no readOnlyHint, gateway.approvals: deny): ${refused.map((t) => t.name).join(", ")}`,
    );
  return `${lines.join("\n")}\n`;
}
