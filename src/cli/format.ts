import { SvcError } from "../errors.js";
import { graphemes } from "../io/graphemes.js";
import { terminalText } from "../io/terminalText.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const CONTROL_RUNS = /[\x00-\x1f\x7f-\x9f]+/g;

/**
 * A character a terminal shows two columns wide: East Asian wide and fullwidth letters (CJK, kana, Hangul,
 * fullwidth forms) and emoji shown as emoji.
 */
const WIDE =
  /^(?:[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f1e6}-\u{1f1ff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f)/u;

/**
 * The columns `text` takes on a terminal: one per character as a reader sees it (a letter with its
 * combining accents is one), two for a wide one. Plain ASCII, the usual cell, is its length.
 */
export function displayWidth(text: string): number {
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes(text)) width += WIDE.test(segment) ? 2 : 1;
  return width;
}

/**
 * Left-aligned columns separated by two spaces; the first row is the header. A line break or other
 * control character in a cell (a description written with one; a C1 control too, which a terminal may act
 * on as an escape) is shown as a space: one row per line. A bidi override or zero-width character is shown
 * escaped (`\u202e`), as `terminalText` shows it: it would reorder or hide part of the row.
 * Columns are measured as the terminal shows them, so a cell with CJK text or an emoji (an event type,
 * a sender's event) does not push the columns after it out of line. A line ends at its last non-empty
 * cell: empty cells at the end of a row (no NOTE, no DESCRIPTION) leave no trailing spaces.
 */
export function formatTable(input: readonly (readonly string[])[]): string {
  const rows = input.map((row) => row.map((cell) => terminalText(cell.replace(CONTROL_RUNS, " "))));
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - displayWidth(cell)),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/**
 * A commander parser collecting a repeated `<option> key=value` option into one record; a usage error
 * names that option. `__proto__` is refused: the record could not hold it, so it would vanish without a word.
 * A key given twice (`chat_id=1` then `chat_id=2`) is refused too, rather than its first value dropped:
 * `holds` says what the record keeps one value of per key.
 */
export function pairsOption(
  option: string,
  shape: string,
  what: string,
  holds: string,
  /** The values may be credentials (`--env`): a malformed pair is described, never quoted. */
  secretValues = false,
): (value: string, previous?: Record<string, string>) => Record<string, string> {
  return (value, previous = {}) => {
    const eq = value.indexOf("=");
    if (eq <= 0)
      throw new SvcError(
        "usage",
        `${option}: expected ${shape}, got ${secretValues ? unquotedPair(value, eq) : `"${value}"`}`,
      );
    const key = value.slice(0, eq);
    if (key === "__proto__") throw new SvcError("usage", `${option}: "__proto__" cannot be ${what}`);
    if (Object.hasOwn(previous, key))
      throw new SvcError("usage", `${option} ${key} is given twice — ${holds}: keep one`);
    return { ...previous, [key]: value.slice(eq + 1) };
  };
}

/** A variable's name alone (`NOEQUALS`, `GITHUB_TOKEN`): upper case, so never a credential pasted alone. */
export const BARE_NAME = /^[A-Z_]+$/;
/** `NAME value` or `NAME:value`, as a shell line or docker and compose write a variable. */
const NAME_JOINED = /^([A-Za-z_][A-Za-z0-9_]*)\s*[:\s]/;
export const NOT_SHOWN = "(not shown: it may be a credential)";

/** What a `NAME=value` option got instead, without the text past a name (usually the credential). */
function unquotedPair(value: string, eq: number): string {
  if (eq === 0) return `no name before the = ${NOT_SHOWN}`;
  if (BARE_NAME.test(value)) return `"${value}"`;
  const name = NAME_JOINED.exec(value)?.[1];
  return `text with no = ${NOT_SHOWN}${name === undefined ? "" : ` — write ${name}=<value>`}`;
}

/** Collects repeated `--deliver-extra key=value` options. */
export const collectPairs = pairsOption(
  "--deliver-extra",
  "key=value",
  "a deliver_extra key",
  "deliver_extra holds one value per key",
);

/**
 * Refuses a blank `--deliver-extra` value, for `svc webhook subscribe` and `svc cron create` alike: spaces
 * alone are no recipient, and every delivery would fail on them ("rendered empty") — they are not taken as
 * no value either, which would send the replies to the home channel instead. `<key>=` with nothing after it
 * removes the key where there is a record to remove it from (`removes`); a new cron job has none, and its
 * runs would fail on the empty value the same way, so it is refused there too.
 */
export function checkDeliverExtra(extra: Record<string, string> | undefined, removes: boolean): void {
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (value.trim() !== "" || (removes && value === "")) continue;
    const instead = removes
      ? `${key}= with nothing after it to remove the key`
      : `leave --deliver-extra ${key}= out`;
    throw new SvcError(
      "usage",
      `--deliver-extra ${key}=: ${value === "" ? "empty" : "only spaces"} — give a value, or ${instead}`,
    );
  }
}
