import { type Document, type LineCounter, visit } from "yaml";
import { SvcError } from "../errors.js";
import { credentialLine, unknownAliasProblem, unknownTagProblem } from "./unquotedTemplate.js";

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
