import { type AgentRequest, AgentRunFailure, type AgentRunner, RunEnded } from "../actors/agent/runner.js";
import { timeoutSignal } from "../clock.js";
import { givenBy } from "../config/givenValues.js";
import { type AgentSettings, modelBaseUrl } from "../config/sections/agent.js";
import { isPlaceholderKey, scrub } from "../io/credentials.js";
import type { Logger } from "../io/log.js";
import { warmModelPool } from "../io/modelFetch.js";
import { cutByEndpointBeforeAnyText } from "./endpointCut.js";
import { askAboutImage } from "./imageQuestion.js";
import { describeModelError, type GivenBaseUrl, quotedModel } from "./modelError.js";
import { unsendablePauseFailure } from "./pausedTurns.js";
import { languageModel, modelEndpoint } from "./provider.js";
import { realSleep, type Sleep, withRetryPolicy } from "./retry.js";
import { type RunOutcome, type RunRecord, runLogLine } from "./runRecord.js";
import { type RunToolsDeps, runContext, runTools, unofferedTools } from "./runTools.js";
import { sdkTools, ToolCallLog } from "./sdkTools.js";
import { downServersLine, type ServerWithoutTools, stillConnectingLine } from "./serversWithoutTools.js";
import {
  contentFilterFailure,
  cutBeforeAnyText,
  type LoopProgress,
  runToolLoop,
  thinkingOnlyFailure,
} from "./toolLoop.js";

/** Re-exported for the gateway, which warms the pool with the runner's module at its start (actors/agent). */
export { warmModelPool };

/** The reply of a run that used its last model turn on tool calls and wrote no text. */
export const maxStepsNotice = (steps: number): string =>
  `(stopped after ${steps} model ${steps === 1 ? "turn" : "turns"} without a final answer — raise agent.max_steps)`;

export interface ModelRunnerDeps extends RunToolsDeps {
  readonly settings: AgentSettings & { readonly provider: "openai" | "anthropic"; readonly model: string };
  readonly logger: Logger;
  readonly sleep?: Sleep;
  /** The clock run and tool call times are measured on (`Clock.elapsed`); `performance.now` by default. */
  readonly elapsed?: () => number;
  /**
   * The signal that ends a run after `timeout_seconds` (in ms): a real timer unless a test gives its own,
   * which it aborts at the moment it means (a real one raced the fake endpoint on a loaded machine).
   */
  readonly runTimeout?: (ms: number) => AbortSignal;
  /**
   * Secrets of svc's other than the API key (the webhook secrets, the web_search key), hidden as the key is:
   * the prompt or a tool result quoting one (a Gogs payload's `secret`, a payload that told the model to read
   * ~/.svc/.env) never reaches the model, nor the reply.
   * Read at each run's start (a subscription made since has its secret hidden too).
   */
  readonly hiddenValues?: () => readonly string[];
}

/** The run's system text: `system_prompt`, then the route's skill under a header. */
export function systemText(
  systemPrompt: string | undefined,
  skill: AgentRequest["skill"],
): string | undefined {
  const parts: string[] = [];
  if (systemPrompt !== undefined && systemPrompt.trim() !== "") parts.push(systemPrompt.trim());
  if (skill !== undefined) parts.push(`# Skill: ${skill.name}\n\n${skill.text.trimEnd()}`);
  return parts.length === 0 ? undefined : parts.join("\n\n");
}

const scrubbedText = (text: string | undefined, secrets: readonly string[]): string | undefined =>
  text === undefined ? undefined : scrub(text, secrets);

/** What a run was waiting for when its `timeout_seconds` ran out, when that is not a model turn or a tool call. */
export type TimedOutWaiting =
  /** The wait before retrying a failed model call (a 429 with a long Retry-After, a 503). */
  | {
      readonly retry: { error: unknown; waitMs: number };
      readonly secrets: ReadonlyArray<string | undefined>;
      readonly endpoint: string;
      /** `agent.base_url` when a `${VAR}` gave it (describeModelError). */
      readonly givenBase?: GivenBaseUrl | undefined;
    }
  /** The first connect of MCP servers the run is offered (a server still starting when the run began). */
  | { readonly firstConnect: readonly string[] };

/**
 * Why a run that passed `timeout_seconds` failed; when that happened while it waited to retry a failed
 * model call, or for an MCP server's first connect, that is named too: it, not a slow model, is why the
 * run did not finish.
 */
export function timeoutReason(timeoutSeconds: number, waiting?: TimedOutWaiting): string {
  const took = `the run took longer than agent.timeout_seconds (${timeoutSeconds} s)`;
  if (waiting === undefined) return took;
  if ("firstConnect" in waiting) {
    const names = waiting.firstConnect.map((name) => `"${name}"`).join(", ");
    const servers = waiting.firstConnect.length === 1 ? `MCP server ${names}` : `MCP servers ${names}`;
    return `${took} while it waited for the first connect of ${servers}, whose tools it is offered`;
  }
  const wait = `${Math.round(waiting.retry.waitMs / 100) / 10} s`;
  return `${took} while it waited ${wait} to retry a model call that failed: ${describeModelError(waiting.retry.error, waiting.secrets, waiting.endpoint, undefined, waiting.givenBase)}`;
}

/**
 * `provider: openai | anthropic` (docs/agent.md): one run = system text + the prompt, a tool loop of
 * at most `max_steps` turns over the tools the run's toolsets select, bounded by `timeout_seconds`.
 * Each run logs one INFO line and returns its record; a failure is an `AgentRunFailure` carrying it.
 */
export function modelRunner(deps: ModelRunnerDeps): AgentRunner {
  const { settings, logger } = deps;
  const elapsed = deps.elapsed ?? (() => performance.now());
  const endpoint = modelEndpoint(settings);
  // A model or base_url a `${VAR}` gave is named as config.yaml writes it in what a run says, never as the value.
  const modelGiven = givenBy(settings, "model");
  const baseWritten = givenBy(settings, "base_url");
  const givenBase: GivenBaseUrl | undefined =
    baseWritten === undefined
      ? undefined
      : { base: modelBaseUrl(settings.provider, settings.base_url), written: baseWritten };
  void warmModelPool();
  // The SDK's notes on unsupported settings go to svc's log, not to the console.
  globalThis.AI_SDK_LOG_WARNINGS = ({ warnings, provider, model }) => {
    for (const warning of warnings)
      logger.debug({ provider, model }, `[agent] model warning: ${JSON.stringify(warning)}`);
  };
  return {
    async run(request, signal) {
      const started = elapsed();
      // A placeholder key (vLLM's `EMPTY`) is no secret: hiding it would rewrite the model's words. Frozen:
      // each text of the run scrubbed with it finds its scrubber by the list, not by a key joined of them all.
      // Read at each use, a new list only when `hiddenValues` gives another: a named profile's hub renders its
      // servers during its first run, and a server that reconnects during the run (a reload, a token rotated in
      // .env) sends a new token, hidden from its first tool result on (the one it replaced stays in the list
      // while the run goes on: the gateway holds it for the run).
      let hiddenSeen: readonly string[] | undefined;
      let secretsSeen: readonly string[] = [];
      const secrets = () => {
        const hidden = deps.hiddenValues?.() ?? [];
        if (hidden === hiddenSeen) return secretsSeen;
        hiddenSeen = hidden;
        secretsSeen = Object.freeze(
          [settings.api_key, ...hidden].filter(
            (value): value is string => value !== undefined && !isPlaceholderKey(value),
          ),
        );
        return secretsSeen;
      };
      const modelId = request.model ?? settings.model;
      // The run's record (the journal) keeps an agent.model a `${VAR}` gave as config.yaml writes it
      // (`${MODEL}`); a sampling request's own model as asked for.
      const recordedModel =
        request.model === undefined && modelGiven !== undefined ? String(modelGiven.text) : modelId;
      const timeout = (deps.runTimeout ?? timeoutSignal)(settings.timeout_seconds * 1000);
      const runSignal = AbortSignal.any([signal, timeout]);
      // The model error whose retry wait is under way: a timeout during that wait names it, since the
      // endpoint's answer (a 429 with a long Retry-After, a 503) is why the run did not finish.
      let waitingAfter: { error: unknown; waitMs: number } | undefined;
      // The MCP servers whose first connect the run waited for when its timeout ran out.
      let connecting: readonly string[] | undefined;
      const sleep = deps.sleep ?? realSleep;
      const model = withRetryPolicy(languageModel(settings, modelId), {
        retries: settings.retries,
        sleep: async (ms, sleepSignal) => {
          await sleep(ms, sleepSignal);
          waitingAfter = undefined;
        },
        onRetry: (attempt, waitMs, error) => {
          waitingAfter = { error, waitMs };
          logger.warn(
            { route: request.route, delivery_id: request.deliveryId, attempt, wait_ms: waitMs },
            `[agent] ${request.route}: model call failed (${describeModelError(error, secrets(), endpoint, undefined, givenBase)}); retry ${attempt} of ${settings.retries} in ${waitMs} ms`,
          );
        },
      });
      const progress: LoopProgress = { steps: 0, inputTokens: 0, outputTokens: 0 };
      // Scrubbed as they are recorded (a tool's error, or a call the model wrote, may quote the key).
      const log = new ToolCallLog((text) => scrub(text, secrets()));
      // The selected MCP servers the run went on without, recorded with it.
      const withoutTools: ServerWithoutTools[] = [];
      const scrubbedError = (s: ServerWithoutTools): ServerWithoutTools =>
        s.error === undefined ? s : { ...s, error: scrub(s.error, secrets()) };
      const record = (outcome: RunOutcome, error?: string): RunRecord => ({
        provider: settings.provider,
        model: recordedModel,
        steps: progress.steps,
        toolCalls: log.calls,
        usage: { input: progress.inputTokens, output: progress.outputTokens },
        outcome,
        ...(error === undefined ? {} : { error }),
        ...(withoutTools.length === 0 ? {} : { mcpUnavailable: withoutTools }),
        ms: Math.round(Math.max(0, elapsed() - started)),
      });
      const modelKey = request.model === undefined ? "agent.model" : "sampling.model";
      // A sampling request's model is the server's, never one a variable gave.
      const quoted =
        request.model === undefined && modelGiven !== undefined
          ? quotedModel(modelId, modelGiven)
          : undefined;
      const shownModel = quoted ?? modelId;
      const asked = quoted === undefined ? {} : { quoted };
      const keySent = settings.api_key !== undefined && settings.api_key !== "";
      const context = runContext(deps, request, runSignal, (url, question, imageSignal) =>
        askAboutImage(
          {
            model,
            provider: settings.provider,
            modelId,
            maxTokens: settings.max_tokens,
            signal: runSignal,
            usage: (input, output) => {
              progress.inputTokens += input;
              progress.outputTokens += output;
            },
            scrubbed: (text) => scrub(text, secrets()),
            ...(quoted === undefined ? {} : { quotedModel: quoted }),
            described: (err) =>
              describeModelError(
                err,
                secrets(),
                endpoint,
                { model: modelId, modelKey, ...asked, keySent, maxTokens: settings.max_tokens, image: true },
                givenBase,
              ),
          },
          url,
          question,
          imageSignal,
        ),
      );
      try {
        const tools = await runTools(deps, request, runSignal, {
          onWait: (servers) => {
            connecting = servers;
          },
          onGaveUp: (servers, warning, waitedMs) => {
            withoutTools.push(...servers.map((server) => ({ server, state: "connecting" as const })));
            if (warning.servers.length > 0)
              logger.warn(
                { route: request.route, delivery_id: request.deliveryId },
                stillConnectingLine(request.route, warning.servers, waitedMs, warning.unasked),
              );
          },
          onDown: (servers, warning) => {
            // A server's last error may quote what its connect sent.
            withoutTools.push(...servers.map(scrubbedError));
            if (warning.servers.length > 0)
              logger.warn(
                { route: request.route, delivery_id: request.deliveryId },
                downServersLine(request.route, warning.servers.map(scrubbedError), warning.unasked),
              );
          },
        });
        if (!runSignal.aborted) connecting = undefined;
        // A server's last error may quote what its connect sent: scrubbed before the model gets it.
        const unoffered = unofferedTools(deps, request, tools);
        const result = await runToolLoop(
          {
            model,
            // What the model is sent holds no credential svc has loaded: a payload may carry one (Gogs sends
            // its route's secret in it), and a route's prompt quotes what its sender wrote.
            system: scrubbedText(systemText(settings.system_prompt, request.skill), secrets()),
            prompt: scrub(request.prompt, secrets()),
            tools: sdkTools(tools, context, log, {
              elapsed,
              scrubbed: (text) => scrub(text, secrets()),
              images: settings.provider === "anthropic" ? "native" : "described",
              safePropertyKeys: settings.provider === "anthropic",
              maxResultChars: settings.max_tool_result_chars,
              // Steps are counted as they finish: during the last allowed turn, max_steps - 1 are done.
              mayRun: () => progress.steps < settings.max_steps - 1,
            }),
            maxSteps: settings.max_steps,
            maxResultChars: settings.max_tool_result_chars,
            maxTokens: request.maxTokens ?? settings.max_tokens,
            signal: runSignal,
            log,
            unoffered: (name) => {
              const why = unoffered(name);
              return why === undefined ? undefined : scrub(why, secrets());
            },
          },
          progress,
        );
        if (result.cutToolCalls > 0 && !result.stoppedAtMaxSteps) {
          // The loop ended on a turn that asked for tools and got none: the run did not finish its work.
          const maxTokens = request.maxTokens ?? settings.max_tokens;
          const calls =
            result.cutToolCalls === 1 ? "a tool, which was" : `${result.cutToolCalls} tool calls, which were`;
          throw new AgentRunFailure(
            result.cutByEndpoint !== undefined
              ? `the model's answer was cut off by the endpoint (finish_reason ${result.cutByEndpoint}) while it asked for ${calls} not run — ask again; if it goes on, see the endpoint's documentation for that reason`
              : result.cutAtContextWindow === true
                ? `the model's answer was cut at the end of its context window (stop_reason model_context_window_exceeded) while it asked for ${calls} not run — the prompt and the tool results so far filled it, and a larger agent.max_tokens would not help: give the run less to read or use a model with a larger context window`
                : result.cutAtModelLength === true
                  ? `the model's answer was cut at agent.max_tokens (${maxTokens} tokens) or at the end of its context window (finish_reason model_length) while it asked for ${calls} not run — raise agent.max_tokens; if it was the context window, give the run less to read or use a model with a larger context window`
                  : `the model's answer was cut at agent.max_tokens (${maxTokens} tokens) while it asked for ${calls} not run — raise agent.max_tokens`,
            record("error"),
          );
        }
        if (result.filtered !== undefined)
          throw new AgentRunFailure(
            scrub(
              contentFilterFailure(settings.provider, result.filtered.reason, modelId, {
                route: request.route,
                modelKey,
                ...asked,
              }),
              secrets(),
            ),
            record("error"),
          );
        if (result.stillPaused?.unsent !== undefined && result.text.trim() === "")
          throw new AgentRunFailure(unsendablePauseFailure(result.stillPaused.unsent), record("error"));
        if (
          result.cutAtMaxTokens &&
          !result.stoppedAtMaxSteps &&
          result.text.trim() === "" &&
          request.maxTokens === undefined
        )
          // A reasoning model (DeepSeek R1, Qwen3 on Ollama, o-series, extended thinking) can spend the
          // whole limit on its reasoning: an empty reply delivered as an answer would say nothing of why.
          throw new AgentRunFailure(
            cutBeforeAnyText(
              settings.max_tokens,
              result.cutAtContextWindow === true
                ? "context_window"
                : result.cutAtModelLength === true
                  ? "either"
                  : "max_tokens",
              "the prompt and the tool results so far filled it: give the run less to read",
            ),
            record("error"),
          );
        if (result.thinkingOnly !== undefined && result.text.trim() === "")
          // Delivered, the run would answer with an empty reply as if it had one (a sampling request too).
          throw new AgentRunFailure(thinkingOnlyFailure(result.thinkingOnly), record("error"));
        if (
          result.cutByEndpoint !== undefined &&
          result.text.trim() === "" &&
          request.maxTokens === undefined
        )
          // Cut off by the endpoint itself (DeepSeek's insufficient_system_resource) before any text or thinking:
          // an empty reply delivered as an answer would say nothing of why, as vision_analyze's does not. (A
          // sampling request's server is told by the answer's stopReason, as for max_tokens.)
          throw new AgentRunFailure(cutByEndpointBeforeAnyText(result.cutByEndpoint), record("error"));
        const outcome: RunOutcome = result.stoppedAtMaxSteps ? "max_steps" : "ok";
        // A model that repeats its own key (prompt injection, a debugging answer) must not put it in the
        // delivered reply, the log line or the run journal.
        const text =
          result.stoppedAtMaxSteps && result.text.trim() === ""
            ? maxStepsNotice(settings.max_steps)
            : scrub(result.text, secrets());
        // A reply cut short is delivered as it is; the log line and the journal say so. (A sampling request's
        // server is told by the answer's stopReason instead.)
        // One the endpoint cut off itself (DeepSeek's insufficient_system_resource) is so for any run.
        const cut =
          result.cutAtMaxTokens && request.maxTokens === undefined && result.text.trim() !== ""
            ? result.cutAtContextWindow === true
              ? ("context_window" as const)
              : ("max_tokens" as const)
            : result.stillPaused !== undefined
              ? ("pause_turn" as const)
              : result.cutByEndpoint !== undefined && result.text.trim() !== ""
                ? ("endpoint" as const)
                : undefined;
        const done = {
          ...record(outcome),
          ...(cut === undefined ? {} : { cut }),
          ...(cut === "max_tokens" && result.cutAtModelLength === true
            ? { cutReason: "model_length" }
            : cut === "endpoint" && result.cutByEndpoint !== undefined
              ? { cutReason: result.cutByEndpoint }
              : {}),
          ...(cut === "pause_turn" && result.stillPaused !== undefined ? { paused: result.stillPaused } : {}),
        };
        logger.info(
          { route: request.route, delivery_id: request.deliveryId },
          runLogLine(request.route, request.deliveryId, done, shownModel),
        );
        return {
          text,
          record: done,
          answeredBy: result.modelId,
          ...(result.cutAtMaxTokens ? { cutAtMaxTokens: true } : {}),
          ...(result.cutByEndpoint === undefined ? {} : { cutByEndpoint: result.cutByEndpoint }),
        };
      } catch (err) {
        if (err instanceof AgentRunFailure) {
          const failed = record("error", err.message);
          logger.info(
            { route: request.route, delivery_id: request.deliveryId },
            runLogLine(request.route, request.deliveryId, failed, shownModel),
          );
          throw new AgentRunFailure(err.message, failed);
        }
        if (signal.aborted) {
          // Shutdown: the run is saved for the next start, as any unfinished run. A sampling request's run
          // ended by its timeout or its server says so instead (`RunEnded`).
          const aborted = record(
            "aborted",
            signal.reason instanceof RunEnded ? signal.reason.message : "the gateway stopped during the run",
          );
          logger.info(
            { route: request.route, delivery_id: request.deliveryId },
            runLogLine(request.route, request.deliveryId, aborted, shownModel),
          );
          throw err;
        }
        const why = timeout.aborted
          ? timeoutReason(
              settings.timeout_seconds,
              connecting !== undefined
                ? { firstConnect: connecting }
                : waitingAfter && { retry: waitingAfter, secrets: secrets(), endpoint, givenBase },
            )
          : describeModelError(
              err,
              secrets(),
              endpoint,
              {
                model: modelId,
                modelKey,
                ...asked,
                keySent,
                ...(request.maxTokens === undefined ? { maxTokens: settings.max_tokens } : {}),
                maxToolResultChars: settings.max_tool_result_chars,
                // A finished turn means the failing request carries tool results (the loop goes on only after
                // tools ran); a sampling request has none, and its route (`mcp:<server>`) names its server,
                // whose request is the prompt.
                route: request.route,
                ...(request.maxTokens === undefined ? { toolResultsSent: progress.steps > 0 } : {}),
              },
              givenBase,
            );
        const failed = record("error", why);
        logger.info(
          { route: request.route, delivery_id: request.deliveryId },
          runLogLine(request.route, request.deliveryId, failed, shownModel),
        );
        throw new AgentRunFailure(why, failed);
      }
    },
  };
}
