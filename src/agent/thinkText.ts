const THINK_OPEN = /^\s*<think>/;
const THINK_OPEN_TAG = "<think>";
const THINK_CLOSE = "</think>";
/** What ends a line: spaces or tabs, then a line break or the end of the text. */
const LINE_END = /^[ \t]*(?:\r?\n|$)/;

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
  /**
   * Set when the answer is nothing but that thinking: a finished turn that called no tools left no text after
   * it (nor in a later text block), so it has no reply (`THINKING_ONLY_FAILURE`).
   */
  readonly only?: true;
}

/**
 * A reasoning model's thinking at the start of its text, as servers that do not parse it out write it (vLLM
 * without `--reasoning-parser`, llama.cpp's server with `--reasoning-format none`, LM Studio), apart from the
 * answer after it:
 * - `<think>…</think>` and the answer;
 * - `<think>` never closed: thinking only when the turn was cut (`turn.cut`), which then has no answer; a
 *   finished turn's text is taken as written (an answer may start by naming the tag);
 * - the thinking and a `</think>` line alone, when the chat template opened the tag (DeepSeek R1's): only the
 *   text's first `</think>`, at the start of a line, with no `<think>` before it.
 * When either closed form leaves no answer of a finished turn that called no tools, nor any in the answer's
 * text blocks after it, and its thinking is not blank, the split is marked `only`: the answer held only its
 * thinking.
 * Undefined when the text starts with no thinking (or is taken as written, as said).
 */
export function thinkingInText(text: string, turn: TurnEnd): ThinkingSplit | undefined {
  const open = THINK_OPEN.exec(text);
  if (open !== null) {
    const start = open[0].length;
    const close = text.indexOf(THINK_CLOSE, start);
    if (close < 0) return turn.cut ? { thinking: text.slice(start).trim(), answer: "" } : undefined;
    return split(text.slice(start, close), text.slice(close + THINK_CLOSE.length), turn);
  }
  // A closing tag alone counts only at the start of a line, as the template-opened thinking ends, and only
  // the first one, with no opening tag before it: an answer may name the tag.
  const close = text.indexOf(THINK_CLOSE);
  if (close < 0 || (close > 0 && text[close - 1] !== "\n")) return undefined;
  if (text.lastIndexOf(THINK_OPEN_TAG, close) >= 0) return undefined;
  return split(text.slice(0, close), text.slice(close + THINK_CLOSE.length), turn);
}

/**
 * Whether a text starts (after any whitespace) with a `<think>` block as a chat template writes one: its first
 * `</think>` ends its line (spaces or tabs aside, then a line break or the text's end: `</think>\n\n`), or
 * none closes it (`thinkingInText` takes that as thinking only for a turn cut short). Not an answer that names
 * the tags in a sentence (`<think> and </think> are the tags…`).
 */
export function opensWithThinkingBlock(text: string): boolean {
  const open = THINK_OPEN.exec(text);
  if (open === null) return false;
  const close = text.indexOf(THINK_CLOSE, open[0].length);
  return close < 0 || LINE_END.test(text.slice(close + THINK_CLOSE.length));
}

function split(thinking: string, after: string, turn: TurnEnd): ThinkingSplit {
  const answer = after.replace(/^\s+/, "");
  const kept = thinking.trim();
  // An empty block (`<think>\n\n</think>`, as Qwen3 writes it when told not to think) is no thinking: with
  // nothing after it, the answer is an empty reply, delivered as a plain "" is.
  const only = answer === "" && kept !== "" && !turn.cut && !turn.calls && turn.textAfter !== true;
  return { thinking: kept, answer, ...(only ? { only: true as const } : {}) };
}

/**
 * The field a normalized answer carries when its text held only the model's thinking (`ThinkingSplit.only`):
 * the turn finished with no reply, which fails the run (`THINKING_ONLY_FAILURE`).
 */
export const THINKING_ONLY = "svc_thinking_only";

/** Whether a model answer's body (as the AI SDK keeps it with its step) carries `THINKING_ONLY`. */
export function heldOnlyThinking(body: unknown): boolean {
  return (
    body !== null && typeof body === "object" && (body as Record<string, unknown>)[THINKING_ONLY] === true
  );
}

/**
 * Why a run whose finished answer held only the model's thinking fails: delivered, it would be an empty reply
 * (or, before, the thinking itself) as if the run had answered.
 */
export const THINKING_ONLY_FAILURE =
  "the model's answer held only its thinking (<think>…</think>) and no reply text — ask again, or check the model's chat template and the server's reasoning settings";

/**
 * Why a run whose finished answer held only the reasoning the server sent apart fails (Chat Completions'
 * `reasoning_content` or `reasoning` beside an empty `content`, a Messages API answer of thinking or redacted
 * thinking blocks alone): no tags and no chat template are involved, so it says what to change instead. The
 * turn finished (one cut at `max_tokens` is told as such), so no larger `agent.max_tokens` would help, and svc
 * sets no reasoning effort: what is left is the model's or the server's own reasoning settings.
 */
export const REASONING_ONLY_FAILURE =
  "the model's answer held only its reasoning and no reply text — ask again; if it goes on, check the model's or the server's reasoning settings";

/**
 * Why a run fails whose answer held only the model's thinking and which the endpoint ended for a reason that
 * is no finished answer (DeepSeek's `insufficient_system_resource`, `tool_calls` with no calls): that reason,
 * as the endpoint sent it. Thinking its text held (`in_text`: `<think>…</think>`) is named so, with the chat
 * template advice `THINKING_ONLY_FAILURE` gives, as the reason alone may not be why it held nothing else.
 */
export const unfinishedThinkingFailure = (
  reason: string | undefined,
  of: "in_text" | "apart" = "apart",
): string => {
  const ended = `the endpoint ended it ${reason === undefined ? "with no finish reason" : `with finish reason "${reason}"`}, not as a finished answer — ask again; if it goes on, see the endpoint's documentation for that reason`;
  return of === "in_text"
    ? `the model's answer held only its thinking (<think>…</think>) and no reply text, and ${ended}, and check the model's chat template and the server's reasoning settings`
    : `the model's answer held only its reasoning and no reply text, and ${ended}`;
};
