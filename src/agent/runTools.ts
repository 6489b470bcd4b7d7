import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { AgentRequest } from "../actors/agent/runner.js";
import { DEFAULT_PROFILE } from "../config/paths.js";
import { newRunWorkspace, workspaceDirName } from "../io/workspace.js";
import { type McpToolSource, mcpAgentTools } from "./mcpTools.js";
import type { ServerWithoutTools } from "./serversWithoutTools.js";
import { selectToolsets } from "./toolSelection.js";
import type { AgentTool, ToolContext } from "./tools/tool.js";
import type { UnaskedServerWarnings } from "./unaskedServerWarnings.js";
import { unofferedSearch } from "./unofferedSearch.js";
import { type UnofferedTools, unofferedServerTools } from "./unofferedTools.js";

/** Where a run's tools come from; the model runner and the command runner's MCP endpoint share it. */
export interface RunToolsDeps {
  /**
   * The gateway's MCP hub for the run's profile, once it exists (undefined outside the gateway: `svc cron
   * run`, `svc mcp`).
   */
  readonly mcp?: (profile: string | undefined) => McpToolSource | undefined;
  /** The built-in toolsets a run's toolsets name (src/agent/tools/index.ts). */
  readonly builtins?: (toolsets: readonly string[]) => AgentTool[];
  /** `$SVC_HOME/workspaces`: each run that needs a working directory gets its own below it. */
  readonly workspacesDir?: string;
  /**
   * Where no MCP hub runs (`svc cron run`): why a call names a configured MCP server's tool, which the run
   * is not offered (`mcpToolsOutsideGateway`).
   */
  readonly noMcpHub?: UnofferedTools;
  /** How long a run waits for an MCP server's first connect (`FIRST_CONNECT_WAIT_MS`). */
  readonly firstConnectWaitMs?: number;
  /**
   * The WARNs logged for servers runs go on without that their toolsets did not name; without it, each such
   * run warns.
   */
  readonly unaskedWarnings?: UnaskedServerWarnings;
}

/** Which of the selected MCP servers a run goes on without its WARN names. */
export interface WithoutToolsWarning<T> {
  /**
   * Every one, for a run whose toolsets named them; for one offered every enabled server without naming any,
   * those not warned about yet as they are down now (`UnaskedServerWarnings`).
   */
  readonly servers: readonly T[];
  /** The run's toolsets did not name them: later runs go on without them too, and are not warned about it. */
  readonly unasked: boolean;
}

/**
 * What a run is told of the MCP servers it selected that it waits for or goes on without (`McpWaitReports`),
 * with the WARN to log about them.
 */
export interface RunToolsReports {
  readonly onWait?: (servers: readonly string[]) => void;
  /** `waitedMs`: how long the run waited for them (`McpWaitReports.onGaveUp`). */
  readonly onGaveUp?: (
    servers: readonly string[],
    warning: WithoutToolsWarning<string>,
    waitedMs: number,
  ) => void;
  readonly onDown?: (
    servers: readonly ServerWithoutTools[],
    warning: WithoutToolsWarning<ServerWithoutTools>,
  ) => void;
}

/** The tools a run may use: the built-ins its toolsets name, then the selected MCP servers' tools. */
export async function runTools(
  deps: RunToolsDeps,
  request: AgentRequest,
  signal: AbortSignal,
  /** Told which selected MCP servers the run waits for, and which it goes on without (see `mcpAgentTools`). */
  reports: RunToolsReports = {},
): Promise<AgentTool[]> {
  const hub = deps.mcp?.(request.profile);
  const selection = selectToolsets(request.toolsets, hub?.status().map((s) => s.name) ?? []);
  if (hub === undefined) return deps.builtins?.(selection.builtinToolsets) ?? [];
  const profile = request.profile ?? DEFAULT_PROFILE;
  deps.unaskedWarnings?.observe(profile, hub);
  // A busy route offered every server would otherwise warn at each run about one it never asked for.
  const named = selection.mcpServers.some((server) => request.toolsets.includes(server));
  const once = named ? undefined : deps.unaskedWarnings;
  const warning = <T>(
    servers: readonly T[],
    episode: (server: T) => [string, { state: string; error?: string | undefined } | undefined],
  ) => ({
    servers: once === undefined ? servers : servers.filter((s) => once.firstTime(profile, ...episode(s))),
    unasked: once !== undefined,
  });
  return [
    ...(deps.builtins?.(selection.builtinToolsets) ?? []),
    ...(await mcpAgentTools(hub, selection.mcpServers, signal, deps.firstConnectWaitMs, {
      ...(reports.onWait === undefined ? {} : { onWait: reports.onWait }),
      onGaveUp: (servers, waitedMs) =>
        reports.onGaveUp?.(
          servers,
          warning(servers, (s) => [s, undefined]),
          waitedMs,
        ),
      onDown: (servers) =>
        reports.onDown?.(
          servers,
          warning(servers, (s) => [s.server, s]),
        ),
    })),
  ];
}

/**
 * Why a call names a tool of an MCP server the run selected but was not offered (`unofferedServerTools`),
 * given the tools `runTools` offered it.
 */
export function unofferedTools(
  deps: RunToolsDeps,
  request: AgentRequest,
  offered: readonly AgentTool[],
): UnofferedTools {
  const hub = deps.mcp?.(request.profile);
  if (hub === undefined && deps.noMcpHub !== undefined) return deps.noMcpHub;
  const selection = selectToolsets(request.toolsets, hub?.status().map((s) => s.name) ?? []);
  return unofferedServerTools(hub, selection.mcpServers, offered);
}

/**
 * `unofferedTools` for a command run's MCP endpoint, which also says why a call of `web_search` the run's
 * toolsets select was not run when `tools.web_search` names no backend (`unofferedSearch`): a model is
 * never shown the name, but a command agent reads it in SVC_TOOLSETS.
 */
export function unofferedEndpointTools(
  deps: RunToolsDeps,
  request: AgentRequest,
  offered: readonly AgentTool[],
  hasSearchBackend: boolean,
): UnofferedTools {
  const servers = unofferedTools(deps, request, offered);
  const hub = deps.mcp?.(request.profile);
  const { builtinToolsets } = selectToolsets(request.toolsets, hub?.status().map((s) => s.name) ?? []);
  const search = unofferedSearch(builtinToolsets, hasSearchBackend);
  return (name) => search(name) ?? servers(name);
}

/**
 * What the run's tools know of it; webhook and cron runs are unattended. The run's workspace is
 * `<workspacesDir>/<profile>/<route>_<delivery id>-<hash>`: the delivery id is the sender's, so its
 * readable part is reduced to safe characters and the hash of route and id keeps two runs from sharing
 * a directory (ids that differ only in unsafe characters or past the cut, or on another route); a later
 * run of the same delivery gets `-2`, `-3`, ... after it (`newRunWorkspace`).
 */
export function runContext(
  deps: RunToolsDeps,
  request: AgentRequest,
  signal: AbortSignal,
  analyzeImage?: ToolContext["analyzeImage"],
): ToolContext {
  let workspace: Promise<string> | undefined;
  return {
    signal,
    route: request.route,
    deliveryId: request.deliveryId,
    profile: request.profile ?? "default",
    unattended: true,
    workspace() {
      const root = deps.workspacesDir;
      if (root === undefined) return Promise.reject(new Error("this run has no working directory"));
      // A route name has no "/", so route and id are told apart in the hashed name.
      workspace ??= newRunWorkspace(
        join(root, (request.profile ?? DEFAULT_PROFILE).replace(/[^A-Za-z0-9_-]/g, "_")),
        workspaceDirName(`${request.route}/${request.deliveryId}`),
      );
      // A command may have removed it (`rm -rf ~`, its HOME): every later call would fail on a missing
      // directory ("could not start bash", "a.txt does not exist"), so it is made again, empty.
      return workspace.then(async (dir) => {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        return dir;
      });
    },
    ...(analyzeImage === undefined ? {} : { analyzeImage }),
  };
}
