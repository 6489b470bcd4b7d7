import type { McpEndpointHost } from "../../agent/mcpEndpoint/index.js";
import type { McpToolSource } from "../../agent/mcpTools.js";
import type { ModelRunnerDeps } from "../../agent/modelRunner.js";
import type { Sleep } from "../../agent/retry.js";
import {
  type RunToolsDeps,
  type RunToolsReports,
  runContext,
  runTools,
  unofferedEndpointTools,
} from "../../agent/runTools.js";
import { downServersLine, stillConnectingLine } from "../../agent/serversWithoutTools.js";
import { builtinTools } from "../../agent/tools/index.js";
import { UnaskedServerWarnings } from "../../agent/unaskedServerWarnings.js";
import type { UnofferedTools } from "../../agent/unofferedTools.js";
import { describe } from "../../config/describe.js";
import { givenBy, keepGiven } from "../../config/givenValues.js";
import { DEFAULT_PROFILE } from "../../config/paths.js";
import type { AgentSettings } from "../../config/sections/agent.js";
import { TOOLSETS_WITHOUT_TOOLS, type ToolsSettings, toolsSchema } from "../../config/sections/tools.js";
import { RunFailedAtStop, RunKeptForRestart } from "../../errors.js";
import { combinedSecrets } from "../../io/credentials.js";
import { type Logger, silentLogger } from "../../io/log.js";
import { modelAgentNotLoaded } from "../../io/openFiles.js";
import type { ProcessGroups } from "../../io/processGroups.js";
import type { RunToRecord } from "../../io/sessions/runJournal.js";
import type { Deliverer } from "../deliver.js";
import { keptReply, type QueuedRun, type RunExecutor } from "../runs.js";
import { commandRunner, killedByStopSignal } from "./command.js";
import { echoRunner } from "./echo.js";
import { failureNotice } from "./failureNotice.js";
import {
  type AgentReply,
  type AgentRequest,
  type AgentRunner,
  DEFAULT_WEBHOOK_TOOLSETS,
  NO_MCP,
} from "./runner.js";
import { findFirstSkill } from "./skills.js";

export type { AgentReply, AgentRequest, AgentRunner } from "./runner.js";

/** What a model runner may use besides its settings (all optional: `svc cron run` has no MCP hub). */
export interface RunnerDeps {
  readonly logger?: Logger;
  /** The gateway's MCP hub; a getter, since the hub is started after the runner. */
  readonly mcp?: (profile: string | undefined) => McpToolSource | undefined;
  /** `$SVC_HOME/workspaces`. */
  readonly workspacesDir?: string;
  /** Settings handed to the built-in toolsets (`tools:`); their defaults when absent. */
  readonly toolSettings?: ToolsSettings;
  /** The gateway's loopback MCP endpoint: command runs get `SVC_MCP_URL` and `SVC_MCP_TOKEN` from it. */
  readonly mcpEndpoint?: Pick<McpEndpointHost, "openRunEndpoint">;
  /** Where no MCP hub runs (`svc cron run`): why a run is not offered a configured MCP server's tools. */
  readonly noMcpHub?: UnofferedTools;
  readonly sleep?: Sleep;
  /** The clock run and tool call times are measured on (`Clock.elapsed`); `performance.now` by default. */
  readonly elapsed?: () => number;
  /** Where a `command` run's process group is noted while it runs. */
  readonly groups?: ProcessGroups;
  /**
   * The webhook secrets (`webhookSecretValues`, and the subscriptions' of the moment): kept out of a `command`
   * run's environment, and hidden in a model run's tool results and reply. Read at each run's start.
   */
  readonly hiddenValues?: () => readonly string[];
  /** The `.env` of `${VAR}`s in `agent.command`: the values it put there never show in a failed run's message. */
  readonly dotenv?: Readonly<Record<string, string>>;
  /**
   * Every credential svc has loaded (`loadedCredentials`, and what the MCP servers send, as each connect renders
   * them): hidden in a run's reply, as the webhook secrets are. Read as each of a run's texts is hidden (a named
   * profile's hub renders its servers during the profile's first run, a server reconnected during a run sends a
   * new token); the same frozen list while none changed.
   */
  readonly credentials?: () => readonly string[];
}

/** `tools.web_search.api_key`, as a list of the secrets to hide (empty without one). */
export const webSearchKey = (tools: ToolsSettings): string[] =>
  tools.web_search?.api_key === undefined ? [] : [tools.web_search.api_key];

type ModelRunnerModule = typeof import("../../agent/modelRunner.js");
let modelRunnerModule: Promise<ModelRunnerModule> | undefined;

/**
 * The model runner's module (the AI SDK and its providers), loaded once. Node keeps a module that failed to
 * load failed for the life of the process: at the limit on open files every run then failed with `EMFILE: too
 * many open files, open '…/modelRunner-….js'`, which said neither the limit nor how to raise it, nor that it
 * lasts until a restart.
 */
function loadModelRunner(): Promise<ModelRunnerModule> {
  modelRunnerModule ??= import("../../agent/modelRunner.js").catch(modelAgentNotLoaded);
  return modelRunnerModule;
}

/**
 * Loads the model runner's module now, in the background, for a gateway whose agent is a model's (at its
 * start, and at a reload that makes it one), with the package its requests go through (undici): its runs then
 * open no file to load them, also when the gateway is at its limit on open files by then. Resolves once loaded, or failed (that failure is the runs' to say).
 */
export function preloadModelRunner(agent: AgentSettings): Promise<void> {
  if (agent.provider !== "openai" && agent.provider !== "anthropic") return Promise.resolve();
  return loadModelRunner().then(
    (m) => m.warmModelPool(),
    () => undefined,
  );
}

/**
 * The model runner, made at the first run: the AI SDK and its providers take about a third of a second
 * to load, which a gateway answering with echo or a command, or a CLI command, should not pay.
 */
function lazyModelRunner(deps: ModelRunnerDeps): AgentRunner {
  let runner: Promise<AgentRunner> | undefined;
  return {
    async run(request, signal) {
      runner ??= loadModelRunner().then((m) => m.modelRunner(deps));
      return (await runner).run(request, signal);
    },
  };
}

/**
 * A `command` run's WARNs for the MCP servers it selected and goes on without, as a model run's (modelRunner):
 * still connecting when the wait ended, or down with none of their tools registered.
 */
function withoutToolsWarnings(
  deps: RunnerDeps,
  request: AgentRequest,
  scrubbed: (text: string) => string,
): RunToolsReports {
  const logger = deps.logger ?? silentLogger();
  const fields = { route: request.route, delivery_id: request.deliveryId };
  return {
    onGaveUp: (_, warning, waitedMs) => {
      if (warning.servers.length > 0)
        logger.warn(fields, stillConnectingLine(request.route, warning.servers, waitedMs, warning.unasked));
    },
    onDown: (_, warning) => {
      if (warning.servers.length > 0)
        logger.warn(
          fields,
          downServersLine(
            request.route,
            warning.servers.map((s) => (s.error === undefined ? s : { ...s, error: scrubbed(s.error) })),
            warning.unasked,
          ),
        );
    },
  };
}

/** The runner the `agent:` section chooses. */
export function createRunner(agent: AgentSettings, deps: RunnerDeps = {}): AgentRunner {
  const toolSettings = deps.toolSettings ?? toolsSchema.parse(undefined);
  const toolDeps: RunToolsDeps = {
    builtins: (toolsets) =>
      builtinTools(toolsets, toolSettings, deps.groups === undefined ? {} : { groups: deps.groups }),
    unaskedWarnings: new UnaskedServerWarnings(),
    ...(deps.mcp === undefined ? {} : { mcp: deps.mcp }),
    ...(deps.workspacesDir === undefined ? {} : { workspacesDir: deps.workspacesDir }),
    ...(deps.noMcpHub === undefined ? {} : { noMcpHub: deps.noMcpHub }),
  };
  if (agent.provider === "command" && agent.command !== undefined) {
    const endpoint = deps.mcpEndpoint;
    return commandRunner({
      argv: agent.command,
      timeoutMs: agent.timeout_seconds * 1000,
      ...(deps.groups === undefined ? {} : { groups: deps.groups }),
      ...(deps.hiddenValues === undefined ? {} : { hiddenValues: deps.hiddenValues }),
      ...(deps.dotenv === undefined ? {} : { dotenv: deps.dotenv }),
      ...(deps.credentials === undefined ? {} : { credentials: deps.credentials }),
      ...(endpoint === undefined
        ? {}
        : {
            tools: {
              endpoint,
              forRun: async (request, signal, scrubbed) => {
                const tools = await runTools(
                  toolDeps,
                  request,
                  signal,
                  withoutToolsWarnings(deps, request, scrubbed),
                );
                return {
                  tools,
                  context: runContext(toolDeps, request, signal),
                  unoffered: unofferedEndpointTools(
                    toolDeps,
                    request,
                    tools,
                    toolSettings.web_search !== undefined,
                  ),
                };
              },
            },
          }),
    });
  }
  if ((agent.provider === "openai" || agent.provider === "anthropic") && agent.model !== undefined) {
    const searchKey = webSearchKey(toolSettings);
    const credentials = deps.credentials;
    let credentialsSeen: readonly string[] | undefined;
    let runnerSecrets: readonly string[] = searchKey;
    const runnerSecretsNow = () => {
      const now = credentials?.();
      if (now !== undefined && now !== credentialsSeen) {
        credentialsSeen = now;
        runnerSecrets = [...searchKey, ...now];
      }
      return runnerSecrets;
    };
    return lazyModelRunner({
      // With what load noted of the values a `${VAR}` gave (a model or base_url is named as the file writes it).
      settings: keepGiven(agent, { ...agent, provider: agent.provider, model: agent.model }),
      logger: deps.logger ?? silentLogger(),
      ...toolDeps,
      hiddenValues: combinedSecrets(runnerSecretsNow, deps.hiddenValues),
      ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
      ...(deps.elapsed === undefined ? {} : { elapsed: deps.elapsed }),
    });
  }
  return echoRunner(deps.credentials);
}

/** The platform toolset name; listing it in a route's `toolsets` brings the default set back in. */
export const WEBHOOK_TOOLSET = "svc-webhook";

/** Built-in toolsets a run may name; with MCP server names and `no_mcp` (unknown names are dropped and reported). */
export const KNOWN_TOOLSETS: ReadonlySet<string> = new Set([
  ...DEFAULT_WEBHOOK_TOOLSETS,
  "web",
  "terminal",
  "file",
  ...TOOLSETS_WITHOUT_TOOLS,
  "mcp",
  NO_MCP,
]);

/**
 * A route's `toolsets` replace the default `svc-webhook` set; names of configured MCP
 * servers (`isMcpServer`) are kept too: they pick which servers' tools the run is offered (docs/agent.md).
 * With `lackedServers`, the other names are servers this gateway lacks (a route as another instance accepted
 * it): a list left naming none of this gateway's servers offers no MCP tools rather than every server's.
 */
export function runToolsets(
  routeToolsets: readonly string[] | undefined,
  onDropped?: (name: string) => void,
  isMcpServer: (name: string) => boolean = () => false,
  lackedServers = false,
): readonly string[] {
  if (routeToolsets === undefined) return DEFAULT_WEBHOOK_TOOLSETS;
  const kept = new Set<string>();
  let namesServer = false;
  let dropped = false;
  for (const name of routeToolsets) {
    if (name === WEBHOOK_TOOLSET) for (const tool of DEFAULT_WEBHOOK_TOOLSETS) kept.add(tool);
    else if (KNOWN_TOOLSETS.has(name)) kept.add(name);
    else if (isMcpServer(name)) {
      kept.add(name);
      namesServer = true;
    } else {
      dropped = true;
      onDropped?.(name);
    }
  }
  if (lackedServers && dropped && !namesServer) kept.add(NO_MCP);
  return [...kept];
}

export interface RunExecutorDeps {
  runner(): AgentRunner;
  readonly deliverer: Deliverer;
  readonly logger: Logger;
  /** The `skills/` directory of a profile. */
  skillsDir(profile: string): string;
  /** Records each run as its own session `webhook:<route>:<delivery_id>` (see io/sessions/runJournal.ts). */
  recordRun?(profile: string, run: RunToRecord): void;
  /** Names of the configured MCP servers (a route's `toolsets` may name them). */
  mcpServers?(): readonly string[];
  /**
   * Whether the gateway's stop began within a moment of now (waiting that moment for it): asked when a stop
   * signal ended the agent command, which then was the gateway's own stop reaching its agents too.
   */
  stopNear?(): Promise<boolean>;
  /**
   * `<route>\u0000<toolset>` of the unknown toolset names the gateway's loads already warned about (with
   * the likely spelling; `toolsetsWarnedAtLoad`): a run does not say them again. Names no load warned
   * about are said at their route's first run.
   */
  readonly warnedToolsets?: Set<string>;
}

/** One agent run for an accepted event: load the skill, run the agent, deliver the reply (even empty or `SKIP`). */
/** A run's line in its profile's run journal, once its reply is delivered or refused (no closure per run). */
function recordReply(deps: RunExecutorDeps, event: QueuedRun, reply: AgentReply): void {
  if (deps.recordRun === undefined) return;
  deps.recordRun(
    event.profile,
    reply.record === undefined
      ? { route: event.routeName, deliveryId: event.deliveryId, prompt: event.prompt, reply: reply.text }
      : {
          route: event.routeName,
          deliveryId: event.deliveryId,
          prompt: event.prompt,
          reply: reply.text,
          record: reply.record,
        },
  );
}

export function createRunExecutor(deps: RunExecutorDeps): RunExecutor {
  // Once per route and name: the route's config is the same on every run, its log need not repeat.
  const warnedToolsets = deps.warnedToolsets ?? new Set<string>();
  const warnedSkills = new Set<string>();
  return async (event, signal, slot) => {
    const { route } = event;
    // No skills listed (the common case): no file lookup and no extra await per run.
    let skill: AgentRequest["skill"];
    if (route.skills !== undefined && route.skills.length > 0) {
      const skillsDir = deps.skillsDir(event.profile);
      // A name a `${VAR}` gave (wherever the list has it) is quoted as config.yaml writes it, and no path
      // is made from it.
      const { skills } = route;
      const given = (name: string) => {
        for (const [at, listed] of skills.entries()) {
          const written = listed === name ? givenBy(skills, at) : undefined;
          if (written !== undefined) return written;
        }
        return undefined;
      };
      const found = await findFirstSkill(skillsDir, skills, (name) => given(name) !== undefined);
      skill = found.skill;
      const quoted = (name: string) => {
        const written = given(name);
        return written === undefined ? `"${name}"` : describe(written);
      };
      const instead = skill === undefined ? "" : `; loaded ${quoted(skill.name)} instead`;
      const problems = [
        ...found.refused.map(({ name, why }) => ({ name, why: `is ${why}` })),
        ...found.missing.map((name) => ({
          name,
          why:
            given(name) === undefined
              ? `not found (no ${skillsDir}/${name}/SKILL.md)`
              : `not found (no skill of the name it gives under ${skillsDir})`,
        })),
        ...found.unreadable.map(({ name, why }) => ({ name, why: `not loaded: ${why}` })),
      ];
      for (const { name, why } of problems) {
        const key = `${event.profile}\u0000${event.routeName}\u0000${name}`;
        if (warnedSkills.has(key)) continue;
        warnedSkills.add(key);
        deps.logger.warn(`[webhook] ${event.routeName}: skill ${quoted(name)} ${why}${instead}`);
      }
    }
    // No toolsets listed (the common case): the defaults, with no closure made for the run.
    const toolsets =
      route.toolsets === undefined
        ? DEFAULT_WEBHOOK_TOOLSETS
        : runToolsets(
            route.toolsets,
            (name) => {
              const key = `${event.routeName}\u0000${name}`;
              if (warnedToolsets.has(key)) return;
              warnedToolsets.add(key);
              deps.logger.warn(
                event.routeAsAccepted === true
                  ? `[webhook] ${event.routeName}: toolsets name "${name}", no MCP server of this gateway (the route is the accepting instance's) — its runs here get no tools from it`
                  : `[webhook] ${event.routeName}: unknown toolset "${name}" dropped`,
              );
            },
            (name) => deps.mcpServers?.().includes(name) === true,
            event.routeAsAccepted === true,
          );
    const profile = event.profile === DEFAULT_PROFILE ? undefined : event.profile;
    // Written out twice rather than spread: no skill key at all when there is none, and no copy per run.
    const request: AgentRequest =
      skill === undefined
        ? {
            route: event.routeName,
            event: event.event ?? "",
            deliveryId: event.deliveryId,
            prompt: event.prompt,
            toolsets,
            profile,
          }
        : {
            route: event.routeName,
            event: event.event ?? "",
            deliveryId: event.deliveryId,
            prompt: event.prompt,
            toolsets,
            profile,
            skill,
          };
    let reply: AgentReply;
    let failure: unknown;
    // Made before (kept with the shared queue's job while its delivery waited to retry): delivered as it is,
    // and a failure's notice fails the run once delivered, as it would have where the agent ran.
    const made = slot?.madeReply;
    if (made?.failed !== undefined) failure = new Error(made.failed);
    try {
      reply = made ?? (await deps.runner().run(request, signal));
    } catch (err) {
      // Ended by the stop signal the gateway got too (a systemd unit's whole cgroup, a process group):
      // kept to run again at the next start, not journaled or delivered as failed.
      if (
        !signal.aborted &&
        deps.stopNear !== undefined &&
        killedByStopSignal(err) &&
        (await deps.stopNear())
      )
        throw new RunKeptForRestart(
          `${event.routeName}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      // A model run that failed still answers where the route delivers; anything else fails as before.
      const notice = signal.aborted ? undefined : failureNotice(err, route.deliver, event.deliveryId);
      if (notice === undefined) {
        // Failed without a notice (a `command` agent that exited non-zero, was killed or timed out): the
        // journal still gets the run's line, with why. A run a stop ended is saved, not journaled.
        if (!signal.aborted)
          deps.recordRun?.(event.profile, {
            route: event.routeName,
            deliveryId: event.deliveryId,
            prompt: event.prompt,
            reply: "",
            error: err instanceof Error ? err.message : String(err),
          });
        throw err;
      }
      reply = notice;
      failure = err;
    }
    // Stopped while its agent ran (a stop past the drain timeout): an agent that answers its SIGTERM with
    // a reply has not finished its run, which is saved and runs again; delivering it would deliver twice.
    if (signal.aborted) throw signal.reason;
    // Journaled once its reply is delivered or refused: a stop during the delivery (waiting to retry) leaves
    // the run unfinished, saved to run again at the next start, and it is journaled then, once.
    slot?.replied?.(failure === undefined ? reply : keptReply(reply, failure));
    try {
      await deps.deliverer.deliver(
        {
          target: route.deliver,
          message: {
            text: reply.text,
            extra: event.extra,
            written: route.deliver_extra,
            unfilled: event.unfilled,
            route: event.routeName,
            deliveryId: event.deliveryId,
            profile: request.profile,
          },
          mode: "agent",
          mirrorToSession: route.mirror_to_session,
          // Waiting to retry, the run hands its slot back (runs of other routes go on meanwhile).
          slot,
          run: event,
        },
        signal,
      );
    } catch (err) {
      // A stop's abort goes on to the slot: the run is saved, not journaled.
      if (signal.aborted) throw failure ?? err;
      recordReply(deps, event, reply);
      // A reply the target refused is the delivery's failure (logged, counted and recorded as such by
      // the deliverer), not the run's: the run succeeded.
      if (failure === undefined) return;
      throw failure;
    }
    recordReply(deps, event, reply);
    // Logged by the run slot as a failed run. A notice delivered as the stop came (a mail some recipients got,
    // its retry for the others cut short) ended the run all the same: it is not kept to run again.
    if (failure !== undefined) throw signal.aborted ? new RunFailedAtStop(failure) : failure;
  };
}
