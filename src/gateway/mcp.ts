import { type GatewayMcp, startGatewayMcp } from "../actors/mcp/gatewayHub.js";
import type { McpHub } from "../actors/mcp/hub.js";
import type { GatewaySystem } from "../actors/system.js";
import type { Clock } from "../clock.js";
import { emptiedEnvProblem, secretScope, writtenEnvLines } from "../config/envFile.js";
import { namedProfile, type SvcPaths, svcPaths } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import { keptCredentials, profileMcpCredentials } from "../io/loadedCredentials.js";
import type { Logger } from "../io/log.js";
import type { GatewayMetrics } from "../io/metrics/gatewayMetrics.js";
import type { ProcessGroups } from "../io/processGroups.js";
import type { Agent } from "./agent.js";
import { type SentCredentials, sentCredentialsLedger } from "./sentCredentials.js";

export interface Mcp extends GatewayMcp {
  /**
   * The hub a run of `profile` calls: the default profile's, or a named profile's own, started at its
   * first run (its tokens, `.env` and caches under `profiles/<name>/`), with the same servers.
   */
  hubFor(profile: string | undefined): McpHub;
  /** Settles once the default profile's hub has applied `config.mcp_servers` (failed or not). */
  reloadConfig(config: Config): Promise<void>;
  /**
   * Closes the connections of each named profile that `use` says is no longer bound (after a reload: no
   * route, subscription or cron job bound to it); one with a run waiting or under way is asked again each
   * second until it has none, or is bound again. A later run of the profile opens them again.
   */
  retireProfiles(use: (profile: string) => ProfileUse): void;
  /**
   * What the servers send as credentials in the default profile and in each named profile whose hub has rendered
   * them (its first run, each reload, each status change of its hub: a reconnect renders its entry with the
   * profile's `.env` as it is then), and what its live connections were rendered with at their connect (a token
   * since rotated in its `.env`), hidden in every run: a value no longer sent stays in the list while a run
   * that began before it went holds it (`SentCredentials.hold`).
   */
  readonly sentCredentials: SentCredentials;
}

/** Whether a named profile keeps its MCP connections: bound, unbound with runs left, or unused. */
export type ProfileUse = "bound" | "busy" | "unused";

/** How often a profile that went, with runs left, is asked again whether it can be closed. */
const RETIRE_RECHECK_MS = 1000;

/** The MCP hubs of the configured servers (their connections are actors under the root system). */
export function createMcp(deps: {
  config: Config;
  paths: SvcPaths;
  logger: Logger;
  system: GatewaySystem;
  agent: Agent;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  env?: NodeJS.ProcessEnv;
  metrics?: GatewayMetrics | undefined;
  /** Where the stdio servers' process groups are noted (the agents' `state/agents/`). */
  groups?: ProcessGroups;
  /** Told of each status change of the default profile's hub (its registered tools may have changed). */
  onStatus?: (hub: McpHub) => void;
  /** Aborted when the gateway's stop begins: a sampling request it ends says so. */
  stopping?: AbortSignal;
}): Mcp {
  const { logger } = deps;
  let servers = deps.config.mcp_servers;
  // Restart-only (a reload that changes it is warned about): a named profile's hub started after the
  // reload answers approvals as the default profile's does, with the value the gateway started with.
  const approvals = deps.config.gateway.approvals;
  // What each profile's servers send as credentials (the default profile's under `undefined`): the entries as
  // its hub last rendered them, and what each of its connections was rendered with at its connect, which it
  // sends while it lives (a token rotated in the profile's .env is sent by a connection made before, until it
  // reconnects; the reconnect sends the new one). A profile retired keeps its values (its connections sent
  // them), and so does one whose .env cannot be read now.
  const sentCredentials = new Map<string | undefined, readonly string[]>();
  const sent = sentCredentialsLedger();
  const renderCredentials = (name: string | undefined, hub: McpHub) => {
    let found: string[];
    try {
      const paths = name === undefined ? deps.paths : svcPaths(deps.paths.home, name);
      const rendered = profileMcpCredentials(servers, secretScope(paths, deps.env));
      found = keptCredentials([...rendered, ...hub.sentCredentials()]);
    } catch {
      return;
    }
    const known = sentCredentials.get(name);
    if (known !== undefined && known.length === found.length && known.every((v, i) => v === found[i])) return;
    sentCredentials.set(name, found);
    sent.set(keptCredentials([...sentCredentials.values()].flat()));
  };
  const start = (paths: SvcPaths, onStatus?: (hub: McpHub) => void) =>
    startGatewayMcp({
      paths,
      servers,
      approvals,
      // A named profile's connections log under the same server names: each line names the profile.
      logger: paths.profile === undefined ? logger : logger.child({ profile: paths.profile }),
      runner: deps.agent.runner,
      hiddenValues: () => deps.agent.hiddenValues(),
      system: deps.system,
      metrics: deps.metrics,
      ...(deps.env === undefined ? {} : { env: deps.env }),
      ...(deps.groups === undefined ? {} : { groups: deps.groups }),
      ...(onStatus === undefined ? {} : { onStatus }),
      stopping: deps.stopping,
    });
  // The default profile's servers are rendered at each status change as a named profile's are: its hub reads
  // `.env` again at each connect, so a reconnect after a token was rotated there sends the new one.
  const main = start(deps.paths, (hub) => {
    renderCredentials(undefined, hub);
    deps.onStatus?.(hub);
  });
  const profiles = new Map<string, GatewayMcp>();
  // How many variables each named profile's `.env` set when its servers were last rendered: a reload finding
  // that file emptied (an editor mid-save) keeps them, as the gateway keeps its config for its own `.env`.
  const envVariables = new Map<string, number>();
  const envOf = (name: string) => svcPaths(deps.paths.home, name).env;
  const variablesIn = (name: string) => {
    try {
      return writtenEnvLines(envOf(name)).length;
    } catch {
      return 0;
    }
  };
  // Hubs of profiles that went, while their servers close (a reload to no server).
  const retiring = new Map<string, GatewayMcp>();
  // Profiles that went with runs left, each asked again on its timer.
  const rechecks = new Map<string, unknown>();
  let stopped = false;
  const reloadFailed = (err: unknown) => logger.error({ err: String(err) }, "[mcp] reload failed");
  return {
    ...main,
    hubFor(profile) {
      const named = namedProfile(profile);
      // After the stop no hub starts again: a late run of a named profile gets the stopped default one.
      if (named === undefined || stopped) return main.hub;
      let hub = profiles.get(named);
      if (hub === undefined) {
        hub = retiring.get(named);
        // Each status change (a connect, which renders the entries with the profile's .env as it is then) reads
        // what they send again, the start's first.
        if (hub === undefined)
          hub = start(svcPaths(deps.paths.home, named), (changed) => renderCredentials(named, changed));
        else {
          // Bound again while its servers still close: that hub takes them back, after the closing (its
          // reloads run one after the other), where a new hub would start connections of the same names.
          retiring.delete(named);
          void hub.reload(servers).catch(reloadFailed);
        }
        envVariables.set(named, variablesIn(named));
        profiles.set(named, hub);
      }
      return hub.hub;
    },
    reloadConfig(config) {
      servers = config.mcp_servers;
      renderCredentials(undefined, main.hub);
      const applied = main.reload(servers).then(() => undefined, reloadFailed);
      for (const [name, hub] of profiles) {
        const emptied = emptiedEnvProblem(envOf(name), envVariables.get(name) ?? 0);
        if (emptied !== undefined) {
          logger.error(
            { profile: name },
            `[mcp] profile ${name}: reload refused, its MCP connections keep their values — ${emptied}`,
          );
          hub.reloadRefused(emptied);
          continue;
        }
        envVariables.set(name, variablesIn(name));
        renderCredentials(name, hub.hub);
        void hub.reload(servers).catch(reloadFailed);
      }
      return applied;
    },
    retireProfiles(use) {
      const retire = (name: string) => {
        rechecks.delete(name);
        const hub = profiles.get(name);
        if (hub === undefined || stopped) return;
        const now = use(name);
        if (now === "bound") return;
        if (now === "busy") {
          rechecks.set(
            name,
            deps.clock.setTimeout(() => retire(name), RETIRE_RECHECK_MS),
          );
          return;
        }
        profiles.delete(name);
        // A hub without servers (no mcp_servers) has nothing to tell of.
        if (hub.hub.status().length > 0)
          logger.info(
            { profile: name },
            `[mcp] profile ${name}: no route, subscription or cron job is bound to it any more — its MCP connections are closed (a later run of it opens them again)`,
          );
        retiring.set(name, hub);
        void hub
          .close()
          .catch(reloadFailed)
          .finally(() => {
            if (retiring.get(name) === hub) retiring.delete(name);
          });
      };
      for (const name of profiles.keys()) if (!rechecks.has(name)) retire(name);
    },
    sentCredentials: { list: sent.list, hold: sent.hold },
    async stop() {
      stopped = true;
      for (const timer of rechecks.values()) deps.clock.clearTimeout(timer);
      rechecks.clear();
      const named = [...profiles.values(), ...retiring.values()];
      await Promise.all([main.stop(), ...named.map((hub) => hub.stop())]);
    },
  };
}
