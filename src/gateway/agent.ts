import { join } from "node:path";
import { createRunner, preloadModelRunner, webSearchKey } from "../actors/agent/index.js";
import type { AgentRunner } from "../actors/agent/runner.js";
import { createMcpEndpointHost } from "../agent/mcpEndpoint/index.js";
import type { McpToolSource } from "../agent/mcpTools.js";
import type { Config } from "../config/schema.js";
import { webhookSecretValues } from "../config/webhookSecrets.js";
import { combinedSecrets } from "../io/credentials.js";
import { loadedCredentials } from "../io/loadedCredentials.js";
import type { Logger } from "../io/log.js";
import type { ProcessGroups } from "../io/processGroups.js";
import type { SentCredentials } from "./sentCredentials.js";

export interface Agent {
  /** The runner of the current config (a reload swaps it; runs already started keep theirs). */
  runner(): AgentRunner;
  /** The configured MCP servers' names (a route's `toolsets` may name them). */
  mcpServers(): readonly string[];
  /**
   * Runs reach the MCP hub of their profile; the hubs start after the listener. `sentCredentials`: what the
   * profiles' servers send as credentials (as each connect renders them, with the profile's `.env` as it is then),
   * hidden in every run's reply and what a model is sent; each run holds it from its start to its end, so a
   * value sent to a server during the run stays hidden in all of the run's output.
   */
  attachMcp(hubFor: (profile: string | undefined) => McpToolSource, sentCredentials?: SentCredentials): void;
  /** `dotenv`: the `.env` the new config's `${VAR}`s were taken from (`LoadedConfig.scope.secrets`). */
  reload(config: Config, dotenv?: Readonly<Record<string, string>>): void;
  /** Closes the command runs' MCP endpoint (after the runs have ended). */
  stop(): Promise<void>;
  /**
   * The secrets of the current config no run or server may show (the model's API key, the webhook and
   * subscription secrets, the web search key): MCP servers' log lines and errors are redacted of them too.
   */
  hiddenValues(): readonly string[];
}

/** The configured agent (`agent:`), shared by webhook runs, cron jobs and MCP sampling. */
export function createAgent(
  config: Config,
  deps: {
    logger: Logger;
    home: string;
    groups?: ProcessGroups;
    /** The clock run and tool call times are measured on (the gateway's `Clock.elapsed`). */
    elapsed?: () => number;
    /** The `.env` the config's `${VAR}`s were taken from: a failed command run's message never shows its values. */
    dotenv?: Readonly<Record<string, string>>;
    /**
     * The secrets of the subscriptions served now, hidden from runs as config.yaml's webhook secrets are: a new
     * array only when they changed (`hiddenValues` gives the same list meanwhile).
     */
    subscriptionSecrets?: () => readonly string[];
    /** The environment the config was read with (`LoadedConfig.scope.env`); the process's by default. */
    env?: Readonly<Record<string, string | undefined>>;
  },
): Agent {
  let mcpHub: ((profile: string | undefined) => McpToolSource) | undefined;
  let sentCredentials: SentCredentials | undefined;
  const NO_CREDENTIALS: readonly string[] = Object.freeze([]);
  const holdNothing = () => () => undefined;
  // Each run holds what the servers send from its start to its end: a token a reconnect replaced during the run
  // (a reload, a token rotated in a profile's .env) is still hidden in what the run replies once it ends.
  const holding = (runner: AgentRunner): AgentRunner => ({
    async run(request, signal) {
      const release = (sentCredentials?.hold ?? holdNothing)();
      try {
        return await runner.run(request, signal);
      } finally {
        release();
      }
    },
  });
  let current = config;
  // One loopback endpoint for every command run's tools; its socket opens on the first run.
  const endpoint = createMcpEndpointHost({ fileMaxBytes: () => current.tools.file.max_bytes });
  // The config's own secrets, the keys svc sends included (`hiddenValues`): made once per config.
  let configHidden: readonly string[] = [];
  const build = (next: Config, dotenv = deps.dotenv) => {
    const configSecrets = webhookSecretValues(next);
    configHidden = [
      ...configSecrets,
      ...(next.agent.api_key === undefined ? [] : [next.agent.api_key]),
      ...webSearchKey(next.tools),
    ];
    void preloadModelRunner(next.agent);
    const loaded = loadedCredentials(next, { secrets: dotenv ?? {}, env: deps.env ?? process.env });
    const runner = createRunner(next.agent, {
      logger: deps.logger,
      mcp: (profile) => mcpHub?.(profile),
      workspacesDir: join(deps.home, "workspaces"),
      toolSettings: next.tools,
      mcpEndpoint: endpoint,
      hiddenValues: combinedSecrets(() => configSecrets, deps.subscriptionSecrets),
      // What the servers send, read at each use: a named profile's hub renders its servers at its first run, and
      // a reconnect renders an entry with the profile's .env as it is then (a token rotated there, no reload).
      credentials: combinedSecrets(
        () => loaded,
        () => sentCredentials?.list() ?? NO_CREDENTIALS,
      ),
      ...(dotenv === undefined ? {} : { dotenv }),
      ...(deps.groups === undefined ? {} : { groups: deps.groups }),
      ...(deps.elapsed === undefined ? {} : { elapsed: deps.elapsed }),
    });
    return holding(runner);
  };
  let runner = build(config);
  return {
    runner: () => runner,
    mcpServers: () => Object.keys(current.mcp_servers),
    attachMcp(hubFor, credentials) {
      mcpHub = hubFor;
      sentCredentials = credentials;
    },
    reload(next, dotenv) {
      current = next;
      runner = build(next, dotenv);
    },
    stop: () => endpoint.close(),
    // The same list while no secret changed: an MCP server's every stderr line is redacted with it.
    hiddenValues: combinedSecrets(() => configHidden, deps.subscriptionSecrets),
  };
}
