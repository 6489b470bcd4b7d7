import type { ToolContent } from "./tools/tool.js";

/**
 * The most characters of a tool's text result a model is sent (`agent.max_tool_result_chars`): a web page,
 * a log dump or a file read can be larger than the model's context, and a request holding it fails the
 * whole run (HTTP 400 or 413) after its other work was done. About 25 000 tokens of English.
 */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000;

/** How much of a tool's text was cut: its length, and how much of it the model is sent (UTF-16 units). */
export interface ToolResultCut {
  readonly chars: number;
  readonly shown: number;
}

/** The line that ends a cut result, telling the model it did not see the whole of it. */
export function cutNote(cut: ToolResultCut): string {
  return `[… cut: the tool's result was ${cut.chars} characters; the first ${cut.shown} are shown (agent.max_tool_result_chars)]`;
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would fall inside a surrogate pair (an
 * emoji's first half alone would reach the model as U+FFFD).
 */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, max >= 1 && last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * `text` cut to `max` characters and ended with a line saying so (`cutNote`), when it is longer; `max` 0
 * means no cap.
 */
export function cutToolText(text: string, max: number): { text: string; cut?: ToolResultCut } {
  if (max === 0 || text.length <= max) return { text };
  const head = headOf(text, max);
  const cut = { chars: text.length, shown: head.length };
  return { text: `${head}\n${cutNote(cut)}`, cut };
}

/**
 * A tool's result with its text blocks held to `max` characters in all, counting the line break each block
 * after the first is joined with (the model is sent them as one text): the block that passes it is cut,
 * the text blocks after it are left out, and a text block saying so ends the result (`cutNote`). Images are
 * kept as they are (their size is judged where they become model content). `max` 0 means no cap.
 */
export function cutToolContent(
  content: readonly ToolContent[],
  max: number,
): { content: readonly ToolContent[]; cut?: ToolResultCut } {
  let chars = 0;
  let blocks = 0;
  for (const part of content)
    if (part.type === "text") {
      chars += part.text.length;
      blocks += 1;
    }
  chars += Math.max(0, blocks - 1);
  if (max === 0 || chars <= max) return { content };
  let left = max;
  let shown = 0;
  let first = true;
  const kept: ToolContent[] = [];
  for (const part of content) {
    if (part.type !== "text") kept.push(part);
    else if (left > 0) {
      if (!first) {
        // Its line break and at least one character, or nothing more of the text.
        if (left < 2) {
          left = 0;
          continue;
        }
        left -= 1;
        shown += 1;
      }
      first = false;
      const head = headOf(part.text, left);
      left = head.length < part.text.length ? 0 : left - head.length;
      shown += head.length;
      if (head !== "") kept.push({ ...part, text: head });
    }
  }
  const cut = { chars, shown };
  kept.push({ type: "text", text: cutNote(cut) });
  return { content: kept, cut };
}
