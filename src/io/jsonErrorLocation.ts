/** A 1-based line and column in a text, as editors count them. */
export interface TextLocation {
  readonly line: number;
  readonly column: number;
}

const POSITION = /at position (\d+)/;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** True when `text` cut at `length` is still the beginning of a valid JSON document. */
function validBeginning(text: string, length: number): boolean {
  try {
    JSON.parse(text.slice(0, length));
    return true;
  } catch (err) {
    const message = messageOf(err);
    if (message.startsWith("Unexpected end of JSON input")) return true;
    const at = POSITION.exec(message);
    return at !== null && Number(at[1]) >= length;
  }
}

/**
 * Where `JSON.parse(text)` failed with `err`, so a hand-edited file's error names a line. Node 20's V8
 * gives most errors an offset (`... in JSON at position 27`), but not an unexpected token, whose message
 * quotes the text around it instead (which may be a secret, so it is not shown): then the longest
 * beginning of `text` that is still valid JSON is found by bisection, and the character after it is the
 * one that broke it. Only runs on a parse error.
 */
export function jsonErrorLocation(text: string, err: unknown): TextLocation {
  const named = POSITION.exec(messageOf(err));
  let offset: number;
  if (named !== null) offset = Math.min(Number(named[1]), text.length);
  else {
    let good = 0;
    let bad = text.length;
    // good: a valid beginning; bad: the shortest known not to be one (or the whole text).
    while (bad - good > 1) {
      const mid = Math.floor((good + bad) / 2);
      if (validBeginning(text, mid)) good = mid;
      else bad = mid;
    }
    offset = validBeginning(text, bad) ? bad : good;
  }
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: offset - lineStart + 1 };
}
