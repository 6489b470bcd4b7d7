import { generateText } from "ai";
import { cutByEndpointBeforeAnyText, endpointCutReason } from "./endpointCut.js";
import type { ProviderModel } from "./retry.js";
import {
  contentFilterFailure,
  cutAtContextWindow,
  cutAtEither,
  cutBeforeAnyText,
  cutShort,
  heldOnlyItsThinking,
  stoppedByFilter,
  type TurnEnd,
  thinkingOnlyFailure,
} from "./toolLoop.js";

/** What `vision_analyze`'s question about an image is asked with: the run's model and settings. */
export interface ImageQuestionDeps {
  /** The run's model, with its retry policy. */
  readonly model: ProviderModel;
  readonly provider: "openai" | "anthropic";
  /** The model asked for, named in a refusal. */
  readonly modelId: string;
  /** The model as the advice quotes it, when a `${VAR}` gave it (config.yaml's text). */
  readonly quotedModel?: string;
  /** `agent.max_tokens`: the answer's output limit. */
  readonly maxTokens: number;
  /** The run's signal: the question ends with the run. */
  readonly signal: AbortSignal;
  /** Told the answer's tokens, which count in the run's usage. */
  readonly usage: (input: number, output: number) => void;
  /** Hides the gateway's secrets in a failure's text. */
  readonly scrubbed: (text: string) => string;
  /**
   * A failed call in one line, as a failed run's is told (`describeModelError`): the endpoint, its status and
   * answer, and the setting to fix. The SDK's own message ("Bad Gateway") says none of them.
   */
  readonly described: (err: unknown) => string;
}

/**
 * The model's answer about the image at `url` (a `data:` URL), or an error saying why there is none. An answer
 * cut short before any text, stopped by the endpoint's safety system (a refusal), or finished with only the
 * model's thinking, is no answer, as a run's last turn is not (docs/agent.md, Answers cut short; Content
 * filters and refusals; Reasoning): the tool call fails
 * saying why, rather than the model getting nothing, or a part, as a finished answer. A text cut at
 * `max_tokens`, or cut off by the endpoint itself (`endpointCutReason`), comes with a note saying so; one the
 * endpoint cut off before any text (and with no thinking) fails naming its reason. A call that failed says what the endpoint answered, as a failed
 * run does (docs/agent.md, A run that fails).
 */
export async function askAboutImage(
  deps: ImageQuestionDeps,
  url: string,
  question: string,
  signal: AbortSignal,
): Promise<string> {
  const ended = AbortSignal.any([signal, deps.signal]);
  let answer: Awaited<ReturnType<typeof generateText>>;
  try {
    answer = await generateText({
      model: deps.model,
      maxRetries: 0,
      maxOutputTokens: deps.maxTokens,
      abortSignal: ended,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: question },
            { type: "image", image: url },
          ],
        },
      ],
    });
  } catch (err) {
    // Ended with the call or the run (its timeout, the gateway's stop): that, not the endpoint, is why.
    if (ended.aborted) throw err;
    throw new Error(deps.described(err), { cause: err });
  }
  // The image's model call is part of the run: its tokens count in the run's usage, answer or not.
  deps.usage(answer.usage.inputTokens ?? 0, answer.usage.outputTokens ?? 0);
  // How it ended, apart from the answer: the checks below narrow this, not the answer.
  const end: TurnEnd = answer;
  if (stoppedByFilter(end))
    throw new Error(
      deps.scrubbed(
        contentFilterFailure(deps.provider, end.rawFinishReason, deps.modelId, {
          image: true,
          ...(deps.quotedModel === undefined ? {} : { quoted: deps.quotedModel }),
        }),
      ),
    );
  // A finished answer that held only the model's thinking has no answer text, as a run's last turn has none
  // (docs/agent.md, Reasoning): handed on, the model would get "(the tool returned no output)" as the answer.
  const thinkingOnly = heldOnlyItsThinking(answer);
  if (thinkingOnly !== undefined) throw new Error(thinkingOnlyFailure(thinkingOnly));
  // Cut off by the endpoint itself (DeepSeek's insufficient_system_resource): incomplete, as at a limit.
  const byEndpoint = endpointCutReason(answer.rawFinishReason);
  if (byEndpoint !== undefined) {
    if (answer.text.trim() === "") throw new Error(cutByEndpointBeforeAnyText(byEndpoint));
    return `${answer.text}\n\n[the answer was cut off by the endpoint (finish_reason ${byEndpoint}) here: it is incomplete]`;
  }
  if (!cutShort(end)) return answer.text;
  const at = cutAtContextWindow(end) ? "context_window" : cutAtEither(answer) ? "either" : "max_tokens";
  if (answer.text.trim() === "")
    throw new Error(
      cutBeforeAnyText(deps.maxTokens, at, "the image and the question filled it: ask about a smaller image"),
    );
  const where =
    at === "context_window"
      ? "at the end of the model's context window"
      : at === "either"
        ? `at agent.max_tokens (${deps.maxTokens} tokens) or at the end of the model's context window`
        : `at agent.max_tokens (${deps.maxTokens} tokens)`;
  return `${answer.text}\n\n[the answer was cut ${where} here: it is incomplete]`;
}
