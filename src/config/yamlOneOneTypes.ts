import { type Document, isNode, isPair, type LineCounter, visit } from "yaml";
import { SvcError } from "../errors.js";

/**
 * YAML 1.1's typed values, which the parser still reads by their explicit tags: each becomes an object no
 * setting takes (bytes, a date, a set, an ordered map) and was then judged as a mapping (a `!!binary`
 * secret was "a mapping"), or lost its entries (`routes: !!omap [...]` read as no routes). What to write
 * instead, by tag.
 */
const WRITE_INSTEAD: Readonly<Record<string, string>> = {
  "tag:yaml.org,2002:binary": "write the text itself, not its base64 (a secret: in .env, single-quoted)",
  "tag:yaml.org,2002:timestamp": "write the date in quotes, as text",
  "tag:yaml.org,2002:set": "write a list",
  "tag:yaml.org,2002:omap": "write a plain mapping",
  "tag:yaml.org,2002:pairs": "write a plain mapping",
};

/** Refuses the first value written with one of YAML 1.1's typed tags (`!!binary`, ...), at its line. */
export function refuseYamlOneOneTypes(doc: Document.Parsed, file: string, lines: LineCounter): void {
  let found: { tag: string; start: number } | undefined;
  visit(doc, (_key, node, path) => {
    if (!isNode(node) || node.tag === undefined || !Object.hasOwn(WRITE_INSTEAD, node.tag)) return undefined;
    // At its key's line: a list or mapping so tagged begins on the line after it.
    const pair = path.at(-1);
    const at = isPair(pair) && isNode(pair.key) ? pair.key.range : node.range;
    found = { tag: node.tag, start: at?.[0] ?? 0 };
    return visit.BREAK;
  });
  if (found === undefined) return;
  const short = `!!${found.tag.slice(found.tag.lastIndexOf(":") + 1)}`;
  throw new SvcError(
    "config_invalid",
    `${file}: line ${lines.linePos(found.start).line}: a ${short} value is a YAML 1.1 type no setting takes — ${WRITE_INSTEAD[found.tag]}`,
  );
}
