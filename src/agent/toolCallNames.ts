import type { wrapLanguageModel } from "ai";
import type { ProviderModel } from "./retry.js";

/** The provider-level prompt and middleware (`@ai-sdk/provider` is not a direct dependency). */
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/**
 * The tool names the model APIs take in a turn sent back: OpenAI refuses the whole request for another
 * (`Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern`), and the Messages
 * API too (`messages.1.content.1.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`).
 */
const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Whether the model APIs take `name` as a tool's name. */
export const isApiToolName = (name: string): boolean => API_TOOL_NAME.test(name);

const NOT_OFFERED = "_unavailable";

/**
 * A name the model APIs take for `name`: each other character `_`, cut to 64 characters; `unknown_tool`
 * for an empty one. Each UTF-16 unit becomes one character, so cutting first gives the same name. One that
 * would name an offered tool (`get.weather` beside `get_weather`) ends in `_unavailable` instead, so the
 * model's history does not show that tool failing.
 */
export function apiToolName(name: string, offered: { has(name: string): boolean } = new Set()): string {
  if (isApiToolName(name)) return name;
  const written = name.slice(0, 64).replace(/[^a-zA-Z0-9_-]/g, "_") || "unknown_tool";
  return offered.has(written) ? `${written.slice(0, 64 - NOT_OFFERED.length)}${NOT_OFFERED}` : written;
}

/**
 * The run's messages with each earlier call's tool name one the model APIs take, where it names no offered
 * tool. A model can make a name up (OpenAI's models write `multi_tool_use.parallel`, `functions.x`, or
 * nothing): the call got a tool error quoting that name and was not run, but the turn is sent back as the
 * model wrote it and the API refuses the whole request, so the run would fail on its next turn. Such a call,
 * and its result, go back under `apiToolName`; the run's log and journal keep the name the model wrote.
 */
export function apiToolNames(prompt: Prompt, offered: ReadonlySet<string>): Prompt {
  const unusable = (part: { type: string; toolName?: string }) =>
    (part.type === "tool-call" || part.type === "tool-result") &&
    part.toolName !== undefined &&
    !offered.has(part.toolName) &&
    !isApiToolName(part.toolName);
  return prompt.map((message) => {
    if (message.role !== "assistant" && message.role !== "tool") return message;
    const content = message.content as ReadonlyArray<{ type: string; toolName?: string }>;
    if (!content.some(unusable)) return message;
    return {
      ...message,
      content: content.map((part) =>
        unusable(part) ? { ...part, toolName: apiToolName(part.toolName ?? "", offered) } : part,
      ),
    } as typeof message;
  });
}

/** `apiToolNames` on every model call, against the tools that call offers (both providers). */
export const apiToolNamesMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => {
    const offered = new Set((params.tools ?? []).flatMap((t) => (t.type === "function" ? [t.name] : [])));
    return { ...params, prompt: apiToolNames(params.prompt, offered) };
  },
};

/** The longest tool name a run's log line and journal record keep whole. */
export const RECORDED_NAME_MAX = 200;

/**
 * A tool name as the run records it: a longer one than `RECORDED_NAME_MAX` (only a name the model made up
 * can be: offered names are at most 64 characters) is cut there, saying how long it was, since the log line
 * and journal record would hold it whole.
 */
export function recordedToolName(name: string): string {
  if (name.length <= RECORDED_NAME_MAX) return name;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(name.charAt(RECORDED_NAME_MAX - 1))
    ? RECORDED_NAME_MAX - 1
    : RECORDED_NAME_MAX;
  return `${name.slice(0, end)}… (${name.length} chars)`;
}

/**
 * The error text of a failed call no tool ran (`error`, as the AI SDK wrote it). For a call naming no offered
 * tool under a name the APIs do not take, the SDK's text with the name quoted as JSON (it may hold quotes,
 * line breaks, or be empty) and the name the call is sent back under, since the model reads its own turn
 * with that one.
 */
export function toolErrorText(name: string, error: unknown, offered: readonly string[]): string {
  if (offered.includes(name) || isApiToolName(name))
    return error instanceof Error ? error.message : String(error);
  const tools = offered.length === 0 ? "No tools are available." : `Available tools: ${offered.join(", ")}.`;
  return `Model tried to call unavailable tool ${JSON.stringify(name)} (its call is sent back as ${apiToolName(name, new Set(offered))}). ${tools}`;
}
