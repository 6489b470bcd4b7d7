import { constants } from "node:os";
import type { McpEndpointHost } from "../../agent/mcpEndpoint/index.js";
import type { AgentTool, ToolContext } from "../../agent/tools/tool.js";
import type { UnofferedTools } from "../../agent/unofferedTools.js";
import { describe } from "../../config/describe.js";
import { givenBy } from "../../config/givenValues.js";
import { namedProfile } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { isPlaceholderKey, scrub } from "../../io/credentials.js";
import { envValue } from "../../io/envValue.js";
import { commandLineSecrets } from "../../io/mcp/entrySecrets.js";
import { runProcess } from "../../io/process.js";
import type { ProcessGroups } from "../../io/processGroups.js";
import { stderrTail } from "../../io/stderrTail.js";
import { withSkill } from "./echo.js";
import type { AgentRequest, AgentRunner } from "./runner.js";

/** MCP access for command runs: the tools a run may use, served to it at `SVC_MCP_URL` (docs/agent-tools.md). */
export interface CommandRunTools {
  readonly endpoint: Pick<McpEndpointHost, "openRunEndpoint">;
  /**
   * The tools this run may use (toolsets and trust applied), the context they run with, and why a call
   * names a tool of a selected MCP server the run was not offered (it was not connected when the run began).
   * `scrubbed` hides the run's secrets in what it logs of those servers.
   */
  forRun(
    request: AgentRequest,
    signal: AbortSignal,
    scrubbed: (text: string) => string,
  ): Promise<{
    readonly tools: readonly AgentTool[];
    readonly context: ToolContext;
    readonly unoffered?: UnofferedTools;
  }>;
}

export interface CommandRunnerOptions {
  readonly argv: readonly string[];
  readonly timeoutMs: number;
  /** Base environment; defaults to the process environment without WEBHOOK_SECRET. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Values no variable of the run's environment may hold: the webhook secrets (`webhookSecretValues`), so
   * `secret: ${GH_SECRET}` does not hand GH_SECRET to an agent that reads untrusted payloads. Read at each
   * run's start (a subscription made since has its secret hidden too).
   */
  readonly hiddenValues?: () => readonly string[];
  /**
   * The `.env` the argv's `${VAR}`s were taken from: its values the argv holds are hidden, with the argv's
   * other credentials (`commandLineSecrets`), in the message of a run that failed quoting them.
   */
  readonly dotenv?: Readonly<Record<string, string>>;
  /**
   * Every credential svc has loaded (`loadedCredentials`, and what the MCP servers send, as each connect renders
   * them): hidden in the reply and in a failed run's message, read once the command has ended (a named profile's
   * hub renders its servers during its first run; a token a reconnect replaced during the run is still in it, the
   * gateway holds it for the run). The environment keeps them: an agent may need `GH_TOKEN` for its work.
   */
  readonly credentials?: () => readonly string[];
  /** When given, each run gets `SVC_MCP_URL` and `SVC_MCP_TOKEN` for its tools, valid for that run only. */
  readonly tools?: CommandRunTools;
  /** Notes each run's process group while it runs (the gateway's `$SVC_HOME/state/agents`). */
  readonly groups?: ProcessGroups;
}

/** The shortest part of a secret a variable is hidden for holding (`secret: ${PART1}${PART2}`, `pre-${TAIL}`). */
const MIN_SECRET_PART = 8;

/** Whether `value` is one of the `hidden` values, or a part of one long enough to matter. */
function holdsHidden(value: string, hidden: readonly string[]): boolean {
  for (const secret of hidden)
    if (value === secret || (value.length >= MIN_SECRET_PART && secret.includes(value))) return true;
  return false;
}

function baseEnv(
  source: Readonly<Record<string, string | undefined>>,
  hidden: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && key !== "WEBHOOK_SECRET" && !holdsHidden(value, hidden)) env[key] = value;
  }
  return env;
}

async function openEndpoint(
  tools: CommandRunTools,
  request: AgentRequest,
  signal: AbortSignal,
  secrets: readonly string[],
) {
  const offered = await tools.forRun(request, signal, (text) => scrub(text, secrets));
  const why = offered.unoffered;
  // A server's last error may quote what its connect sent: scrubbed before the command gets it.
  return tools.endpoint.openRunEndpoint(
    offered.tools,
    offered.context,
    why === undefined
      ? undefined
      : (name) => {
          const reason = why(name);
          return reason === undefined ? undefined : scrub(reason, secrets);
        },
  );
}

/**
 * `provider: command` — runs `agent.command` (an argv list, no shell) with the prompt on stdin; stdout is
 * the reply. The run sees `SVC_ROUTE`, `SVC_EVENT` (empty when none), `SVC_DELIVERY_ID` and
 * `SVC_TOOLSETS` (the run's toolsets, comma-separated: the route's `toolsets` or the `svc-webhook`
 * default), so the operator's agent can enforce what the route allows the run. With `tools`, it also
 * sees `SVC_MCP_URL` and `SVC_MCP_TOKEN`: a loopback MCP endpoint with the run's tools, closed when the
 * command ends.
 */
/**
 * A cron job's run on its schedule or by `svc cron run` (its route `cron:<job>`): not journaled — its
 * job's next_run moved on before it started — so a start after a SIGKILL does not run it again.
 * A run fired by a webhook event (`webhook:<route>:<id>`) is journaled and runs again.
 */
function scheduledCronRun(request: { readonly route: string; readonly event?: string }): boolean {
  return request.route.startsWith("cron:") && (request.event === "schedule" || request.event === "manual");
}

/** A scheduled cron run's name for its group's note, with its named profile (the start's line names both). */
function notedRun(request: { readonly route: string; readonly profile: string | undefined }) {
  const profile = namedProfile(request.profile);
  return { notRunAgain: request.route, ...(profile === undefined ? {} : { notRunAgainProfile: profile }) };
}

/**
 * An agent command that a signal ended (not svc's timeout or a stop past the drain), or that exited with
 * the code a shell gives for that signal (128 + its number: a script that traps TERM, cleans up and exits 143).
 */
export class AgentCommandKilled extends SvcError {
  constructor(
    message: string,
    readonly signal: NodeJS.Signals,
  ) {
    super("agent_failed", message);
  }
}

/** The signals that stop the gateway: one of them ending an agent may be the gateway's own stop, sent to all. */
const STOP_SIGNALS: ReadonlySet<string> = new Set(["SIGTERM", "SIGINT", "SIGQUIT"]);

/** The signal an exit code of 128 + N reports (143: SIGTERM), if it names one. */
function signalOfExitCode(code: number | undefined): NodeJS.Signals | undefined {
  if (code === undefined || code <= 128) return undefined;
  const number = code - 128;
  const names = Object.entries(constants.signals) as Array<[NodeJS.Signals, number]>;
  return names.find(([, value]) => value === number)?.[0];
}

/** Whether `err` is an agent command ended by one of the gateway's stop signals (or exiting as one does). */
export function killedByStopSignal(err: unknown): boolean {
  return err instanceof AgentCommandKilled && STOP_SIGNALS.has(err.signal);
}

export function commandRunner(options: CommandRunnerOptions): AgentRunner {
  const [file, ...args] = options.argv;
  if (file === undefined)
    throw new SvcError("config_invalid", "agent.command: empty — give [executable, args...]");
  const argvSecrets = commandLineSecrets(options.argv, options.dotenv);
  // A program a `${VAR}` gave is named as config.yaml writes it when it cannot be started (one nothing set is
  // that text itself, and named as run).
  const writtenAs = givenBy(options.argv, 0);
  const given = writtenAs === undefined || writtenAs.text === file ? undefined : writtenAs;
  // Every run starts a process: load execa now rather than delay the first run by its load.
  void import("execa");
  return {
    async run(request, signal) {
      const hidden = options.hiddenValues?.() ?? [];
      const env = baseEnv(options.env ?? process.env, hidden);
      // A command that fails may quote its own command line or the webhook secrets on stderr (a CLI refusing
      // its `--api-key`): what the failure's message carries into the log, the history and the run journal.
      // Frozen: each text of the run scrubbed with it finds its scrubber by the list, not by a key of them all.
      const secrets = Object.freeze([...argvSecrets, ...hidden]);
      const endpoint =
        options.tools === undefined ? undefined : await openEndpoint(options.tools, request, signal, secrets);
      const mcpEnv =
        endpoint === undefined ? {} : { SVC_MCP_URL: endpoint.url, SVC_MCP_TOKEN: endpoint.token };
      const result = await runProcess({
        file,
        args,
        input: request.skill === undefined ? request.prompt : withSkill(request.skill, request.prompt),
        env: {
          ...env,
          SVC_ROUTE: request.route,
          SVC_EVENT: envValue(request.event),
          SVC_DELIVERY_ID: request.deliveryId,
          SVC_TOOLSETS: request.toolsets.join(","),
          ...mcpEnv,
        },
        timeoutMs: options.timeoutMs,
        signal,
        ...(options.groups === undefined ? {} : { groups: options.groups }),
        ...(scheduledCronRun(request) ? notedRun(request) : {}),
        ...(given === undefined ? {} : { hidden: describe(given) }),
      }).finally(() => endpoint?.close());
      const credentials = options.credentials?.() ?? [];
      if (!result.ok) {
        // Its stderr then tells only of the pipe svc closed (a crash on EPIPE), not why it wrote so much.
        if (result.stdoutOver !== undefined)
          throw new SvcError(
            "agent_failed",
            `agent command's standard output passed ${result.stdoutOver} — the command was stopped; nothing was delivered`,
          );
        const hiddenInError = [...credentials, ...secrets];
        // Its last lines, a Node.js script's stack of frames and version line left out, so its error line is
        // kept; scrubbed before they are cut to their last characters, which could keep half a secret.
        const detail = stderrTail(scrub(result.stderr, hiddenInError));
        // Named as a model run's timeout is, so the message says which setting stopped it.
        const why = result.timedOut
          ? `was stopped: the run took longer than agent.timeout_seconds (${options.timeoutMs / 1000} s)`
          : result.why;
        const message = scrub(`agent command ${why}${detail ? `: ${detail}` : ""}`, hiddenInError);
        const killedBy = result.killedBy ?? signalOfExitCode(result.exitCode);
        throw killedBy === undefined
          ? new SvcError("agent_failed", message)
          : new AgentCommandKilled(message, killedBy);
      }
      // A reply repeating one (the agent read ~/.svc/.env as a payload told it to) must not deliver it; a short
      // word is left alone there, as a model run leaves a placeholder key, so the agent's words are not rewritten.
      const replySecrets = [...credentials, ...secrets.filter((secret) => !isPlaceholderKey(secret))];
      return { text: scrub(result.stdout.replace(/\n$/, ""), replySecrets) };
    },
  };
}
