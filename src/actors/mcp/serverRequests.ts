import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import type { Logger } from "../../io/log.js";
import { InvalidParamsError } from "../../io/mcp/invalidParams.js";
import type { SessionHandlers } from "../../io/mcp/session.js";
import { RunEnded } from "../agent/runner.js";
import { type ApprovalSurface, defaultsAnswer, type ElicitationRequest } from "./approvals.js";

/**
 * Answers a sampling request with the gateway's agent runner (and, from a model runner, the model it used
 * and whether the answer was cut at the token limit or by the endpoint itself).
 */
export type SamplingRunner = (
  request: { server: string; prompt: string; systemPrompt?: string; maxTokens: number; model?: string },
  signal: AbortSignal,
) => Promise<
  | string
  | {
      readonly text: string;
      readonly model?: string;
      /** `endTurn`, `maxTokens`, or the endpoint's own reason for an answer it cut off (MCP's is an open string). */
      readonly stopReason?: string;
    }
>;

function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) =>
      b && typeof b === "object" && (b as { type?: string }).type === "text"
        ? String((b as { text?: unknown }).text)
        : "[non-text content]",
    )
    .join("\n");
}

/** Flattens the conversation into one prompt for a text runner: `user: ...` / `assistant: ...` lines. */
export function samplingPrompt(params: CreateMessageRequest["params"]): string {
  return params.messages.map((m) => `${m.role}: ${textOf(m.content)}`).join("\n\n");
}

/**
 * Resolves with `fallback` when `ms` passes or `signal` aborts first. `ended` gives the reason `work`'s
 * signal is aborted with, when it passed its time or `outer` aborted (default: none of its own).
 */
function within<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  outer: AbortSignal,
  fallback: () => T,
  ended: { timedOut?: () => unknown; canceled?: () => unknown } = {},
): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort(ended.canceled?.());
  outer.addEventListener("abort", abort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(fallback());
      } catch (err) {
        reject(err);
      }
      controller.abort(ended.timedOut?.());
    }, ms);
  });
  return Promise.race([work(controller.signal), timeout]).finally(() => {
    clearTimeout(timer);
    outer.removeEventListener("abort", abort);
  });
}

/** `elicitation.unattended: defaults` with nobody at a terminal: the form's defaults, or decline naming what lacks one. */
function answerWithDefaults(
  request: ElicitationRequest,
  approvals: ApprovalSurface,
  logger: Logger,
): ElicitResult {
  const { server } = request;
  const answer = defaultsAnswer(request.requestedSchema);
  if (answer.action === "accept") {
    logger.info(
      { server, decision: "accept", fields: Object.keys(answer.content) },
      `[mcp] elicitation from ${server}: accepted with the form's defaults (elicitation.unattended: defaults)`,
    );
    return { action: "accept", content: answer.content };
  }
  const why = `elicitation from ${server}: declined — required fields without a default: ${answer.missing.join(", ")} (elicitation.unattended: defaults)`;
  logger.info({ server, decision: "decline", missing: answer.missing }, `[mcp] ${why}`);
  approvals.notice?.(why);
  return { action: "decline" };
}

export interface ServerRequestDeps {
  readonly server: string;
  readonly entry: McpServerEntry;
  readonly approvals: ApprovalSurface;
  readonly runner?: SamplingRunner;
  readonly logger: Logger;
  /** What the text a server gets for a failed sampling run calls `logger`'s log (default `the gateway's log`). */
  readonly logName?: string;
  /** The clock the sampling window is counted on (default `performance.now`, never set). */
  readonly now?: () => number;
  /**
   * The times of the server's sampling requests in the last minute, kept by its runtime across connects:
   * a reconnect (a crashed or recycled process, a dropped session) does not start the window over.
   */
  readonly samplingTimes?: number[];
  /**
   * Aborted when the gateway's stop begins: a sampling request ended after that (its connection closed by
   * the stop, or canceled by its server) is said ended by the stop.
   */
  readonly stopping?: AbortSignal | undefined;
}

/**
 * Handlers for server-initiated requests. Sampling is advertised only with `sampling.enabled`
 * and a runner; elicitation unless `elicitation.enabled: false`. URL-mode elicitation is always declined;
 * a form goes to the approval surface and is cancelled after `elicitation.timeout`, unless nobody is at a
 * terminal and `elicitation.unattended` is `defaults`: then the form's defaults answer it.
 */
export function serverRequestHandlers(deps: ServerRequestDeps): SessionHandlers {
  const { entry, server, logger, logName = "the gateway's log" } = deps;
  // The sampling window is counted on a clock that is never set: the system clock set back an hour kept
  // every request of a spent minute "in the last minute", refusing sampling for the hour.
  const now = deps.now ?? (() => performance.now());
  const handlers: SessionHandlers = {};
  const runner = deps.runner;
  if (entry.sampling.enabled && runner !== undefined) {
    const recent = deps.samplingTimes ?? [];
    const settings = entry.sampling;
    handlers.sampling = async (params, signal): Promise<CreateMessageResult> => {
      // No model samples fewer than one token (the APIs refuse max_tokens 0): the server's request is at
      // fault, not svc's agent settings, and it takes nothing from the server's per-minute budget.
      if (params.maxTokens < 1)
        throw new InvalidParamsError(
          `Invalid sampling request: maxTokens must be at least 1, got ${params.maxTokens}`,
        );
      const at = now();
      while (recent.length > 0 && (recent[0] as number) <= at - 60_000) recent.shift();
      if (recent.length >= settings.max_requests_per_minute) {
        logger.warn(
          { server },
          `[mcp] sampling request from ${server} refused: over sampling.max_requests_per_minute`,
        );
        throw new Error(`sampling rate limit reached (${settings.max_requests_per_minute} per minute)`);
      }
      recent.push(at);
      const maxTokens = Math.min(params.maxTokens, settings.max_tokens);
      const request = {
        server,
        prompt: samplingPrompt(params),
        maxTokens,
        ...(params.systemPrompt === undefined ? {} : { systemPrompt: params.systemPrompt }),
        ...(settings.model === undefined ? {} : { model: settings.model }),
      };
      logger.info({ server, maxTokens }, `[mcp] sampling request from ${server}`);
      const answer = await within(
        (s) =>
          runner(request, s).catch((err: unknown) => {
            if (s.aborted) throw err;
            // The model endpoint's address and answer are the gateway's business, not the server's (a
            // `trust: untrusted` one among them): they are logged, at WARN since the `[agent]` line of
            // this sampling run is INFO. The runners scrub their failures of the key and other secrets.
            logger.warn(
              { server, sampling: "failed" },
              `[mcp] ${server}: sampling failed: ${err instanceof Error ? err.message : String(err)}`,
            );
            throw new Error(`sampling failed: the model run failed (${logName} says why)`, { cause: err });
          }),
        settings.timeout * 1000,
        signal,
        () => {
          throw new Error(`sampling timed out after ${settings.timeout} s`);
        },
        // What the runner's record and log line say of a run ended so; one ended by the gateway's stop
        // carries no RunEnded, and says so (`the gateway stopped during the run`), as other runs do.
        {
          timedOut: () =>
            new RunEnded(
              `sampling timed out after ${settings.timeout} s: mcp_servers.${server}.sampling.timeout`,
            ),
          canceled: () =>
            deps.stopping?.aborted === true
              ? undefined
              : new RunEnded(`mcp_servers.${server} canceled its sampling request, or its connection closed`),
        },
      );
      const text = typeof answer === "string" ? answer : answer.text;
      const usedModel = typeof answer === "string" ? undefined : answer.model;
      return {
        model: usedModel ?? settings.model ?? "svc-agent",
        role: "assistant",
        content: { type: "text", text },
        // A model that stopped at maxTokens says so, as does an answer the endpoint cut off (its own reason): the
        // server may ask again for the rest.
        stopReason: (typeof answer === "string" ? undefined : answer.stopReason) ?? "endTurn",
      };
    };
  }
  if (entry.elicitation.enabled) {
    const timeoutMs = entry.elicitation.timeout * 1000;
    handlers.elicitation = async (params: ElicitRequest["params"], signal): Promise<ElicitResult> => {
      if (params.mode === "url") {
        logger.info({ server }, `[mcp] URL-mode elicitation from ${server} declined`);
        return { action: "decline" };
      }
      const request = { server, message: params.message, requestedSchema: params.requestedSchema };
      if (entry.elicitation.unattended === "defaults" && deps.approvals.attended?.() !== true)
        return answerWithDefaults(request, deps.approvals, logger);
      return within(
        (s) => deps.approvals.elicit(request, s),
        timeoutMs,
        signal,
        () => {
          logger.info(
            { server },
            `[mcp] elicitation from ${server} timed out after ${entry.elicitation.timeout} s`,
          );
          return { action: "cancel" } as ElicitResult;
        },
      );
    };
  }
  return handlers;
}
