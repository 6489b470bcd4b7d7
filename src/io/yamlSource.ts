import { type Document, parse, parseDocument, type Scalar, type ScalarTag, type Tags } from "yaml";
import { keepLayout } from "./yamlLayout.js";

/**
 * Parses config.yaml for an edit that writes it back (`svc gateway setup`, `svc mcp install` / `add` /
 * `remove`). Integers are read exactly, and every number the edit leaves alone is written back as the
 * text in the file: the `yaml` library would print the value it read instead, so `+15551234567` became
 * `15551234567` (another SMS recipient), `007` `7`, `.5` `0.5` and `1e3` `1e+3`. A number the edit
 * changed is printed from its new value.
 */
export function parseForEdit(text: string): Document.Parsed {
  const doc = parseDocument(text, { intAsBigInt: true, customTags: keepNumberSource });
  sourceForms.set(doc, {
    source: text,
    crlf: /\r?\n/.exec(text)?.[0] === "\r\n",
    bom: text.startsWith("\uFEFF"),
  });
  return doc;
}

/** How the file an edit read ends its lines and whether it starts with a byte order mark. */
const sourceForms = new WeakMap<Document, { source: string; crlf: boolean; bom: boolean }>();

/**
 * The text to write back for a document `parseForEdit` read: the source with only the changed parts
 * printed anew (`keepLayout`), else the whole document printed by the `yaml` library, which prints `\n`
 * line ends and no byte order mark, so a file saved with CRLF (Windows editors, git's autocrlf) would have
 * every line changed by one added key. Its line ends and mark are kept.
 */
export function printForEdit(doc: Document): string {
  const form = sourceForms.get(doc);
  if (form === undefined) return doc.toString();
  // Only what the edit changed is printed anew; the rest keeps the file's own layout. A part printed alone
  // may use an anchor set in the rest (the spliced text is read back whole before it is used).
  const kept = keepLayout(form.source, doc, (part) => part.toString({ verifyAliasOrder: false }));
  if (kept !== undefined) return kept;
  const text = doc.toString();
  return `${form.bom && !text.startsWith("\uFEFF") ? "\uFEFF" : ""}${form.crlf ? text.replace(/\r?\n/g, "\r\n") : text}`;
}

function keepNumberSource(tags: Tags): Tags {
  return tags.map((tag) =>
    typeof tag === "object" && "stringify" in tag && isNumberTag(tag) ? writtenAsRead(tag) : tag,
  );
}

function isNumberTag(tag: ScalarTag | object): tag is ScalarTag {
  const name = (tag as { tag?: unknown }).tag;
  return name === "tag:yaml.org,2002:int" || name === "tag:yaml.org,2002:float";
}

function writtenAsRead(tag: ScalarTag): ScalarTag {
  const stringify = tag.stringify;
  if (stringify === undefined) return tag;
  return {
    ...tag,
    stringify(node, ctx, onComment, onChompKeep) {
      const source = (node as Scalar & { source?: unknown }).source;
      if (typeof source === "string" && (node as Scalar).type === "PLAIN" && means(source, node.value))
        return source;
      return stringify(node, ctx, onComment, onChompKeep);
    },
  };
}

/** Whether the text, read again, is still the node's value (an edit may have set a new one on the node). */
function means(source: string, value: unknown): boolean {
  if (typeof value !== "number" && typeof value !== "bigint") return false;
  try {
    const read: unknown = parse(source, { intAsBigInt: true });
    return typeof read === typeof value && (read === value || Object.is(read, value));
  } catch {
    return false;
  }
}
