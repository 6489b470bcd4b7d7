const THINK_OPEN = /^\s*<think>/;
const THINK_CLOSE = "</think>";

/**
 * A reasoning model's thinking at the start of its text, as servers that do not parse it out write it (vLLM
 * without `--reasoning-parser`, llama.cpp's server with `--reasoning-format none`, LM Studio), apart from the
 * answer after it: `<think>…</think>` and the answer, or the thinking and `</think>` alone when the chat
 * template opened the tag (DeepSeek R1's). A text cut while the model thought has no answer. Undefined when
 * the text starts with no thinking.
 */
export function thinkingInText(
  text: string,
): { readonly thinking: string; readonly answer: string } | undefined {
  const open = THINK_OPEN.exec(text);
  const close = text.indexOf(THINK_CLOSE);
  // A closing tag alone counts only at the start of a line, as the template-opened thinking ends, and when
  // no opening one is anywhere in the text: an answer may name the tag.
  if (open === null && (!/(?:^|\n)<\/think>/.test(text) || text.includes("<think>"))) return undefined;
  const start = open === null ? 0 : open[0].length;
  const end = close < start ? text.length : close;
  const answer = close < start ? "" : text.slice(close + THINK_CLOSE.length).replace(/^\s+/, "");
  return { thinking: text.slice(start, end).trim(), answer };
}
