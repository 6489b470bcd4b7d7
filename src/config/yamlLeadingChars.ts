import {
  type Document,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type LineCounter,
  visit,
} from "yaml";
import { SvcError } from "../errors.js";
import { nearMiss } from "./nearMiss.js";
import { credentialLine, unknownAliasProblem, unknownTagProblem } from "./unquotedTemplate.js";
import { aliasTargets } from "./yamlAliases.js";

/**
 * Values YAML reads through a leading `!` or `*` (src/config/unquotedTemplate.ts): a tag svc does not know is
 * dropped from the value with only a parser warning, and an alias of no anchor fails the whole read with
 * the parser's words alone. Both are refused at their line, with the value in quotes.
 */

const lineAt = (text: string, line: number) => text.split(/\r?\n/)[line - 1] ?? "";

/** `regex: !wip fix` reads `fix`: refused naming the tag and the line. */
export function refuseUnknownTags(doc: Document.Parsed, text: string, file: string): void {
  const tagged = doc.warnings.find((warning) => warning.code === "TAG_RESOLVE_FAILED");
  const line = tagged?.linePos?.[0]?.line;
  if (tagged === undefined || line === undefined) return;
  const tag = /^Unresolved tag: (\S+)/.exec(tagged.message)?.[1] ?? "a !tag";
  throw new SvcError(
    "config_invalid",
    `${file}: line ${line}: ${unknownTagProblem(tag, lineAt(text, line))}`,
  );
}

/**
 * `regex: *.md`: the parser's "Unresolved alias (...): .md", at the line of that alias and with the advice,
 * or undefined for another error.
 */
export function unresolvedAlias(
  doc: Document.Parsed,
  err: unknown,
  text: string,
  file: string,
  lines: LineCounter,
): SvcError | undefined {
  const message = err instanceof Error ? err.message : "";
  const name = /^Unresolved alias[^:]*: (.+)$/.exec(message)?.[1];
  if (name === undefined) return undefined;
  let start: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.source !== name || node.range === undefined || node.range === null) return undefined;
      start = node.range[0];
      return visit.BREAK;
    },
  });
  if (start === undefined) return undefined;
  const { line } = lines.linePos(start);
  return new SvcError(
    "config_invalid",
    `${file}: line ${line}: not valid YAML — ${credentialLine(lineAt(text, line)) ? message.replace(/: .+$/, "") : message} — ${unknownAliasProblem(lineAt(text, line))}`,
  );
}

/**
 * The line of each anchor (`&name`) of `doc`, the first one's for a name set twice: where `&name` is written
 * (`gh: &github`), before the node it names (whose keys may start on the next line). With `mappings`, only the
 * anchors set on a mapping (what a merge key takes; `events: &events [push]` is a list).
 */
function anchorLines(
  doc: Document.Parsed,
  text: string,
  lines: LineCounter,
  mappings = false,
): Map<string, number> {
  const anchors = new Map<string, number>();
  visit(doc, (_key, node) => {
    if (!isNode(node) || node.anchor === undefined || !node.range || anchors.has(node.anchor)) return;
    if (mappings && !isMap(node)) return;
    const written = text.lastIndexOf(`&${node.anchor}`, node.range[0]);
    anchors.set(node.anchor, lines.linePos(written === -1 ? node.range[0] : written).line);
  });
  return anchors;
}

/**
 * What to do about `<<: *name` at `line` whose alias resolves to nothing: the anchor is set after it (an
 * alias names only an anchor on an earlier line), or another one is meant (`*gihtub` for `&github`).
 */
function unresolvedMergeAdvice(name: string, line: number, anchors: ReadonlyMap<string, number>): string {
  const after = (at: number) =>
    at >= line
      ? `, after this line: move the mapping that sets it above this one, or write its keys out here`
      : "";
  const later = anchors.get(name);
  if (later !== undefined) return `&${name} is set on line ${later}${after(later)}`;
  const meant = nearMiss(name, anchors.keys());
  if (meant === undefined)
    return `set &${name} on the mapping to merge, on a line above this one, or write its keys out here`;
  const at = anchors.get(meant) as number;
  return `did you mean *${meant}? (&${meant} is set on line ${at}${after(at)})`;
}

/**
 * `<<: *events` where the anchor is on a list or a value, not a mapping, or is no anchor set before it (a
 * misspelt one, or one set on a later line): the parser's "Merge sources must be maps or map aliases", named
 * at the line of that source with the key path and what to write instead, or undefined for another error.
 */
export function nonMappingMerge(
  doc: Document.Parsed,
  err: unknown,
  text: string,
  file: string,
  lines: LineCounter,
): SvcError | undefined {
  if (!(err instanceof Error) || !/^Merge sources must be maps/.test(err.message)) return undefined;
  let found: { start: number; at: string; what: string; unresolved?: string; empty?: boolean } | undefined;
  visit(doc, {
    Pair(_key, pair, path) {
      if (!isScalar(pair.key) || (typeof pair.key.value !== "symbol" && pair.key.value !== "<<"))
        return undefined;
      const sources = isSeq(pair.value) ? pair.value.items : [pair.value];
      for (const source of sources) {
        const merged = isAlias(source) ? source.resolve(doc) : source;
        if (isMap(merged) || !isNode(source) || !source.range) continue;
        const keys = path.filter(isPair).map((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)));
        const what = isSeq(merged) ? "a list" : "a single value";
        found = { start: source.range[0], at: keys.length === 0 ? "(top level)" : keys.join("."), what };
        // `<<: *gihtub`: an alias of no anchor set before it, not a single value.
        if (isAlias(source) && merged === undefined) found.unresolved = source.source;
        // `<<:` and nothing: a null scalar written as no text at all (`null` or `~` is a value written).
        if (isScalar(source) && source.value === null && source.source === "") found.empty = true;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (found === undefined) return undefined;
  const { line } = lines.linePos(found.start);
  if (found.unresolved !== undefined)
    return new SvcError(
      "config_invalid",
      `${file}: line ${line}: ${found.at}: the merge key << is given *${found.unresolved}, but no anchor &${found.unresolved} is set before it: Unresolved alias (the anchor must be set on an earlier line than its alias) — ${unresolvedMergeAdvice(found.unresolved, line, anchorLines(doc, text, lines))}`,
    );
  const written = text.slice(found.start).split(/[\s,\]}]/)[0] ?? "";
  // `<<: #ids`: the # began a comment, so YAML read no value at all; an alias (`*ids`) was meant: of an anchor set
  // on a mapping above (an alias names no later anchor, and a merge key takes no scalar's), or of a word an anchor
  // could be named. A comment that is no such word (`<<:   # merge the ids`, `<<: ## ids`, `<<: #--- merge ---`,
  // `<<: #TODO: fill in`) is a merge key with no value, said below.
  const above = new Map([...anchorLines(doc, text, lines, true)].filter(([, at]) => at < line));
  const name = written.slice(1);
  if (written.startsWith("#") && (above.has(name) || /^[A-Za-z0-9_][\w.-]*$/.test(name))) {
    const alias = above.has(name)
      ? `<<: *${name} (&${name} is set on line ${above.get(name)})`
      : `<<: *${name}, with &${name} set on the mapping to merge, on a line above this one`;
    return new SvcError(
      "config_invalid",
      `${file}: line ${line}: ${found.at}: the merge key << takes a mapping (its keys are copied in), but YAML read no value: a # after a space starts a comment, so ${JSON.stringify(written)} was dropped — to merge the mapping an anchor names, write an alias: ${alias}`,
    );
  }
  // `<<:` with nothing after it (no block below either), or a comment only: YAML's null, no value given, not a
  // single value. The anchors offered are those of mappings above it, the only ones an alias there may name.
  if (
    (written === "" || written.startsWith("#")) &&
    found.what === "a single value" &&
    found.empty === true
  ) {
    const named =
      above.size === 0
        ? ", with &name set on the mapping to merge, on a line above this one"
        : ` (${[...above].map(([name, at]) => `&${name} is set on line ${at}`).join(", ")})`;
    return new SvcError(
      "config_invalid",
      `${file}: line ${line}: ${found.at}: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name${named}, or remove the << line`,
    );
  }
  const alias = written.startsWith("*") ? written : undefined;
  const given = alias === undefined ? `it is given ${found.what}` : `${alias} is ${found.what}`;
  return new SvcError(
    "config_invalid",
    `${file}: line ${line}: ${found.at}: the merge key << takes a mapping (its keys are copied in), but ${given} — put the anchor on a mapping (&name {...}) and merge that${alias === undefined ? "" : `, or give the alias to the key it is for (<key>: ${alias})`}`,
  );
}

/**
 * An alias inside the value its own anchor names (`platforms: &p {webhook: {x: *p}}`, or `<<: *g` inside
 * `gh: &g`): the value would hold itself, which no setting can be; the parser builds it (or gives up on
 * "Excessive alias count") and the checks after it would recurse without end. Refused at the alias's line.
 */
export function refuseRecursiveAliases(doc: Document.Parsed, file: string, lines: LineCounter): void {
  const targets = aliasTargets(doc);
  visit(doc, {
    Alias(_key, alias, path) {
      const target = targets(alias);
      if (target === undefined || !path.includes(target) || !alias.range) return undefined;
      const { line } = lines.linePos(alias.range[0]);
      throw new SvcError(
        "config_invalid",
        `${file}: line ${line}: *${alias.source} is inside the value its anchor &${alias.source} names, so that value would hold itself — an alias repeats a value written before it and outside it: write the values out here`,
      );
    },
  });
}
