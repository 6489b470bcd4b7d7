import type { YAMLError } from "yaml";

/**
 * A key indented off its mapping's column, which the parser reports in words that name neither the key nor
 * the column it belongs at (and, for a key indented too far, at the line above it, whose text is fine). The
 * problem named at the key's own line, or undefined. Only keys are quoted: a value may be a secret.
 */

/** A line's indentation and its key (`  - name:` too), when it is `key:` with or without a value. */
const KEY_LINE = /^( *)(?:-[ \t]+)?([A-Za-z0-9_.-]+|"[^"\n]*"|'[^'\n]*')[ \t]*:(?:[ \t]|$)/;

/** `key: value` with a value on the line (not a mapping's or list's key alone), and no `: ` in that value. */
const SCALAR_LINE = /^( *)(?:-[ \t]+)?([A-Za-z0-9_.-]+|"[^"\n]*"|'[^'\n]*'):[ \t]+([^\s#][^\n]*)$/;

const isContent = (line: string) => line.trim() !== "" && !line.trim().startsWith("#");

export function misindentedKey(error: YAMLError, text: string): { line: number; text: string } | undefined {
  const at = error.linePos?.[0]?.line;
  if (at === undefined) return undefined;
  const lines = text.split(/\r?\n/);
  // `secret: abc` followed by `  events: [push]` indented past `secret`: YAML reads the next line as more of
  // the value `abc`, and a `: ` there as a mapping it cannot nest ("Nested mappings are not allowed in
  // compact mappings"), reported at the `secret` line.
  if (/^Nested mappings are not allowed in compact mappings/.test(error.message)) {
    const holder = SCALAR_LINE.exec(lines[at - 1] ?? "");
    if (holder === null || /:[ \t]/.test((holder[3] as string).replace(/[ \t]+#.*$/, ""))) return undefined;
    const next = lines.findIndex((line, i) => i >= at && isContent(line));
    const key = next === -1 ? null : KEY_LINE.exec(lines[next] as string);
    if (key === null || (key[1] as string).length <= (holder[1] as string).length) return undefined;
    const column = (lines[at - 1] as string).indexOf(holder[2] as string) + 1;
    return {
      line: next + 1,
      text: `${key[2]} is indented further than ${holder[2]} on line ${at} above it, so YAML reads the line as more of ${holder[2]}'s value — write ${key[2]}: at the column of ${holder[2]}: (column ${column}), or, if the line is part of the value, put the value in quotes`,
    };
  }
  // `  - field: action` followed by `   in: [opened]`: between the item's `-` and its keys' column, which YAML
  // reads as a new list item that lacks its `-` (a filter's operator written one column short).
  if (/^Sequence item without - indicator/.test(error.message)) {
    const key = KEY_LINE.exec(lines[at - 1] ?? "");
    if (key === null) return undefined;
    const indent = (key[1] as string).length;
    for (let i = at - 2; i >= 0; i--) {
      const line = lines[i] as string;
      if (!isContent(line)) continue;
      const item = /^( *)-[ \t]+/.exec(line);
      const above = KEY_LINE.exec(line);
      if (above === null) return undefined;
      const column = line.indexOf(above[2] as string, (above[1] as string).length) + 1;
      // A key of the item above: it sits at the item's keys' column.
      if (item === null) {
        if ((above[1] as string).length <= indent) return undefined;
        continue;
      }
      if ((item[1] as string).length >= indent || column - 1 <= indent) return undefined;
      return {
        line: at,
        text: `${key[2]} is indented less than ${above[2]} on line ${i + 1} above it, but more than its - — write ${key[2]}: at the column of ${above[2]}: (column ${column}) to keep it in that item, or start a new item with - at column ${(item[1] as string).length + 1}`,
      };
    }
    return undefined;
  }
  // `    - push` followed by `   - pull`: a `-` between its list's column and the key that holds the list.
  if (/^A block sequence may not be used as an implicit map key/.test(error.message)) {
    const dash = /^( *)-[ \t]/.exec(lines[at - 1] ?? "");
    if (dash === null) return undefined;
    const indent = (dash[1] as string).length;
    // The list it broke off from: the least indented item between it and the key that holds the list (not
    // an item of a list nested in one of its items).
    let item: { line: number; depth: number } | undefined;
    for (let i = at - 2; i >= 0; i--) {
      const line = lines[i] as string;
      if (!isContent(line)) continue;
      const above = /^( *)(-[ \t])?/.exec(line) as RegExpExecArray;
      const depth = (above[1] as string).length;
      if (depth <= indent) break;
      if (above[2] !== undefined && (item === undefined || depth <= item.depth))
        item = { line: i + 1, depth };
    }
    if (item === undefined) return undefined;
    return {
      line: at,
      text: `this - is indented less than the - of the item above it (line ${item.line}, column ${item.depth + 1}), but more than the key that holds the list — write each - of the list at column ${item.depth + 1}`,
    };
  }
  // `    enabled: true` followed by `   port: 8644`: between the mapping's column and its parent's.
  if (/^All mapping items must start at the same column/.test(error.message)) {
    const key = KEY_LINE.exec(lines[at - 1] ?? "");
    if (key === null) return undefined;
    const indent = (key[1] as string).length;
    // The mapping it broke off from: the least indented key between it and its parent (the nearest of them).
    let sibling: { line: number; key: string; indent: number } | undefined;
    for (let i = at - 2; i >= 0; i--) {
      const above = KEY_LINE.exec(lines[i] as string);
      if (above === null || !isContent(lines[i] as string)) continue;
      const depth = (above[1] as string).length;
      if (depth <= indent) break;
      if (sibling === undefined || depth < sibling.indent)
        sibling = { line: i + 1, key: above[2] as string, indent: depth };
    }
    if (sibling === undefined) return undefined;
    const column = (lines[sibling.line - 1] as string).indexOf(sibling.key) + 1;
    return {
      line: at,
      text: `${key[2]} is indented less than ${sibling.key} on line ${sibling.line} above it, but more than the key that holds them — write ${key[2]}: at the column of ${sibling.key}: (column ${column}), or at its parent's column if it belongs there`,
    };
  }
  return undefined;
}

/** A line indented with (or holding) a no-break space before its key, and a `key:` followed by one. */
const NBSP_INDENT = /^[ \t]*\u00a0[ \t\u00a0]*(?:-[ \t\u00a0]+)?[A-Za-z0-9_.-]+[ \t]*:(?:[ \t\u00a0]|$)/;
const NBSP_AFTER_COLON = /^[ \t]*(?:-[ \t]+)?([A-Za-z0-9_.-]+):\u00a0/;

/**
 * A no-break space (U+00A0) where YAML needs a plain one, as text copied from a web page or a chat holds:
 * YAML takes it for part of the text, so an indented key becomes a top-level key whose name starts with
 * it (`unknown key "  events"`) and `enabled:` then one reads as the text "enabled: true". The first such
 * line, as `line <n>: <problem>`, or undefined. Only the key is quoted: a value may be a secret.
 */
export function noBreakSpaceLine(text: string): string | undefined {
  if (!text.includes("\u00a0")) return undefined;
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (NBSP_INDENT.test(line))
      return `line ${i + 1}: the indentation holds a no-break space (U+00A0, as text copied from a web page or a chat does), which YAML reads as part of the key, not as indentation — indent with plain spaces`;
    const key = NBSP_AFTER_COLON.exec(line)?.[1];
    if (key !== undefined)
      return `line ${i + 1}: ${key}: the space after the colon is a no-break space (U+00A0, as text copied from a web page or a chat holds), which YAML does not read as one, so the whole line is taken as text — write a plain space after ${key}:`;
  }
  return undefined;
}
