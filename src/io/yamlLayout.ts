import { isDeepStrictEqual } from "node:util";
import {
  type Alias,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isScalar,
  type Node,
  Pair,
  type ParsedNode,
  parseDocument,
  Scalar,
  visit,
  YAMLMap,
  type YAMLSeq,
} from "yaml";
import { anchorMoves, anchorsOf } from "./yamlAnchorMoves.js";

/**
 * The edited document written as its source with only the changed parts replaced: the `yaml` library
 * prints a whole document in its own layout (two-space indents, indented sequences, long lines folded at
 * 80 characters, one space before a comment, one blank line where there were several), so one key set by
 * `svc gateway setup` or one server added by `svc mcp add` rewrote every line of a file indented with
 * four spaces. Pairs whose values did not change are copied from the source as written; a changed scalar
 * is replaced in place (its comment kept); a changed mapping is walked the same way; an alias that took
 * its anchor's copy (the anchored entry removed) is written as that copy where it was; anything else is
 * printed by the library at its place. Undefined when the result would not read back as the edited
 * document (an anchor an unchanged part uses moved, a key that is not plain text, ...): the caller then
 * prints the whole document.
 */
export function keepLayout(
  source: string,
  edited: Document,
  reprint: (doc: Document) => string,
): string | undefined {
  try {
    // A byte order mark is no part of the first line's indentation (`mcp_servers:` at column 0).
    if (!source.startsWith("\uFEFF")) return spliced(source, edited, reprint);
    const text = spliced(source.slice(1), edited, reprint);
    return text === undefined ? undefined : `\uFEFF${text}`;
  } catch {
    // An alias the spliced text no longer resolves (its anchor was in a changed part), and the like.
    return undefined;
  }
}

function spliced(source: string, edited: Document, reprint: (doc: Document) => string) {
  const original = parseDocument(source, { intAsBigInt: true });
  if (original.errors.length > 0 || !isMap(original.contents) || !isMap(edited.contents)) return undefined;
  const eol = /\r?\n/.exec(source)?.[0] ?? "\n";
  const text = new Layout(source, original, edited, eol, reprint).map(
    original.contents,
    edited.contents,
    0,
    source.length,
  );
  if (text === undefined) return undefined;
  const check = parseDocument(text, { intAsBigInt: true });
  return check.errors.length === 0 && sameData(check.toJS(), edited.toJS()) ? text : undefined;
}

/** Equal data, an integer read as a BigInt equal to the same number set by an edit. */
function sameData(a: unknown, b: unknown): boolean {
  const plain = (value: unknown): unknown =>
    JSON.stringify(value, (_key, v: unknown) =>
      typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : `${v}n`) : v,
    );
  return isDeepStrictEqual(plain(a), plain(b));
}

/** Where a pair of a block mapping is in the source: its comment lines above, its key's line, its end. */
interface Span {
  readonly pair: Pair<Scalar.Parsed, ParsedNode | null>;
  readonly column: number;
  readonly lead: number;
  readonly keyLine: number;
  readonly end: number;
}

class Layout {
  constructor(
    private readonly source: string,
    private readonly original: Document,
    private readonly edited: Document,
    private readonly eol: string,
    private readonly reprint: (doc: Document) => string,
  ) {}

  /** The text of block mapping `before` (source `[from, to)`) with the pairs of `after`. */
  map(before: YAMLMap<ParsedNode, ParsedNode | null>, after: YAMLMap, from: number, to: number) {
    if (before.flow || before.items.length === 0) return undefined;
    const spans: Span[] = [];
    for (const pair of before.items) {
      const key = pair.key;
      if (!isScalar(key)) return undefined;
      const lineStart = this.lineStart(key.range[0]);
      if (this.source.slice(lineStart, key.range[0]).trim() !== "") return undefined;
      // A scalar's comment on the lines under it (`mcp_servers:` then `# none yet`) is its own: the pair
      // printed anew carries it, so it is not left in the source after it as well.
      const value = pair.value;
      const valueEnd =
        (isScalar(value) && value.comment ? value.range?.[2] : value?.range?.[1]) ?? key.range[1];
      spans.push({
        pair: pair as Pair<Scalar.Parsed, ParsedNode | null>,
        column: key.range[0] - lineStart,
        lead: this.commentsAbove(lineStart, spans.at(-1)?.end ?? from),
        keyLine: lineStart,
        end: Math.min(to, this.lineEnd(Math.max(key.range[1], valueEnd - 1))),
      });
    }
    const column = spans[0]?.column ?? 0;
    if (spans.some((span) => span.column !== column)) return undefined;
    let out = this.source.slice(from, spans[0]?.lead ?? from);
    for (const pair of after.items as Pair[]) {
      const at = spans.findIndex((span) => isScalar(pair.key) && span.pair.key.value === pair.key.value);
      const span = spans[at];
      let piece: string | undefined;
      if (span === undefined) piece = this.fresh(pair, column);
      else {
        const gap = at + 1 < spans.length ? this.source.slice(span.end, spans[at + 1]?.lead) : "";
        piece = this.pair(span, pair, column);
        if (piece !== undefined) piece += gap;
      }
      if (piece === undefined) return undefined;
      out += (out === "" || out.endsWith("\n") ? "" : this.eol) + piece;
    }
    // What follows the last pair (blank lines, comments about the next section) stays after the new ones.
    const last = spans.at(-1);
    const trailer = last === undefined ? "" : this.source.slice(last.end, to);
    return out + (trailer !== "" && !out.endsWith("\n") ? this.eol : "") + trailer;
  }

  /** One pair of the source (`span`) as `after` has it. */
  private pair(span: Span, after: Pair, column: number): string | undefined {
    const before = span.pair.value;
    const value = after.value as Node | null;
    // Strictly: a number the edit set (9000) replaces the same number as read (9000n, 09000) in its form.
    const same = isDeepStrictEqual(
      before === null ? null : before.toJS(this.original),
      value === null ? null : value.toJS(this.edited),
    );
    if (same && anchorsOf(before) === anchorsOf(value)) return this.source.slice(span.lead, span.end);
    if (same) {
      // Aliases that now hold their anchor's copy (its node left): each copy written in the alias's place.
      const filled = this.anchorsMovedIn(span, before, value);
      if (filled !== undefined) return filled;
    }
    if (
      isMap(before) &&
      isMap(value) &&
      !before.flow &&
      !value.flow &&
      value.items.length > 0 &&
      // The key's line is kept, so is an anchor on it (`a: &base`) only while the edited node still has it.
      (before.anchor ?? "") === (value.anchor ?? "")
    ) {
      // The key's line (and its comment) as written, then the mapping under it walked the same way.
      const under = this.lineEnd(span.pair.key.range[1]);
      const inner = this.map(before, value, under, span.end);
      return inner === undefined ? undefined : this.source.slice(span.lead, under) + inner;
    }
    if (isScalar(before) && before.range !== undefined && isScalar(value)) {
      const written = this.scalar(value);
      if (written !== undefined)
        return (
          this.source.slice(span.lead, before.range[0]) +
          written +
          this.source.slice(before.range[1], span.end)
        );
    }
    if (isAlias(before) && isCollection(value) && !value.flow && value.anchor === before.source) {
      const filled = this.blockCopyAt(span, before, value, column);
      if (filled !== undefined) return filled;
    }
    // The source's comments above the key are kept; the library's copy of them is not printed twice.
    const key = isScalar(after.key) ? after.key.clone() : after.key;
    if (isScalar(key)) {
      key.commentBefore = null;
      key.spaceBefore = false;
    }
    // So are comment lines under a mapping's last entry, which stay in the source after the pair.
    let printed = value;
    const commentAfter = isCollection(before) && before.comment && before.range[2] > span.end;
    if (commentAfter && isCollection(value) && value.comment) {
      const copy = value.clone() as typeof value;
      copy.comment = null;
      printed = copy;
    }
    return this.source.slice(span.lead, span.keyLine) + this.fresh(new Pair(key, printed), column);
  }

  /**
   * The source of `span` with each alias of `before` that `after` fills written anew where it was, on its
   * line; undefined when a copy is a block collection outside a flow one (the pair holding it is printed).
   */
  private anchorsMovedIn(span: Span, before: Node | null, after: Node | null): string | undefined {
    const moves = anchorMoves(before, after);
    if (moves === undefined || moves.length === 0) return undefined;
    let out = "";
    let at = span.lead;
    for (const { alias, copy, inFlow } of moves) {
      if (!inFlow && isCollection(copy) && !copy.flow) return undefined;
      const written = this.inFlow(copy);
      if (written === undefined || alias.range === undefined || alias.range === null) return undefined;
      out += this.source.slice(at, alias.range[0]) + written;
      at = alias.range[1];
    }
    return out + this.source.slice(at, span.end);
  }

  /**
   * A pair `b: *base` whose alias took its anchor's block collection: its line as written with `&base` for
   * `*base` (a comment on it stays), then the copy under it as the library prints it.
   */
  private blockCopyAt(span: Span, alias: Alias, copy: YAMLMap | YAMLSeq, column: number): string | undefined {
    if (alias.range === undefined || alias.range === null) return undefined;
    const bare = copy.clone() as YAMLMap | YAMLSeq;
    delete bare.anchor;
    bare.commentBefore = null;
    bare.spaceBefore = false;
    const [line, ...under] = this.fresh(new Pair(new Scalar("k"), bare), column).split(this.eol);
    if (line !== `${" ".repeat(column)}k:` || under.length === 0) return undefined;
    const head =
      this.source.slice(span.lead, alias.range[0]) +
      `&${copy.anchor}` +
      this.source.slice(alias.range[1], span.end);
    return head + (head.endsWith("\n") ? "" : this.eol) + under.join(this.eol);
  }

  /** A node written on one line in flow style (`&ar [ x ]`), as it goes in a flow collection, or undefined. */
  private inFlow(node: Node): string | undefined {
    // Comments cannot go inside a one-line flow collection.
    const copy = node.clone() as Node;
    visit(copy, {
      Node(_, item) {
        if (isCollection(item)) item.flow = true;
        item.comment = null;
        item.commentBefore = null;
        item.spaceBefore = false;
      },
    });
    const text = this.reprint(this.alone(copy)).replace(/\r?\n$/, "");
    return /[\r\n]/.test(text) ? undefined : text;
  }

  /** A new or changed pair printed by the library, indented to its mapping's column. */
  private fresh(pair: Pair, column: number): string {
    const map = new YAMLMap();
    map.items.push(pair);
    const indent = " ".repeat(column);
    return this.reprint(this.alone(map))
      .split(/\r?\n/)
      .map((line) => (line === "" ? line : indent + line))
      .join(this.eol);
  }

  /** A scalar's text on one line, as the library writes it, or undefined. */
  private scalar(value: Scalar): string | undefined {
    // Its comment stays in the source after it.
    const bare = value.clone() as Scalar;
    bare.comment = null;
    bare.commentBefore = null;
    bare.spaceBefore = false;
    const text = this.reprint(this.alone(bare)).replace(/\r?\n$/, "");
    return /[\r\n]/.test(text) ? undefined : text;
  }

  /** A document of the edited one's options (its number tags) holding `node` alone, without its comments. */
  private alone(node: Node): Document {
    const doc = this.edited.clone();
    doc.contents = node;
    doc.commentBefore = null;
    doc.comment = null;
    if (doc.directives !== undefined) {
      doc.directives.docStart = null;
      doc.directives.docEnd = false;
    }
    return doc;
  }

  /** Where the comment lines directly above `lineStart` begin (not before `floor`). */
  private commentsAbove(lineStart: number, floor: number): number {
    let at = lineStart;
    while (at > floor) {
      const above = this.lineStart(at - 1);
      if (above < floor || !this.source.slice(above, at).trim().startsWith("#")) break;
      at = above;
    }
    return at;
  }

  private lineStart(at: number): number {
    return this.source.lastIndexOf("\n", at - 1) + 1;
  }

  /** The position after the line break that ends the line holding `at` (or the end of the source). */
  private lineEnd(at: number): number {
    const next = this.source.indexOf("\n", at);
    return next === -1 ? this.source.length : next + 1;
  }
}
