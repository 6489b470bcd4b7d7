import { FILTER_OPERATORS } from "./sections/filters.js";
import { routeShape, WEBHOOK_SETTINGS } from "./sections/webhook.js";
import { CREDENTIALS_LEFT_OUT, textWithoutUrlCredentials } from "./urlCredentials.js";

/**
 * Values written unquoted in config.yaml that YAML reads as something else than the text meant, and the
 * messages that say to quote them (the value written back in single quotes): a template that starts with
 * `{` (a mapping: `prompt: {pull_request.title}`), `[` (a list) or another character YAML gives a meaning,
 * a `regex` pattern likewise, a `: ` inside a value, a `#` after a space (a comment: `prompt: PR #{number}`,
 * `equals: #general`), a leading `!tag` or `*alias` (src/config/yamlLeadingChars.ts), and a filter's
 * yes/no/on/off (text in YAML 1.2), True/Null/~ (a boolean or null whose text is another) and 2.0 (the number
 * 2). The parser's own words say none of this.
 */

const HINT = "YAML reads a value that starts with { as a mapping: put the";

/** `'text'`: single quotes keep every character as written (a backslash too); a `'` is doubled. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * `text` in single quotes as a fix writes it back, a URL in it without its credentials (they would be printed
 * and logged): `'redis://:[redacted]@h:6379/0'`, saying where the user's own go.
 */
function singleQuotedShown(text: string): string {
  const shown = textWithoutUrlCredentials(text);
  return shown === text ? singleQuoted(text) : `${singleQuoted(shown)}${CREDENTIALS_LEFT_OUT}`;
}

/**
 * A name whose value is a credential (`secret`, `token`, `api_key`, `GITHUB_TOKEN`, `X-Api-Key`,
 * `password`, ...: the names config messages hide), except `coalesce.key`, which is a template.
 */
const CREDENTIAL_NAME = /token|secret|pass|auth|cred|session|cookie|key/i;

/**
 * The value of `key` written back quoted in a fix, unless it is a credential: a hint is printed on stderr
 * and logged, so a secret that happens to hold `: ` or start with `{` is named by its key only.
 */
function quotedBackValue(key: string, value: string): string {
  return CREDENTIAL_NAME.test(key) && key !== "key"
    ? "'<the value>' (not shown: the key holds a secret)"
    : singleQuotedShown(value);
}

/** The keys whose value is a secret, as config messages name them (`secret`, `*_token`, `api_key`, ...). */
const SECRET_VALUE_KEY = /(?:^|_)(?:secret|token|password)$|^(?:api_key|authorization)$/i;

/** What the value of `key` is: a `regex` filter's pattern, or a template (or other text). */
function noun(key: string): string {
  return key === "regex" ? "pattern" : "template";
}

/**
 * A mapping that an unquoted `{a.b}` (or `{a, b}`) became: every value null. The template it was, when
 * that can be told (one key that is a placeholder path), else undefined.
 */
function placeholders(input: unknown): { template?: string } | undefined {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  const entries = Object.entries(input);
  if (entries.length === 0 || entries.some(([, value]) => value !== null)) return undefined;
  const [only] = entries;
  return entries.length === 1 && only !== undefined && /^[^\s{}]+$/.test(only[0])
    ? { template: `{${only[0]}}` }
    : {};
}

/**
 * The hint for a key that takes text (`prompt`, a `deliver_extra` value, `coalesce.key`, ...) at `at` given
 * such a mapping (or, for a template, a list), or undefined. `shown` false: the value is a secret's and is not
 * written back.
 */
export function unquotedTemplateHint(
  at: readonly PropertyKey[],
  input: unknown,
  shown = true,
): string | undefined {
  const key = String(at.at(-1));
  // `prompt: [ALERT]`, `regex: [A-Z]`: a list to YAML; told back when it is one plain item.
  if (Array.isArray(input) && input.length > 0 && (isTemplateKey(at) || key === "regex")) {
    const [only] = input;
    const back =
      input.length === 1 && typeof only === "string" ? `: ${key}: ${singleQuotedShown(`[${only}]`)}` : "";
    return ` — ${meaning("[")}: put the ${noun(key)} in quotes${back}`;
  }
  const found = placeholders(input);
  if (found === undefined) return undefined;
  if (!shown) return ` — ${HINT} value in quotes`;
  return found.template === undefined
    ? ` — ${HINT} ${noun(key)} in quotes`
    : ` — ${HINT} ${noun(key)} in quotes: ${key}: ${singleQuotedShown(found.template)}`;
}

/**
 * `events: {push, pull_request}`: braces make a mapping of null values, where a list takes square brackets.
 * The hint for a key that takes a list given such a mapping, with the list written back, or undefined.
 */
export function bracedListHint(key: string, input: unknown): string | undefined {
  if (placeholders(input) === undefined) return undefined;
  const items = Object.keys(input as object);
  const plain = items.every((item) => /^[^\s,:#[\]{}'"](?:[^,:#[\]{}]*[^\s,:#[\]{}])?$/.test(item));
  return plain
    ? ` — a list is written in square brackets: ${key}: [${items.join(", ")}]`
    : " — a list is written in square brackets, not braces";
}

/**
 * `  prompt: [{repo}] {title}  # comment` → key and value, when the value starts with a character YAML gives a
 * meaning (`{` mapping, `[` list, `*` alias, `&` anchor, `!` tag, `@` and a backquote reserved, `%`
 * directive). A `# ` after a space is cut as the comment it likely is; `#{id}` is kept, as the text it is
 * once the value is quoted.
 */
const INDICATOR_VALUE = /^\s*(?:-\s+)?([A-Za-z0-9_.-]+):[ \t]+([{[*&!@`%][^\n]*?)(?:[ \t]+#(?:[ \t].*)?)?$/;

/** The parser's words for a value that starts with such a character and goes on past what it opened. */
const INDICATOR_ERROR =
  /^(?:Unexpected (?:scalar|flow-map-start|flow-seq-start|tag|anchor|alias) at node end|Plain value cannot start with)/;

/** A `{placeholder}` (no spaces): what makes a value a template rather than a mapping or a list. */
const PLACEHOLDER = /\{[^\s{}:,]+\}/;

function meaning(first: string): string {
  if (first === "{") return "YAML reads a value that starts with { as a mapping";
  if (first === "[") return "YAML reads a value that starts with [ as a list";
  return `YAML gives a value that starts with ${first} a meaning of its own`;
}

/**
 * The hint for a YAML syntax error on `line` whose value is a template starting with such a character
 * (`prompt: {title} was opened`, `prompt: [{repo}] {title}`, `prompt: @{user} pinged`) or a `regex` pattern
 * (`regex: [a-z]+`), or undefined: a mapping or list with text after it (`events: [push] x`, `{chat_id: 1} x`)
 * holds no placeholder.
 */
export function unquotedTemplateLine(message: string, line: string): string | undefined {
  if (!INDICATOR_ERROR.test(message)) return undefined;
  const match = INDICATOR_VALUE.exec(line);
  if (match === null) return undefined;
  const [, key, value] = match as unknown as [string, string, string];
  // A regex's value is a pattern whatever it holds (`[a-z]+`); any other value, one with a placeholder.
  if (key !== "regex" && (!PLACEHOLDER.test(value) || value.startsWith("{{"))) return undefined;
  // `deliver_extra: {chat_id: {chat.id} x}` or `filters: [{field: x, regex: {3}x}]`: the mapping is meant;
  // the value at fault is inside it, and quoting the whole line would be wrong: the parser's words alone.
  if (/:\s/.test(/^[{[]+[^{}[\]]*/.exec(value)?.[0] ?? "")) return undefined;
  return ` — ${meaning(value[0] as string)}: put the ${noun(key)} in quotes: ${key}: ${quotedBackValue(key, value.trim())}`;
}

/** The parser's words for a plain value that starts with `@`, a backquote or `%`, and that character. */
const RESERVED_LEAD = /^Plain value cannot start with (?:reserved|directive indicator) character (\S)/;

/**
 * `chat_id: @mychannel` (a Telegram channel's name), `equals: @octocat` inside a `{...}` filter, `secret: %x…`:
 * a value YAML never reads plain, whatever follows. The hint for such a syntax error at `column` (1-based)
 * of `line`, the value written back in quotes after its key (a credential's not), or undefined.
 */
export function reservedLeadHint(message: string, line: string, column: number): string | undefined {
  const first = RESERVED_LEAD.exec(message)?.[1];
  if (first === undefined || line[column - 1] !== first) return undefined;
  const lead = ` — YAML reserves ${first} at the start of a value: put the`;
  const before = line.slice(0, column - 1);
  const rest = line.slice(column - 1);
  const block = /^\s*(?:-\s+)?([A-Za-z0-9_.-]+):[ \t]+$/.exec(before)?.[1];
  if (block !== undefined) {
    const value = rest.replace(/[ \t]+#(?:[ \t].*)?$/, "").trim();
    return `${lead} value in quotes: ${block}: ${quotedBackValue(block, value)}`;
  }
  const flow = /[{,][ \t]*([A-Za-z0-9_.-]+):[ \t]*$/.exec(before)?.[1];
  if (flow !== undefined) {
    const value = (/^[^,}\]]*/.exec(rest)?.[0] ?? "").trim();
    return `${lead} value in quotes: ${flow}: ${quotedBackValue(flow, value)}`;
  }
  return `${lead} item in quotes`;
}

/** `regex: [` or `regex: {` after the `{` or `,` of a filter written as a `{flow: mapping}`. */
const FLOW_REGEX = /[{,][ \t]*regex:[ \t]+([{[])/g;

/**
 * `filters: [{field: key, regex: [A-Z]+-[0-9]+}]`: the same mistake as `regex: [A-Z]+` on a line of its own,
 * inside a filter written on one line, where the parser stops at the text after the `]`. The hint for a
 * syntax error at `column` (1-based) of `line` when a `regex:` of a flow mapping before it starts with `[` or
 * `{`, or undefined. Without the pattern written back: inside the mapping, where it ends is not certain.
 */
export function unquotedFlowPatternHint(message: string, line: string, column: number): string | undefined {
  if (!INDICATOR_ERROR.test(message)) return undefined;
  let first: string | undefined;
  for (const match of line.matchAll(FLOW_REGEX)) {
    if (match.index + match[0].length > column) break;
    first = match[1];
  }
  return first === undefined
    ? undefined
    : ` — ${meaning(first)}: put the pattern in quotes, inside the {...} too: regex: '<the pattern>'`;
}

/** The keys whose values are templates: a route's `prompt`, `deliver_extra` values and `coalesce.key`. */
function isTemplateKey(at: readonly PropertyKey[]): boolean {
  const [parent, key] = at.slice(-2);
  if (at[0] !== "platforms" || at[1] !== "webhook" || !at.includes("routes")) return false;
  return (
    (key === "prompt" && at.length >= 5) ||
    (parent === "deliver_extra" && at.length >= 6) ||
    (parent === "coalesce" && key === "key")
  );
}

/** A filter's value that is text to compare (`equals`, ..., an `in` item): `#general` is one, not a comment. */
function isFilterValue(at: readonly PropertyKey[]): boolean {
  const [parent, key] = at.slice(-2).map(String);
  if (!at.includes("filters")) return false;
  return (
    ["equals", "not_equals", "contains", "regex", "in_file"].includes(key as string) ||
    (parent === "in" && /^\d+$/.test(key as string))
  );
}

/**
 * A key whose value is text (a template, a filter's value): a {mapping} there is a template or pattern written
 * unquoted, which the hints above name, not a mapping of settings. `at` as the configuration reads it: a path
 * in config.yaml without its merge keys (`<<`, a merged list's index).
 */
export function takesText(at: readonly string[]): boolean {
  return isTemplateKey(at) || isFilterValue(at);
}

/** `a.filters.0.in.1` as messages write it: `a.filters[0].in[1]`. */
export function keyPath(at: readonly string[]): string {
  return at.map((key, i) => (/^\d+$/.test(key) ? `[${key}]` : `${i === 0 ? "" : "."}${key}`)).join("");
}

/**
 * A value cut short by a YAML comment: a space then `#` starts one, so `prompt: PR #{number} opened` is the
 * prompt `PR` (`prompt: #{number}`: no prompt at all, the payload dump) and a filter's `equals: #general` (a
 * Slack channel) or `regex: #\d+` compares with null, without a word. `value` is the plain scalar YAML read at
 * `at` (null: none), `after` the text that follows it on its line (its comment). The refusal, or undefined:
 * for a template with text before the `#`, when no placeholder (`#{`) was cut off; for a filter's value,
 * when something was read before the `#`; for both, when the comment starts with a space (`x  # note`).
 * `rules`: the path the rules read, `at` without its merge keys (`deliver_extra.<<.chat_id` is a
 * `deliver_extra` value); the message names `at`, where the value is written.
 */
export function templateCutByComment(
  at: readonly string[],
  value: string | null,
  after: string,
  rules: readonly string[] = at,
): string | undefined {
  const template = isTemplateKey(rules);
  const key = at.at(-1) as string;
  // `secret: #Xy7…`: no secret at all to YAML (a route then takes the global one), and never quoted back.
  if (value === null && SECRET_VALUE_KEY.test(key) && /^[ \t]*#\S/.test(after))
    return `${keyPath(at)}: YAML read no value: a # after a space starts a comment, so the secret written after it was dropped (not shown: the key holds a secret) — put it in quotes: ${key}: '<the value>'`;
  if (!template && !(value === null && isFilterValue(rules))) return undefined;
  // After text, only a placeholder (`PR #{number}`) is taken for part of the value; with nothing before
  // it, any `#word` is (`chat_id: #general`).
  const comment = (
    template && value !== null
      ? /^[ \t]*(#\{[^\n]*?)[ \t]*(?:\r?\n|$)/
      : /^[ \t]*(#\S[^\n]*?)[ \t]*(?:\r?\n|$)/
  ).exec(after)?.[1];
  if (comment === undefined) return undefined;
  const read = value === null ? "no value" : `only ${JSON.stringify(textWithoutUrlCredentials(value))}`;
  const written = singleQuotedShown(value === null ? comment : `${value} ${comment}`);
  const fix = /^\d+$/.test(key) ? `- ${written}` : `${key}: ${written}`;
  return `${keyPath(at)}: YAML read ${read}: a # after a space starts a comment, so ${JSON.stringify(textWithoutUrlCredentials(comment))} was dropped — put the ${template ? "template" : "value"} in quotes: ${fix}`;
}

/** `  prompt: New PR: {pull_request.title}`: key, value (a `# comment` cut). */
const COLON_VALUE =
  /^\s*(?:-\s+)?([A-Za-z0-9_.-]+):[ \t]+([^'"\s][^\n]*?:[ \t][^\n]*?)(?:[ \t]+#(?:[ \t].*)?)?$/;

/**
 * `prompt: New PR: {pull_request.title}` unquoted: a `: ` inside a value starts another key, which YAML
 * refuses ("Nested mappings are not allowed in compact mappings"). The hint, with the value quoted, or
 * undefined.
 */
export function colonInValueHint(message: string, line: string): string | undefined {
  if (!/^Nested mappings are not allowed in compact mappings/.test(message)) return undefined;
  const match = COLON_VALUE.exec(line);
  if (match === null) return undefined;
  const [, key, value] = match as unknown as [string, string, string];
  return ` — a ": " inside a value starts another key in YAML: put the value in quotes: ${key}: ${quotedBackValue(key, value.trim())}`;
}

/** The keys of a route, a filter and `platforms.webhook`: what follows a left-out comma in a {mapping}. */
const ENTRY_KEYS: ReadonlySet<string> = new Set([
  ...Object.keys(routeShape),
  ...WEBHOOK_SETTINGS,
  "field",
  ...FILTER_OPERATORS,
  "all",
  "any",
  "not",
]);

/**
 * `filters: [{field: action in: [opened]}]`: inside a {mapping} written on one line, a ": " after a value
 * starts another key, which YAML refuses ("Block collections are not allowed within flow collections"), most
 * often for a comma left out between two entries. Names that key when it is one (never the value before it,
 * which may be a secret); otherwise says to quote a value holding ": ".
 */
export function flowEntryColonHint(message: string, line: string, column: number): string | undefined {
  if (!/^Block collections are not allowed within flow collections/.test(message)) return undefined;
  const rest = line.slice(column - 1);
  const colon = rest.search(/:[ \t]/);
  if (colon === -1) return undefined;
  const words = rest.slice(0, colon).trim().split(/\s+/);
  const key = words.at(-1);
  if (words.length >= 2 && key !== undefined && ENTRY_KEYS.has(key))
    return ` — a comma is missing before ${key}: inside a {mapping} written on one line, entries are separated by commas ({…, ${key}: …}), so YAML read "${key}:" as part of the value before it`;
  return ` — inside a {mapping} written on one line, a ": " in a value starts another key: put the value in quotes, or add the comma missing between two entries`;
}

/** `  prompt: "Review" this PR`: key, and a value that starts with a quote (a `# comment` after a space cut). */
const QUOTED_VALUE = /^\s*(?:-\s+)?([A-Za-z0-9_.-]+):[ \t]+((["'])[^\n]*?)(?:[ \t]+#(?:[ \t].*)?)?$/;

/**
 * `prompt: "Review" this PR` or `prompt: 'it's broken'`: a quoted value ends at its closing quote, and YAML
 * refuses the text after it ("Unexpected scalar at node end"). The hint, with the value written back in
 * single quotes (a `'` inside doubled), or undefined.
 */
export function textAfterQuoteHint(message: string, line: string): string | undefined {
  if (!/^Unexpected scalar at node end/.test(message)) return undefined;
  const match = QUOTED_VALUE.exec(line);
  if (match === null) return undefined;
  const [, key, written, quote] = match as unknown as [string, string, string, string];
  const value = written.trim();
  // `'it's broken'` meant as one quoted value; `"Review" this PR` as text that starts with a quoted word.
  const meant = value.length > 1 && value.endsWith(quote) ? value.slice(1, -1) : value;
  const inside = quote === "'" ? " (inside 'single quotes' a ' is written twice: '')" : "";
  return ` — a value that starts with a ${quote} ends at the next ${quote}, so the text after it is not part of the value${inside}: write ${key}: ${quotedBackValue(key, meant)}`;
}

/** A line's `key: value` (a `# comment` cut), for the tag and alias refusals below. */
const KEY_VALUE = /^\s*(?:-\s+)?([A-Za-z0-9_.-]+):[ \t]+([^\s][^\n]*?)(?:[ \t]+#(?:[ \t].*)?)?$/;

/** Whether `line` is `key: value` with a credential's key (its value must not be quoted in a message). */
export function credentialLine(line: string): boolean {
  const key = KEY_VALUE.exec(line)?.[1];
  return key !== undefined && CREDENTIAL_NAME.test(key) && key !== "key";
}

/**
 * `regex: '!wip'` as the fix for `line`, when the line is `key: value` and the value starts with `start` (not
 * inside a `{flow: mapping}` on that line, whose whole text quoted would be wrong).
 */
function quotedBack(line: string, start: string): string {
  const match = KEY_VALUE.exec(line);
  const value = match?.[2]?.trim();
  return match === null || value === undefined || !value.startsWith(start)
    ? ""
    : `: ${match[1]}: ${quotedBackValue(match[1] as string, value)}`;
}

/**
 * `regex: !wip fix` or `prompt: !urgent deploy {x}`: YAML reads a leading `!word` as a tag, which svc does not
 * know, and drops it from the value (`fix`, `deploy {x}`) with only a warning. The refusal for the tag at
 * `line` (the file's line text).
 */
export function unknownTagProblem(tag: string, line: string): string {
  // A secret that starts with `!`: the tag is its first word, not shown.
  const shown = credentialLine(line) ? "a !word" : tag;
  return `${shown} at the start of a value is a YAML tag, which YAML drops from the value — put the value in quotes${quotedBack(line, tag)}`;
}

/**
 * `regex: *.md`: YAML reads a leading `*name` as an alias of an anchor `&name` the file does not have. The
 * advice for the alias at `line`.
 */
export function unknownAliasProblem(line: string): string {
  return `a value that starts with * names an anchor (&name) to YAML — put the value in quotes${quotedBack(line, "*")}`;
}

/**
 * `{field: pull_request.draft, equals: no}`: YAML 1.2 reads an unquoted yes/no/on/off as text, so the filter
 * compared a boolean field with the text "no" and never matched (not_equals always did), without a word. The
 * refusal for such a value of a filter on a payload field, or undefined.
 */
export function yamlOneOneBoolean(at: readonly string[], value: string): string | undefined {
  const word = /^(yes|no|on|off)$/i.exec(value)?.[1];
  if (word === undefined) return undefined;
  const bool = /^(yes|on)$/i.test(word) ? "true" : "false";
  return `${keyPath(at)}: ${word} is text in YAML 1.2, not a boolean — write ${bool} to compare with a true/false field, or ${singleQuoted(word)} in quotes to compare with that text`;
}

/**
 * `{field: s, contains: True}` or `equals: Null`: YAML reads an unquoted True, FALSE, Null or ~ (and, under
 * `%YAML 1.1`, yes, On, y, ...) as a boolean or null whose text is another (`true`, `null`): contains looked
 * for "true" in a string ("untrue" matched, "True story" did not), and equals compared with the boolean where
 * a sender may send the text (Python's `str(True)` is "True"), without a word. The refusal for such a value of
 * a filter on a payload field, or undefined (`true`, `false` and `null` as written; a value left empty, null).
 */
export function wordReadAsOtherText(
  at: readonly string[],
  written: string,
  value: unknown,
): string | undefined {
  if (typeof value !== "boolean" && value !== null) return undefined;
  const read = String(value);
  if (written === read || written === "") return undefined;
  if (at.at(-1) === "contains")
    return value === null
      ? `${keyPath(at)}: YAML reads ${written} as null, which contains finds in a list only (null is no text), never the text "${written}" in a string — put it in quotes to look for that text: contains: ${singleQuoted(written)} (write null to find a null in a list)`
      : `${keyPath(at)}: YAML reads ${written} as the boolean ${read}, so contains looks for the text "${read}" in a string, not "${written}" — put it in quotes to look for that text: contains: ${singleQuoted(written)} (write ${read} to find the boolean in a list)`;
  const [what, field] =
    value === null ? ["null", "a null field"] : [`the boolean ${read}`, "a true/false field"];
  return `${keyPath(at)}: YAML reads ${written} as ${what}, not as text — write ${read} to compare with ${field}, or ${singleQuoted(written)} in quotes to compare with that text`;
}

/**
 * `{field: title, contains: 2.0}`: YAML reads an unquoted 2.0 (1e3, 007, +5, .5) as a number whose text is
 * another ("2"), and contains looks for the needle's text in a string field, so the filter also matched
 * "v12" without a word. The refusal for such a number, or undefined (a number whose text is the one written:
 * 42, 1.5; a whole number past 2^53, kept as its digits).
 */
export function numberReadAsOtherText(
  at: readonly string[],
  written: string,
  value: unknown,
): string | undefined {
  if (typeof value !== "number" && typeof value !== "bigint") return undefined;
  if (typeof value === "number" && !Number.isFinite(value)) return undefined;
  const read = String(value);
  if (read === written) return undefined;
  return `${keyPath(at)}: YAML reads ${written} as the number ${read}, so contains looks for the text "${read}" in a string, not "${written}" — put it in quotes to look for that text: contains: ${singleQuoted(written)} (write ${read} to find the number in a list)`;
}
