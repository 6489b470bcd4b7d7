import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { secretScope } from "../../config/envFile.js";
import { inProfile, type SvcPaths } from "../../config/paths.js";
import type { McpServers } from "../../config/sections/mcp.js";
import { serverNames } from "../../config/serverOrder.js";
import type { Logger } from "../../io/log.js";
import type { OAuthProviderFor } from "../../io/mcp/connect.js";
import { type StatusFile, writeStatusFile } from "../../io/mcp/statusFile.js";
import type { GatewayMetrics } from "../../io/metrics/gatewayMetrics.js";
import { type ProcessGroups, toolGroupNote } from "../../io/processGroups.js";
import { storeProblem } from "../../io/stores/atomicFile.js";
import { type AgentRunner, NO_MCP } from "../agent/runner.js";
import { policyApprovals } from "./approvals.js";
import { type HubOptions, McpHub, type ReloadSummary } from "./hub.js";
import type { SamplingRunner } from "./serverRequests.js";

export interface GatewayMcpOptions {
  readonly paths: SvcPaths;
  readonly servers: McpServers;
  readonly approvals: "deny" | "allow";
  readonly logger: Logger;
  /** The gateway's current agent runner (it changes on reload). */
  readonly runner: () => AgentRunner;
  readonly env?: NodeJS.ProcessEnv;
  readonly oauthProviderFor?: OAuthProviderFor;
  readonly inspect?: HubOptions["inspect"];
  readonly system?: HubOptions["system"];
  /** Tool-call durations (`svc_mcp_tool_call_duration_seconds`), when metrics are on. */
  readonly metrics?: Pick<GatewayMetrics, "toolCall"> | undefined;
  /** Told of each status change (a connect, a lost server, `tools/list_changed`), after the status file. */
  readonly onStatus?: (hub: McpHub) => void;
  readonly hiddenValues?: HubOptions["hiddenValues"];
  /** Where each stdio server's process group is noted (`mcp:<server>`) while it runs. */
  readonly groups?: ProcessGroups;
  readonly stopping?: HubOptions["stopping"];
}

export interface GatewayMcp {
  readonly hub: McpHub;
  reload(servers: McpServers): Promise<ReloadSummary>;
  /**
   * Closes the connections (a reload to no server), its report marked `closed`: a named profile no route,
   * subscription or cron job is bound to any more, whose servers config.yaml still has.
   */
  close(): Promise<ReloadSummary>;
  /** A reload the gateway refused (config.yaml kept): published for `svc mcp reload`, which waits for it. */
  reloadRefused(why: string): void;
  stop(): Promise<void>;
}

/**
 * Sampling through the gateway's agent runner: one run per request, on the `mcp:<server>` route; a model
 * runner answers with `sampling.model` (else `agent.model`) and the clamped `max_tokens`, and the result
 * names the model the endpoint says answered, and why it stopped: `maxTokens` at the token limit, the endpoint's
 * own finish reason when it cut the answer off itself (`insufficient_system_resource`), else `endTurn`.
 */
export function agentSampler(runner: () => AgentRunner): SamplingRunner {
  return (request, signal) => {
    const prompt =
      request.systemPrompt === undefined ? request.prompt : `${request.systemPrompt}\n\n${request.prompt}`;
    return runner()
      .run(
        {
          route: `mcp:${request.server}`,
          event: "sampling",
          deliveryId: randomUUID(),
          prompt,
          // A plain completion: no tool, so a sampling request cannot call back into the servers.
          toolsets: [NO_MCP],
          profile: undefined,
          maxTokens: request.maxTokens,
          ...(request.model === undefined ? {} : { model: request.model }),
        },
        signal,
      )
      .then((reply) =>
        reply.record === undefined
          ? reply.text
          : {
              text: reply.text,
              // MCP: the name of the model that generated the message, as the endpoint names it.
              model: reply.answeredBy ?? reply.record.model,
              // MCP's stopReason is an open string: a cut the endpoint made itself is named by its reason.
              stopReason: reply.cutAtMaxTokens === true ? "maxTokens" : (reply.cutByEndpoint ?? "endTurn"),
            },
      );
  };
}

/**
 * The reload's report, with how the connect of each server it connected, reconnected or tried again first
 * ended (`svc mcp reload` waits for these outcomes and prints them), and those whose connect the gateway's
 * stop ended before they connected (it says so of them).
 */
function reloadReport(
  reload: NonNullable<StatusFile["lastReload"]>,
  hub: McpHub,
): NonNullable<StatusFile["lastReload"]> {
  const own = [...reload.added, ...reload.changed, ...(reload.enabled ?? []), ...(reload.retried ?? [])];
  const ended = hub.reloadConnectsEndedByStop().filter((name) => own.includes(name));
  const outcomes = hub.reloadConnectOutcomes(own);
  return { ...reload, outcomes, ...(ended.length === 0 ? {} : { endedByStop: ended }) };
}

/** Whether a reload left no server configured (each removed, none added). */
function configuresNone(summary: ReloadSummary): boolean {
  return [summary.added, summary.changed, summary.unchanged, summary.disabled, summary.enabled ?? []].every(
    (names) => names.length === 0,
  );
}

/** How often a status file that could not be written is tried again. */
const STATUS_RETRY_MS = 5000;

/**
 * The MCP side of `svc gateway run`: one hub for the configured servers, approvals per
 * `gateway.approvals`, background connects never interactive, and a status file for `svc mcp list`.
 */
export function startGatewayMcp(options: GatewayMcpOptions): GatewayMcp {
  const { paths, logger } = options;
  let lastReload: StatusFile["lastReload"];
  /** Reloads begun and not ended, and when the newest of them began. */
  let reloading = 0;
  let newestBegun = "";
  let lastRefusedReload: StatusFile["lastRefusedReload"];
  /** When the close under way began (`closing`): none once it has reported, or a later reload took it back. */
  let closingSince: string | undefined;
  /**
   * Set while the file cannot be written (a full disk): the next try, so what `svc mcp list` and `svc mcp
   * reload` read catches up once it can be, without waiting for a status change; the failure is said once.
   */
  let retry: ReturnType<typeof setTimeout> | undefined;
  let failing = false;
  let stopped = false;
  // A named profile's directory removed while the gateway runs (`rm -rf profiles/work`) stays removed: its
  // status file, which only `svc mcp reload` reads, is not written again (that would make the directory anew).
  const removable = paths.profile !== undefined && existsSync(paths.root);
  const publish = () => {
    clearTimeout(retry);
    retry = undefined;
    options.onStatus?.(hub);
    if (removable && !existsSync(paths.root)) return;
    try {
      writeStatusFile(paths.mcpCache, {
        pid: process.pid,
        updatedAt: new Date().toISOString(),
        servers: hub.status(),
        ...(lastReload === undefined ? {} : { lastReload: reloadReport(lastReload, hub) }),
        ...(lastRefusedReload === undefined ? {} : { lastRefusedReload }),
        ...(closingSince === undefined ? {} : { closing: closingSince }),
      });
    } catch (err) {
      if (!failing)
        logger.warn(
          { err: storeProblem(err) },
          `[mcp] could not write the status file (${storeProblem(err)}); it is tried again every ${STATUS_RETRY_MS / 1000} s (said once until it is written)`,
        );
      failing = true;
      if (!stopped) retry = setTimeout(publish, STATUS_RETRY_MS).unref();
      return;
    }
    if (failing) logger.info("[mcp] the status file is written again");
    failing = false;
  };
  const hub: McpHub = new McpHub({
    servers: options.servers,
    cacheDir: paths.mcpCache,
    scope: () => secretScope(paths, options.env),
    logger,
    approvals: policyApprovals(options.approvals, logger),
    runner: agentSampler(options.runner),
    interactive: false,
    // Imported at the first connect of a server with `auth: oauth`: a gateway without one loads none of the
    // OAuth client (the MCP SDK's auth, oauth4webapi, svc's login and token code).
    oauthProviderFor:
      options.oauthProviderFor ??
      ((server, entry, { interactive }) =>
        import("../oauth/provider.js").then(({ oauthProviderFor }) =>
          oauthProviderFor(server, entry, { interactive, paths, logger }),
        )),
    onStatus: publish,
    ...(options.groups === undefined
      ? {}
      : {
          serverGroup: (server: string) =>
            toolGroupNote(options.groups as ProcessGroups, `mcp:${server}`, paths.profile),
        }),
    ...(options.hiddenValues === undefined ? {} : { hiddenValues: options.hiddenValues }),
    ...(options.metrics === undefined ? {} : { onToolCall: options.metrics.toolCall }),
    ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
    ...(options.system === undefined ? {} : { system: options.system }),
    // A named profile's hub shares the root system with the default one: its actors are named apart.
    ...(paths.profile === undefined ? {} : { actorPrefix: `mcp@${paths.profile}:` }),
    stopping: options.stopping,
  });
  hub.start();
  const count = Object.keys(options.servers).length;
  if (count > 0)
    logger.info(
      `[mcp] ${count} server${count === 1 ? "" : "s"}${inProfile(paths.profile)}: ${serverNames(options.servers).join(", ")}`,
    );
  publish();
  const reload = async (servers: McpServers, closing: boolean) => {
    // Stamped with when this reload began, after the config read its SIGHUP asked for: a reload still
    // stopping servers when a later SIGHUP came ends after it, and `svc mcp reload` must not take it for
    // that signal's answer. Reloads replaced by a later one end with its summary, in any order: the last
    // of them to end is stamped with when the newest began (a begin time, never a time kept from before a
    // step of the system clock). A close is reported `closed` when the servers it ends with are none: one
    // replaced by a later reload (the profile bound again) ends with that reload's servers.
    const at = new Date().toISOString();
    reloading += 1;
    newestBegun = at;
    // A close is published as it begins, since it may take seconds (a server slow to stop): the gateway reloads
    // the profile no more, and `svc mcp reload` waits for no report of it. A reload taking the profile back
    // (bound again) ends that, as does the close's own report.
    const wasClosing = closingSince !== undefined;
    closingSince = closing ? at : undefined;
    if (closing || wasClosing) publish();
    const summary = await hub.reload(servers).finally(() => {
      reloading -= 1;
    });
    const closed = closing && configuresNone(summary);
    if (closing && closingSince === at) closingSince = undefined;
    lastReload = { ...summary, at: reloading === 0 ? newestBegun : at, ...(closed ? { closed: true } : {}) };
    publish();
    return summary;
  };
  return {
    hub,
    reload: (servers) => reload(servers, false),
    close: () => reload({}, true),
    reloadRefused(why) {
      // A reload still running (stopping servers) reports after this refusal: `svc mcp reload` waits for it.
      lastRefusedReload = {
        at: new Date().toISOString(),
        why,
        ...(reloading > 0 ? { underway: newestBegun } : {}),
      };
      publish();
    },
    async stop() {
      await hub.stop();
      stopped = true;
      publish();
      clearTimeout(retry);
    },
  };
}
