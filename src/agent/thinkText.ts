import type { wrapLanguageModel } from "ai";

const THINK_OPEN = /^\s*<think>/;
const THINK_OPEN_TAG = "<think>";
const THINK_CLOSE = "</think>";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/** How a turn ended, as far as its text's thinking is concerned. */
export interface TurnEnd {
  /** The turn was cut at its output limit (`length`, `max_tokens`, the context window's end). */
  readonly cut: boolean;
  /** The turn called tools: its text is not the reply. */
  readonly calls: boolean;
  /** Text follows in another block of the answer (the Messages API's): a reply is left even if this text has none. */
  readonly textAfter?: boolean;
}

/** Thinking taken apart from the answer after it. */
export interface ThinkingSplit {
  readonly thinking: string;
  readonly answer: string;
}

/**
 * A reasoning model's thinking at the start of its text, as servers that do not parse it out write it (vLLM
 * without `--reasoning-parser`, llama.cpp's server with `--reasoning-format none`, LM Studio), apart from the
 * answer after it:
 * - `<think>…</think>` and the answer;
 * - `<think>` never closed: thinking only when the turn was cut (`turn.cut`), which then has no answer; a
 *   finished turn's text is taken as written (an answer may start by naming the tag);
 * - the thinking and a `</think>` line alone, when the chat template opened the tag (DeepSeek R1's): only the
 *   text's first `</think>`, at the start of a line, with no `<think>` before it. When that leaves no answer
 *   of a finished turn that called no tools, nor any in the answer's text blocks after it, the text is taken as
 *   written (`"kept"`): the rule never empties a reply.
 * Undefined when the text starts with no thinking (or is taken as written, as said).
 */
export function thinkingInText(text: string, turn: TurnEnd): ThinkingSplit | "kept" | undefined {
  const open = THINK_OPEN.exec(text);
  if (open !== null) {
    const start = open[0].length;
    const close = text.indexOf(THINK_CLOSE, start);
    if (close < 0) return turn.cut ? { thinking: text.slice(start).trim(), answer: "" } : undefined;
    return {
      thinking: text.slice(start, close).trim(),
      answer: text.slice(close + THINK_CLOSE.length).replace(/^\s+/, ""),
    };
  }
  // A closing tag alone counts only at the start of a line, as the template-opened thinking ends, and only
  // the first one, with no opening tag before it: an answer may name the tag.
  const close = text.indexOf(THINK_CLOSE);
  if (close < 0 || (close > 0 && text[close - 1] !== "\n")) return undefined;
  if (text.lastIndexOf(THINK_OPEN_TAG, close) >= 0) return undefined;
  const answer = text.slice(close + THINK_CLOSE.length).replace(/^\s+/, "");
  if (answer === "" && !turn.cut && !turn.calls && turn.textAfter !== true) return "kept";
  return { thinking: text.slice(0, close).trim(), answer };
}

/**
 * The field a normalized answer carries when a text was taken as written because the `</think>` line rule
 * would have left a finished turn no reply (`thinkingInText`'s `"kept"`); `thinkingKeptMiddleware` says so.
 */
export const THINKING_KEPT = "svc_thinking_kept";

/** What svc's log says (at DEBUG, as a model warning) of a text `thinkingInText` kept as written. */
export const THINKING_KEPT_NOTE =
  "the answer's text has a </think> line but nothing after it: delivered as written, not taken as thinking";

/**
 * Adds `THINKING_KEPT_NOTE` to the warnings of a turn whose answer carries `THINKING_KEPT`, which svc logs
 * at DEBUG with the SDK's own warnings.
 */
export const thinkingKeptMiddleware: Middleware = {
  specificationVersion: "v3",
  wrapGenerate: async ({ doGenerate }) => {
    const result = await doGenerate();
    const body: unknown = result.response?.body;
    if (
      body === null ||
      typeof body !== "object" ||
      (body as Record<string, unknown>)[THINKING_KEPT] !== true
    )
      return result;
    return { ...result, warnings: [...result.warnings, { type: "other", message: THINKING_KEPT_NOTE }] };
  },
};
