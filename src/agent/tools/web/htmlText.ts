import { NAMED_ENTITIES } from "./entities.js";

/**
 * Elements whose content is never readable text (scripts, styles, embedded documents). Not `head`: its
 * end tag may be left out (the body then starts at the first element that is not metadata), and what it
 * holds besides the elements skipped here (`meta`, `link`, `base`) has no text anyway.
 */
const SKIPPED = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "iframe",
  "object",
  "title",
]);

/** Elements that start a new line in the text. */
const BLOCKS = new Set([
  ...["address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset", "figcaption"],
  ...["figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav"],
  ...["ol", "p", "pre", "section", "table", "tbody", "td", "th", "thead", "tr", "ul"],
]);

/** Upper-case names HTML5 also knows, for the same characters as their lower-case forms. */
const UPPER_ALIASES = new Set(["AMP", "LT", "GT", "QUOT", "COPY", "REG", "TRADE"]);

function named(name: string): string | undefined {
  return (
    NAMED_ENTITIES.get(name) ?? (UPPER_ALIASES.has(name) ? NAMED_ENTITIES.get(name.toLowerCase()) : undefined)
  );
}

export function decodeEntities(text: string): string {
  return text.replace(
    /&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g,
    (whole, name: string) => {
      if (name.startsWith("#")) {
        const code =
          name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
          ? String.fromCodePoint(code)
          : "�";
      }
      return named(name) ?? whole;
    },
  );
}

/** Spaces inside each line collapsed, lines trimmed, runs of blank lines reduced to one. */
export function collapseWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t\f\v\u00a0]+/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function tagName(html: string, start: number): string {
  let end = start;
  while (end < html.length && /[A-Za-z0-9-]/.test(html[end] ?? "")) end++;
  return html.slice(start, end).toLowerCase();
}

/**
 * Where the tag opened before `from` ends: its `>`, not one inside a quoted attribute value
 * (`title="a > b"`, `onclick="if (a > b) go()"`, an arrow function in `x-on:click`), or -1 when the
 * document ends first. A quote opens a value only right after `=` (spaces allowed), as in HTML.
 */
function tagEnd(html: string, from: number): number {
  let afterEquals = false;
  for (let i = from; i < html.length; i++) {
    const c = html[i];
    if (c === ">") return i;
    if (afterEquals && (c === '"' || c === "'")) {
      const end = html.indexOf(c, i + 1);
      if (end < 0) return -1;
      i = end;
      afterEquals = false;
    } else if (c === "=") afterEquals = true;
    else if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r" && c !== "\f") afterEquals = false;
  }
  return -1;
}

/**
 * The document's `<title>`. One after the first `<svg>` is an icon's (an SVG `<title>` names the
 * drawing), not the page's: the page's own is in the head, before any.
 */
function titleOf(html: string, lower: string): string {
  const open = lower.search(/<title[\s>]/);
  const svg = lower.indexOf("<svg");
  if (svg >= 0 && open > svg) return "";
  const start = open < 0 ? -1 : html.indexOf(">", open);
  if (start < 0) return "";
  const end = lower.indexOf("</title", start);
  return collapseWhitespace(decodeEntities(html.slice(start + 1, end < 0 ? html.length : end)));
}

/**
 * Readable text of an HTML document: the title, then the text of the body with scripts, styles and
 * comments removed, block elements on lines of their own, entities decoded and whitespace collapsed.
 * One pass with `indexOf` (no backtracking regular expression), so hostile markup costs linear time.
 */
export function htmlToText(html: string): { readonly title: string; readonly text: string } {
  const lower = html.toLowerCase();
  const parts: string[] = [];
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf("<", i);
    if (open < 0) {
      parts.push(html.slice(i));
      break;
    }
    parts.push(html.slice(i, open));
    if (html.startsWith("<!--", open)) {
      const end = html.indexOf("-->", open + 4);
      i = end < 0 ? html.length : end + 3;
      continue;
    }
    const closing = html[open + 1] === "/";
    const name = tagName(html, open + (closing ? 2 : 1));
    // A lone "<" in text (`a < b`), told before any search for its `>`: a search from each of many such
    // (a page of `<`) to the end of the document made the pass quadratic, minutes of blocked event loop.
    if (name === "" && html[open + 1] !== "!" && html[open + 1] !== "?") {
      parts.push("<");
      i = open + 1;
      continue;
    }
    // Comments, doctypes and end tags have no quoted values to skip. A tag whose `>` never comes ends the
    // text: each search is made once, from a place the pass then moves past.
    const close =
      closing || html[open + 1] === "!" || html[open + 1] === "?"
        ? html.indexOf(">", open + 1)
        : tagEnd(html, open + 1);
    if (close < 0) break;
    i = close + 1;
    if (closing) {
      if (BLOCKS.has(name)) parts.push("\n");
      continue;
    }
    if (SKIPPED.has(name) && html[close - 1] !== "/") {
      const end = lower.indexOf(`</${name}`, i);
      if (end < 0) break;
      const after = html.indexOf(">", end);
      i = after < 0 ? html.length : after + 1;
      continue;
    }
    if (BLOCKS.has(name)) parts.push("\n");
  }
  return { title: titleOf(html, lower), text: collapseWhitespace(decodeEntities(parts.join(""))) };
}
