import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { wrapLanguageModel } from "ai";
import { modelBaseUrl } from "../config/sections/agent.js";
import {
  chatCompletionsFetch,
  isAnthropicApi,
  messagesApiFetch,
  type RequestRewrite,
} from "../io/modelFetch.js";
import { normalizedChatAnswer } from "./chatAnswer.js";
import { messagesApiMiddleware } from "./messagesApiPrompt.js";
import type { ProviderModel } from "./retry.js";
import { thoughtSignaturesMiddleware } from "./thoughtSignatures.js";
import { normalizedMessagesAnswer, objectToolInputsMiddleware } from "./toolCallInputs.js";
import { apiToolNamesMiddleware } from "./toolCallNames.js";
import { turnFieldsMiddleware } from "./turnFields.js";
import { wellFormedMiddleware } from "./wellFormed.js";

export interface ProviderSettings {
  readonly provider: "openai" | "anthropic";
  readonly model: string;
  readonly base_url?: string | undefined;
  readonly api_key?: string | undefined;
}

/**
 * The language model for `agent.provider`: `openai` speaks Chat Completions (`<base_url>/chat/completions`,
 * `Authorization: Bearer <api_key>`), so Ollama, vLLM, LM Studio and OpenRouter work as well as OpenAI;
 * `anthropic` speaks the Messages API (`<base_url>/messages`, `x-api-key`). No environment variable is
 * read behind the operator's back: the key is `agent.api_key` or nothing.
 */
/** The URL the model's requests go to, for messages about its answers. */
export function modelEndpoint(settings: Pick<ProviderSettings, "provider" | "base_url">): string {
  const base = modelBaseUrl(settings.provider, settings.base_url);
  return `${base}${settings.provider === "anthropic" ? "/messages" : "/chat/completions"}`;
}

/**
 * OpenAI's refusal of `max_tokens` for a reasoning model ("Unsupported parameter: 'max_tokens' is not
 * supported with this model. Use 'max_completion_tokens' instead."), as a proxy or gateway in front of its
 * API (Cloudflare AI Gateway, Helicone, Portkey, a company's own) passes it on: svc cannot tell such a
 * base_url from any other server's, so the request is sent again with `max_completion_tokens`.
 */
export const maxCompletionTokensRewrite: RequestRewrite = {
  refused: (status, body) =>
    status === 400 &&
    /\bmax_tokens\b/.test(body) &&
    /\bmax_completion_tokens\b/.test(body) &&
    // Not vLLM's "'max_tokens' or 'max_completion_tokens' is too large: ...": a value the model's context
    // has no room for, refused under either name.
    /unsupported|not supported|instead/i.test(body),
  rewrite: (body) => rewriteJson(body, withMaxCompletionTokens),
};

/**
 * OpenAI's refusal of a tool description past 1024 characters ("Invalid 'tools[13].function.description':
 * string too long. Expected a string with maximum length 1024 ..."), passed on by a proxy in front of its
 * API: the request is sent again with such descriptions cut, as OpenAI's own API gets them at once.
 */
export const shortDescriptionsRewrite: RequestRewrite = {
  refused: (status, body) =>
    status === 400 &&
    /function\.description/.test(body) &&
    new RegExp(`maximum length ${OPENAI_DESCRIPTION_MAX}\\b`).test(body),
  rewrite: (body) => rewriteJson(body, withShortDescriptions),
};

/**
 * A server's refusal of the reasoning the AI SDK sends back with an earlier turn (`reasoning_content`, for
 * DeepSeek, which needs it): Groq answers `'messages.1' : for 'role:assistant' the following must be
 * satisfied[('messages.1' : property 'reasoning_content' is unsupported)]` after a reasoning model's turn
 * (gpt-oss, qwen3) that called a tool, and servers that refuse unknown fields answer alike: Mistral with a
 * 422 (`extra_forbidden`, `"loc": [..., "assistant", "reasoning_content"], "msg": "Extra inputs are not
 * permitted"`) after a Magistral model's thinking. The request is sent again without it.
 */
export const withoutReasoningRewrite: RequestRewrite = {
  refused: (status, body) =>
    (status === 400 || status === 422) &&
    /reasoning_content.{0,80}(unsupported|not supported|not permitted|unknown|unexpected|not allowed|unrecognized)|(unknown|unexpected|unrecognized|extra).{0,80}reasoning_content/i.test(
      body,
    ),
  rewrite: (body) => rewriteJson(body, withoutReasoningContent),
};

/**
 * DeepSeek's thinking mode refuses a request whose earlier tool-calling turn comes back without its
 * reasoning (`The reasoning_content in the thinking mode must be passed back to the API.`, or `Missing
 * reasoning_content field in the assistant message at message index 2`), even a turn whose reasoning was
 * empty, which the AI SDK leaves out. The request is sent again with an empty one on such turns.
 */
export const emptyReasoningRewrite: RequestRewrite = {
  refused: (status, body) =>
    status === 400 &&
    /reasoning_content\W{0,3}(?: in the thinking mode)? must be passed back|missing\W{1,3}reasoning_content/i.test(
      body,
    ),
  rewrite: (body) => rewriteJson(body, withEmptyReasoning),
};

/** `body` with `reasoning_content: ""` on each assistant turn with tool calls that has none. */
export function withEmptyReasoning(body: Record<string, unknown>): Record<string, unknown> {
  return withEachMessage(body, (turn) => {
    const calls = turn.role === "assistant" && Array.isArray(turn.tool_calls) && turn.tool_calls.length > 0;
    return calls && turn.reasoning_content === undefined ? { ...turn, reasoning_content: "" } : turn;
  });
}

/** `body` with no `reasoning_content` in its messages. */
export function withoutReasoningContent(body: Record<string, unknown>): Record<string, unknown> {
  return withEachMessage(body, (turn) => {
    if (!("reasoning_content" in turn)) return turn;
    const { reasoning_content: _dropped, ...rest } = turn;
    return rest;
  });
}

/** `body` with `change` applied to each of its messages that is an object. */
function withEachMessage(
  body: Record<string, unknown>,
  change: (turn: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  if (!Array.isArray(body.messages)) return body;
  const messages = (body.messages as unknown[]).map((message) =>
    message === null || typeof message !== "object" ? message : change(message as Record<string, unknown>),
  );
  return { ...body, messages };
}

/** A JSON request body rewritten by `change`; a body that is no JSON object is left as it is. */
function rewriteJson(
  body: string,
  change: (json: Record<string, unknown>) => Record<string, unknown>,
): string {
  try {
    const json: unknown = JSON.parse(body);
    return json !== null && typeof json === "object" && !Array.isArray(json)
      ? JSON.stringify(change(json as Record<string, unknown>))
      : body;
  } catch {
    return body;
  }
}

/**
 * Chat Completions answers with tool calls in other servers' shapes read as OpenAI's (`normalizedChatAnswer`;
 * thinking at the start of the text read as such from servers other than OpenAI's own API, whose models never
 * write it there, `writesNoThinkingInText`); a refusal of `max_tokens`, of a long tool description or of `reasoning_content` answered by the same
 * request without what was refused, and DeepSeek's refusal of a turn without it by the request with an empty
 * one (the rewrites above).
 */
const chatFetch = chatCompletionsFetch(
  (answer, url) => normalizedChatAnswer(answer, { thinkingInText: !writesNoThinkingInText(url) }),
  [maxCompletionTokensRewrite, shortDescriptionsRewrite, withoutReasoningRewrite, emptyReasoningRewrite],
);

/**
 * Whether `url` is OpenAI's own API (`api.openai.com`), whose models' reasoning never comes in the answer's text: a
 * text that starts with `<think>` is the answer. Not Azure OpenAI's (`<name>.openai.azure.com`): it serves other
 * makers' models too, DeepSeek-R1 among them, which write their reasoning in the text within `<think></think>`.
 */
export function writesNoThinkingInText(url: string): boolean {
  if (!URL.canParse(url)) return false;
  return new URL(url).hostname.toLowerCase() === "api.openai.com";
}

/**
 * Messages API answers in the shape the AI SDK reads (`normalizedMessagesAnswer`); thinking at the start of
 * the text is read as such from servers other than Anthropic's own, whose models' thinking comes in its blocks.
 */
const messagesFetch = messagesApiFetch((answer, url) =>
  normalizedMessagesAnswer(answer, { thinkingInText: !isAnthropicApi(url) }),
);

/** The Chat Completions provider's name: the key the AI SDK keeps its per-call metadata under. */
const CHAT_PROVIDER = "openai";

export function languageModel(settings: ProviderSettings, modelId = settings.model): ProviderModel {
  // The base svc names in its messages (`modelEndpoint`) is the one the requests go to.
  const baseURL = modelBaseUrl(settings.provider, settings.base_url);
  if (settings.provider === "anthropic") {
    return wrapLanguageModel({
      model: createAnthropic({ baseURL, apiKey: settings.api_key ?? "", fetch: messagesFetch })(modelId),
      middleware: [
        wellFormedMiddleware,
        messagesApiMiddleware,
        objectToolInputsMiddleware,
        apiToolNamesMiddleware,
      ],
    });
  }
  const chat = createOpenAICompatible({
    name: CHAT_PROVIDER,
    baseURL,
    ...(settings.api_key === undefined || settings.api_key === "" ? {} : { apiKey: settings.api_key }),
    includeUsage: true,
    fetch: chatFetch,
    ...(speaksMaxCompletionTokens(baseURL) ? { transformRequestBody: forOpenAiApi } : {}),
  }).chatModel(modelId);
  return wrapLanguageModel({
    model: chat,
    middleware: [
      wellFormedMiddleware,
      objectToolInputsMiddleware,
      apiToolNamesMiddleware,
      thoughtSignaturesMiddleware(CHAT_PROVIDER),
      turnFieldsMiddleware,
    ],
  });
}

/**
 * OpenAI's own API (and Azure OpenAI) refuses `max_tokens` for its reasoning models (o-series, gpt-5: a 400
 * "Use 'max_completion_tokens' instead") and takes `max_completion_tokens` for every model; other
 * Chat Completions servers (Ollama, vLLM, LM Studio, OpenRouter) read `max_tokens`.
 */
export function speaksMaxCompletionTokens(baseURL: string): boolean {
  if (!URL.canParse(baseURL)) return false;
  const url = new URL(baseURL);
  const host = url.hostname.toLowerCase();
  // Azure OpenAI resources made since 2024 get a `<name>.cognitiveservices.azure.com` endpoint, and Azure AI
  // Foundry serves the same models at `<name>.services.ai.azure.com/openai/v1`: both refuse max_tokens too.
  const azureOpenAi =
    host.endsWith(".openai.azure.com") ||
    ((host.endsWith(".cognitiveservices.azure.com") || host.endsWith(".services.ai.azure.com")) &&
      /^\/openai(\/|$)/i.test(url.pathname));
  return host === "api.openai.com" || azureOpenAi;
}

export function withMaxCompletionTokens(body: Record<string, unknown>): Record<string, unknown> {
  if (body.max_tokens === undefined) return body;
  const { max_tokens, ...rest } = body;
  return { ...rest, max_completion_tokens: max_tokens };
}

/**
 * The longest tool description OpenAI's API (and Azure OpenAI) takes: a longer one fails the whole request
 * ("Invalid 'tools[13].function.description': string too long. Expected a string with maximum length 1024"),
 * as real MCP servers' descriptions can be (Sentry's).
 */
export const OPENAI_DESCRIPTION_MAX = 1024;

/** A description past `OPENAI_DESCRIPTION_MAX` characters cut to that length, ending in `…`. */
export function withShortDescriptions(body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(body.tools)) return body;
  const cut = (text: string) => {
    const chars = Array.from(text);
    return chars.length <= OPENAI_DESCRIPTION_MAX
      ? text
      : `${chars.slice(0, OPENAI_DESCRIPTION_MAX - 1).join("")}…`;
  };
  const tools = (body.tools as unknown[]).map((entry) => {
    const fn = (entry as { function?: { description?: unknown } }).function;
    if (typeof fn?.description !== "string") return entry;
    const description = cut(fn.description);
    return description === fn.description
      ? entry
      : { ...(entry as object), function: { ...fn, description } };
  });
  return { ...body, tools };
}

/** A request to OpenAI's own API (or Azure OpenAI), which has rules of its own (above). */
export function forOpenAiApi(body: Record<string, unknown>): Record<string, unknown> {
  return withShortDescriptions(withMaxCompletionTokens(body));
}
