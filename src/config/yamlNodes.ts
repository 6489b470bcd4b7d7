import {
  type Document,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type LineCounter,
  Pair,
  Scalar,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";
import { SvcError } from "../errors.js";
import { isTextField } from "../streams/filters.js";
import { inexactFilterNumber } from "./inexactFilterNumber.js";
import {
  keyPath,
  numberReadAsOtherText,
  takesText,
  templateCutByComment,
  wordReadAsOtherText,
  yamlOneOneBoolean,
} from "./unquotedTemplate.js";
import { CREDENTIALS_LEFT_OUT, textWithoutUrlCredentials } from "./urlCredentials.js";
import { type AliasTargets, aliasTargets } from "./yamlAliases.js";

/**
 * Checks and adjusts config.yaml as parsed, before it becomes plain values:
 * - a key is the text written (`007:` is the route 007, not 7);
 * - a `__proto__` key is refused: a JavaScript object cannot hold it as an ordinary name, so the route,
 *   server or key would otherwise vanish without a word;
 * - a number under `deliver_extra` keeps the text written in the file: those values are ids (a Slack
 *   `thread_ts: 1700000000.000100` read as a float is `1700000000.0001`, another thread), and so does a
 *   route's `cron_job` (a job id is 8 random hex characters: `00012345` or `1234e567` copied unquoted);
 * - so does a number among an MCP server's `args`, `env` and `headers` values, which reach the process
 *   or the request as text (`PYTHON_VERSION: 3.10` is not `3.1`, `UMASK: 0755` is not `755`), and in its
 *   `client_cert` list (a key password `[me.crt, me.key, 0123]`, which a number would refuse or lose);
 *   an argument written `~` (YAML's null) is the home directory's `~`;
 * - so does a number or boolean in an MCP server's `tools.include` and `tools.exclude` (a name or its list),
 *   which name tools by their text (`include: [2024, 3.10, True]` names the tools "2024", "3.10" and "True");
 * - and a platform's ids (`home_channel`, WhatsApp's `phone_number_id`, QQ's `app_id`, the number SMS and
 *   Signal send from): a phone number `home_channel: +15552223333` read as a number is `15552223333`,
 *   `04915112345678` loses its 0;
 * - each of those rules reads a key a merge key gives as one written in the mapping that takes it
 *   (`two: {<<: *one}`, `deliver_extra: {<<: {thread_ts: 1700000000.000100}}`);
 * - and the values a filter on a header or the event type compares (`equals`, `not_equals`, `contains`,
 *   `in` items): those are text, so `{field: headers.X-Version, equals: 1.0}` means the text `1.0`, not 1, and
 *   `equals: True` the text `True` (Python's `str(True)`), not the boolean whose text is `true`; a filter
 *   whose field (or value) a merge key or an alias gives (`{<<: *hf, equals: False}`, `{field: *f, …}`) is read
 *   by its field as well;
 * - a filter value on a payload field that YAML reads as something else than written is refused: `equals: no`
 *   (text in YAML 1.2), `equals: True` or `contains: ~` (a boolean or null whose text is another),
 *   `contains: 2.0` (the number 2, whose text is searched for), `equals: 1234567890123456789.0` (a float past
 *   2^53, rounded: it matches the neighbouring ids too);
 * - a `{key:value}` entry without a space after its colon is refused: YAML reads it as one key with no value,
 *   which would be dropped as a key left empty (`{secret:x}` → a route without a secret).
 */
export function prepareConfigDocument(doc: Document, text: string, file: string, lines: LineCounter): void {
  // Each refusal is kept and the walk goes on, so one pass names every line to fix (two routes' secrets cut
  // by a `#` are two problems, not one per run of `svc config check`).
  const problems: string[] = [];
  const refused = (check: () => void): void => {
    try {
      check();
    } catch (err) {
      if (!(err instanceof SvcError) || err.code !== "config_invalid") throw err;
      problems.push(err.message);
    }
  };
  const filters = new FilterValues(doc, text);
  // The values refused as cut by a `#`, by where they end: a filter's copy of a value a merge key gives (see
  // FilterValues) is the same text, named once, where it is written.
  const cut = new Set<number>();
  // `path` is where a node is written, as messages name it; `rules` is the path the rules above read (and the
  // template and filter-value rules of unquotedTemplate.ts: a `#` cut, a {mapping} for a template), the
  // same without the merge keys (`<<`, and a merged list's index): a key a merge gives is the taking
  // mapping's, so `two: {<<: {args: [3.10]}}` holds mcp_servers.two.args, and `deliver_extra: {<<: {...}}`
  // the route's ids. A node an alias names is read where its anchor is written.
  // `merged`: the node is the value of a `<<`.
  const walk = (
    node: unknown,
    path: readonly string[],
    rules: readonly string[],
    idValues: boolean,
    merged = false,
  ): void => {
    if (isSeq(node)) {
      // The items of `<<: [*a, {...}]` are merged into the mapping that holds the `<<`, as one `<<: {...}` is:
      // mappings, not values.
      const ids = idValues && !merged;
      const serverArgs = !merged && isServerArgs(rules);
      for (const [i, item] of node.items.entries()) {
        const at = [...path, String(i)];
        if (!node.flow) refused(() => refuseFoldedItem(item, at, text, file, lines));
        // An item of a merged list is a mapping merged in, no value of the taker's: no text rule reads it.
        if (!merged)
          refused(() => refuseCommentedTemplate(item, at, [...rules, String(i)], text, file, lines, cut));
        if (ids || serverArgs) node.items[i] = filters.own(item) as (typeof node.items)[number];
        if (ids) keepNumberText(node.items[i], text);
        if (serverArgs) keepTilde(node.items[i], text);
        walk(item, at, merged ? rules : [...rules, String(i)], merged && idValues);
      }
      return;
    }
    if (!isMap(node)) return;
    if (node.flow && !takesText(rules)) refused(() => refuseUnspacedFlowKeys(node, path, file, lines));
    if (filters.has(node)) {
      const values = filters.keepText(node);
      refused(() => refuseMisreadFilterValues(values, path, text, file, lines));
    }
    const names = new Set<string>();
    for (const pair of node.items) {
      refused(() => refuseCollectionKey(pair.key, path, text, file, lines));
      const merge = isScalar(pair.key) && typeof pair.key.value === "symbol";
      keepKeyText(pair.key, text);
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const at = [...path, key];
      const ruled = merge ? rules : [...rules, key];
      if (key !== "<<" && names.has(key))
        refused(() => refuseNameTwice(pair.key, key, path, text, file, lines));
      names.add(key);
      if (key === "__proto__") {
        const offset = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        const line = offset === undefined ? "" : ` line ${lines.linePos(offset).line}:`;
        problems.push(
          `${file}:${line} ${at.join(".")}: "__proto__" cannot be used as a name (JavaScript reserves it) — rename it`,
        );
        continue;
      }
      // The value of `<<` itself is the mapping merged, no value of the taker's (`deliver_extra: {<<: #x}` is
      // no template: refused as no mapping to merge).
      if (!merge) refused(() => refuseCommentedTemplate(pair.value, at, ruled, text, file, lines, cut));
      if (!merge && (idValues || key === "cron_job" || isPlatformId(ruled))) {
        pair.value = filters.own(pair.value);
        keepNumberText(pair.value, text);
      }
      if (isToolFilter(ruled)) {
        pair.value = filters.own(pair.value);
        if (isSeq(pair.value))
          pair.value.items = pair.value.items.map((item) => filters.own(item)) as typeof pair.value.items;
        keepToolNameText(pair.value, text);
      }
      // A merged mapping's values are the taker's: under deliver_extra or env, its ids are too.
      walk(pair.value, at, ruled, merge ? idValues : key === "deliver_extra" || isServerText(ruled), merge);
    }
  };
  walk(doc.contents, [], [], false);
  if (problems.length > 0) throw new SvcError("config_invalid", problems.join("\n"));
}

/**
 * `1:` and `"1":` (or `true:` and `'true':`) are two keys to YAML, a number and a text, which the parser lets
 * stand side by side; a name is its text, so both would be one route (or setting) and the later one would
 * replace the other without a word. Refused at the second, as YAML refuses a key written twice.
 */
function refuseNameTwice(
  node: unknown,
  key: string,
  path: readonly string[],
  text: string,
  file: string,
  lines: LineCounter,
): never {
  const range = isScalar(node) ? node.range : undefined;
  const line = range ? ` line ${lines.linePos(range[0]).line}:` : "";
  const written = range ? text.slice(range[0], range[1]).trim() : key;
  throw new SvcError(
    "config_invalid",
    `${file}:${line} ${path.length === 0 ? "(top level)" : path.join(".")}: the name ${key} is written twice in the same mapping (as ${written} here: YAML reads one as a number or boolean and the other as text, but a name is its text) — keep one, or rename one of them`,
  );
}

/**
 * `events:` then `- push` and a `- pull` indented past it: YAML reads the second line as more of the first
 * item's text (`push - pull`, an event no sender names), so the list silently has one item fewer and the
 * route ignores what it was meant to accept. Refused at the folded line, quoting no item (one may be a secret).
 */
function refuseFoldedItem(
  node: unknown,
  at: readonly string[],
  text: string,
  file: string,
  lines: LineCounter,
): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN || node.range === undefined || node.range === null)
    return;
  const [start, end] = node.range;
  const folded = /\n[ \t]*-[ \t]/.exec(text.slice(start, end));
  if (folded === null) return;
  const dash = start + folded.index + folded[0].indexOf("-");
  const item = lines.linePos(start);
  // The item's own `-` is the last one before its text on its line.
  const itemDash = text.lastIndexOf("-", start - 1);
  const column = itemDash === -1 ? item.col : lines.linePos(itemDash).col;
  throw new SvcError(
    "config_invalid",
    `${file}: line ${lines.linePos(dash).line}: ${keyPath(at.slice(0, -1))}: this - is indented further than the - of the item above it (line ${item.line}, column ${column}), so YAML reads the line as more of that item's text, not as an item of its own — write each - of the list at column ${column}`,
  );
}

/** A key, then a colon with no space after it (`secret:x`, `enabled:true`), not a URL (`http://...`). */
const UNSPACED_KEY = /^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?![\s/])/;

/**
 * `{secret:x, events: [push]}`: in a {flow mapping} YAML reads `secret:x` as one key with no value, which the
 * loader would drop as a key left empty (a route without its secret, `deliver_only:true` off, without a word).
 * Refused at its line, naming the key only (the rest may be a secret), as a block line `port:8644` is.
 */
function refuseUnspacedFlowKeys(
  node: YAMLMap,
  path: readonly string[],
  file: string,
  lines: LineCounter,
): void {
  for (const pair of node.items) {
    const key = pair.key;
    if (pair.value !== null || !isScalar(key) || key.type !== Scalar.PLAIN || typeof key.value !== "string")
      continue;
    const name = UNSPACED_KEY.exec(key.value)?.[1];
    if (name === undefined) continue;
    const line =
      key.range === undefined || key.range === null ? "" : ` line ${lines.linePos(key.range[0]).line}:`;
    throw new SvcError(
      "config_invalid",
      `${file}:${line} ${path.length === 0 ? "(top level)" : keyPath(path)}: ${name}:… has no space after its colon, so YAML reads it as one key with no value — write ${name}: <value> (a colon after a key needs a space after it)`,
    );
  }
}

/**
 * `prompt: PR #{number}` unquoted lost `#{number}` to a YAML comment: refused (src/config/unquotedTemplate.ts).
 * `rules` is the path the rule reads (without merge keys), `at` where the value is written, as the message
 * names it (`...deliver_extra.<<.chat_id`). `cut`: where the values refused so far end; one of them is not
 * refused again.
 */
function refuseCommentedTemplate(
  node: unknown,
  at: readonly string[],
  rules: readonly string[],
  text: string,
  file: string,
  lines: LineCounter,
  cut: Set<number>,
): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN) return;
  if (typeof node.value !== "string" && node.value !== null) return;
  const [, end, nodeEnd] = node.range ?? [];
  if (end === undefined || nodeEnd === undefined || cut.has(end)) return;
  const problem = templateCutByComment(at, node.value, text.slice(end, nodeEnd), rules);
  if (problem === undefined) return;
  cut.add(end);
  throw new SvcError("config_invalid", `${file}: line ${lines.linePos(end).line}: ${problem}`);
}

const TEXT_OPERATORS = new Set(["equals", "not_equals", "contains"]);

/**
 * Values of a filter on a payload field that YAML reads as something else than meant
 * (src/config/unquotedTemplate.ts): `equals: no`, text to YAML 1.2, meant as false; `equals: True`, the
 * boolean, where the text may be meant; `contains: 2.0`, the number 2, whose text "2" is what a string field
 * is searched for. A value written elsewhere (a merge key or an alias gives it) is named at its line, and at
 * the line of the `<<` or alias that brings it into this filter.
 */
function refuseMisreadFilterValues(
  values: FilterRead,
  path: readonly string[],
  text: string,
  file: string,
  lines: LineCounter,
): void {
  if (values.asText !== false) return;
  const check = ({ node: value, via }: ReadValue, at: readonly string[]) => {
    if (!isScalar(value) || value.type !== Scalar.PLAIN || value.range === undefined || value.range === null)
      return;
    const written = text.slice(value.range[0], value.range[1]);
    const problem =
      wordReadAsOtherText(at, written, value.value) ??
      (at.at(-1) === "contains"
        ? numberReadAsOtherText(at, written, value.value)
        : typeof value.value === "string"
          ? yamlOneOneBoolean(at, value.value)
          : inexactFilterNumber(at, written, value.value));
    if (problem === undefined) return;
    const line = lines.linePos(value.range[0]).line;
    const given = isNode(via) && via.range ? lines.linePos(via.range[0]).line : undefined;
    const how = isAlias(via) ? `*${via.source}` : "the merge key <<";
    const where =
      given === undefined || given === line
        ? `line ${line}`
        : `line ${line} (given to this filter by ${how} on line ${given})`;
    throw new SvcError("config_invalid", `${file}: ${where}: ${problem}`);
  };
  for (const [key, value] of values.read) {
    if (Array.isArray(value)) for (const [i, item] of value.entries()) check(item, [...path, key, String(i)]);
    else check(value as ReadValue, [...path, key]);
  }
}

/** A filter's key and where its value comes from: `from` is the mapping that writes it. */
interface FilterPair {
  readonly value: unknown;
  readonly from: YAMLMap;
  /** The `<<` key of this filter through which a merge gives the value. */
  readonly merge?: unknown;
}

/** A value a filter compares, as it will be read: the node, and the `<<` or alias that brings it (not own). */
interface ReadValue {
  readonly node: unknown;
  readonly via?: unknown;
}

/** A filter's compared values (`in` as its items) as it reads them, and whether its field is a text field. */
interface FilterRead {
  readonly asText: boolean | undefined;
  readonly read: ReadonlyMap<string, ReadValue | readonly ReadValue[]>;
}

/**
 * The filters of a config (the mappings under a `filters` key) and the values each compares. A filter on a
 * header or the event type compares text (keepText); a filter's value may be written in another mapping,
 * given by a merge key (`{<<: *hf, equals: False}`) or an alias (`equals: *v`): such a node is read as the
 * filter that writes it reads it (YAML gives every taker the same node), so a filter that reads it otherwise
 * takes a copy as its own key, read as its own field reads it. Which filters turn which nodes to text is
 * known before any is changed, so the order in which the walk reaches them does not matter; aliases are
 * resolved from one visit of the document (yamlAliases.ts).
 */
class FilterValues {
  private readonly targets: AliasTargets;
  private readonly filters = new Set<YAMLMap>();
  private readonly pairsOf = new Map<YAMLMap, ReadonlyMap<string, FilterPair>>();
  /** The scalars a text filter writes as its own values: each becomes the text written. */
  private readonly textNodes = new Set<unknown>();

  constructor(
    doc: Document,
    private readonly text: string,
  ) {
    this.targets = aliasTargets(doc);
    // A mapping under a `<<` key of a filter (a merge source) is no filter of its own: a filter merging it is
    // judged on its copy of each value (keepText). The members of its `not`, `any` and `all` are filters, as
    // the filter that takes them reads them whole. One a filters list gives by an alias (`filters: [*pf]`) is
    // a filter wherever written, and so are its members; a source an alias names (`<<: *src`) is read as one
    // written there. Each node is read once as each.
    const read = new Map<unknown, Set<Finding>>();
    const find = (node: unknown, as: Finding): void => {
      if (isAlias(node)) {
        if (as !== "other") find(this.targets(node), as);
        return;
      }
      if (!isMap(node) && !isSeq(node)) return;
      const done = read.get(node) ?? new Set<Finding>();
      if (done.has(as)) return;
      done.add(as);
      read.set(node, done);
      if (isSeq(node)) {
        for (const item of node.items) find(item, as);
        return;
      }
      if (as === "filter") this.filters.add(node);
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        if (isMergeKey(pair.key)) find(pair.value, as === "other" ? "other" : "source");
        else if (as === "filter" || (as === "source" && GROUPS.has(key))) find(pair.value, "filter");
        else find(pair.value, as === "other" && key === "filters" ? "filter" : "other");
      }
    };
    find(doc.contents, "other");
    for (const filter of this.filters) {
      if (this.asText(filter) !== true) continue;
      for (const [key, { value, from }] of this.pairs(filter)) {
        if (from !== filter || !isOperator(key, this.target(value))) continue;
        if (isSeq(value)) for (const item of value.items) this.textNodes.add(item);
        else this.textNodes.add(value);
      }
    }
  }

  has(node: YAMLMap): boolean {
    return this.filters.has(node);
  }

  /**
   * A value a rule reads as its text (an id, `deliver_extra`, an MCP argument or tool name): an alias of a
   * scalar becomes a copy of it, so the rule leaves the anchored node as its own place reads it
   * (`thread_ts: *ts` with `&ts 1700000000.0001` a payload filter's number keeps its digits, the filter its
   * number). Anything else is itself.
   */
  own(node: unknown): unknown {
    const target = this.target(node);
    if (!isAlias(node) || !isScalar(target)) return node;
    const copy = target.clone() as Scalar;
    delete copy.anchor;
    if (parsedAs.has(target)) copy.value = parsedAs.get(target);
    return copy;
  }

  /** An alias's anchored node, anything else itself. */
  private target(node: unknown): unknown {
    return isAlias(node) ? this.targets(node) : node;
  }

  /** Whether a filter's field (its own, a merged one, or an alias) is a text field; undefined without one. */
  private asText(filter: YAMLMap): boolean | undefined {
    const field = this.target(this.pairs(filter).get("field")?.value);
    return isScalar(field) && typeof field.value === "string" ? isTextField(field.value) : undefined;
  }

  /**
   * A filter's keys as the configuration reads them: its own, then those a merge key gives (`{<<: *hf,
   * equals: False}` takes `field` from the mapping `&hf` names; of a merged list, `<<: [*a, *b]`, the first
   * mapping that has a key gives it), own keys winning, as YAML merges them. Read once per mapping.
   */
  private pairs(node: YAMLMap): ReadonlyMap<string, FilterPair> {
    const known = this.pairsOf.get(node);
    if (known !== undefined) return known;
    const pairs = new Map<string, FilterPair>();
    const seen = new Set<YAMLMap>();
    const take = (map: YAMLMap, merge: unknown): void => {
      // An alias inside the value its own anchor names is refused elsewhere; never read a mapping twice.
      if (seen.has(map)) return;
      seen.add(map);
      const merges: unknown[] = [];
      for (const pair of map.items) {
        if (isMergeKey(pair.key)) merges.push(pair.key);
        else if (isScalar(pair.key) && typeof pair.key.value === "string" && !pairs.has(pair.key.value))
          pairs.set(pair.key.value, {
            value: pair.value,
            from: map,
            ...(merge === undefined ? {} : { merge }),
          });
      }
      for (const key of merges) {
        const value = map.items.find((pair) => pair.key === key)?.value;
        for (const source of isSeq(value) ? value.items : [value]) {
          const merged = this.target(source);
          if (isMap(merged)) take(merged, merge ?? key);
        }
      }
    };
    take(node, undefined);
    this.pairsOf.set(node, pairs);
    return pairs;
  }

  /**
   * A filter on a header or the event type compares text with the text of its value: a number keeps the
   * text written in the file (`equals: 1.0` is `1.0`, `in: [2.10]` is `2.10`), which a number would lose, and
   * so does a boolean or null written otherwise than `true`, `false`, `null` (`equals: True` is `True`, what a
   * Python sender's `str(True)` sends; `in: [~]` is `~`), which would be compared as `true` or match nothing.
   * A value written elsewhere that its writer reads otherwise becomes this filter's own copy (see the class).
   * Returns the values as this filter reads them.
   */
  keepText(filter: YAMLMap): FilterRead {
    const asText = this.asText(filter);
    const read = new Map<string, ReadValue | readonly ReadValue[]>();
    if (asText === undefined) return { asText, read };
    // Whether the node an alias or merge gives is read otherwise by the filter that writes it.
    // A payload filter always copies: a rule outside filters may make the node text (`chat_id: &chat 42` under
    // deliver_extra is the text 42), before or after this filter is read.
    const differs = (node: unknown): boolean => {
      const target = this.target(node);
      return isScalar(target) && !(asText && this.textNodes.has(target));
    };
    // A copy of that node (never the node itself, which stays where it is written) read as this filter reads.
    const copyOf = (node: unknown): unknown => {
      const target = this.target(node);
      if (!isScalar(target)) return target;
      const copy = target.clone() as Scalar;
      delete copy.anchor;
      if (asText) {
        keepNumberText(copy, this.text);
        keepWordText(copy, this.text);
      } else if (parsedAs.has(target)) copy.value = parsedAs.get(target);
      return copy;
    };
    for (const [key, { value, from, merge }] of this.pairs(filter)) {
      const target = this.target(value);
      if (!isOperator(key, target)) continue;
      const inherited = from !== filter;
      const via = inherited ? merge : isAlias(value) ? value : undefined;
      if (!inherited && !isAlias(value)) {
        // Written here: a text filter's values become their text; an alias among `in` is read as this filter reads.
        if (!isSeq(value)) {
          if (asText) {
            keepNumberText(value, this.text);
            keepWordText(value, this.text);
          }
          read.set(key, { node: value });
          continue;
        }
        const items: ReadValue[] = [];
        for (const [i, item] of value.items.entries()) {
          if (isAlias(item)) {
            const node = differs(item) ? copyOf(item) : this.target(item);
            if (node !== this.target(item)) value.items[i] = node as (typeof value.items)[number];
            items.push({ node, via: item });
            continue;
          }
          if (asText) {
            keepNumberText(item, this.text);
            keepWordText(item, this.text);
          }
          items.push({ node: item });
        }
        read.set(key, items);
        continue;
      }
      // Given by an alias or a merge: the node is its writer's, copied when this filter reads it otherwise. A
      // merged value is always copied: of a chain of merges, a mapping between may hold a copy of its own.
      const place = (node: unknown): void => {
        // An alias written here is replaced; a merged value is overridden by an own key, as one written here.
        const pair = inherited ? undefined : filter.items.find((p) => p.value === value);
        if (pair !== undefined) pair.value = node;
        else filter.items.push(new Pair(new Scalar(key), node));
      };
      if (isSeq(target)) {
        if (!inherited && !target.items.some(differs)) {
          read.set(
            key,
            target.items.map((item) => ({ node: this.target(item), via })),
          );
          continue;
        }
        const copy = target.clone() as YAMLSeq;
        delete copy.anchor;
        copy.items = target.items.map(copyOf) as typeof copy.items;
        place(copy);
        read.set(
          key,
          copy.items.map((node) => ({ node, via })),
        );
        continue;
      }
      const node = inherited || differs(value) ? copyOf(value) : target;
      if (node !== target) place(node);
      read.set(key, { node, via });
    }
    return { asText, read };
  }
}

/**
 * How FilterValues reads a node: as a filter (or a list of them), as a filter's merge source, or as neither
 * (where a `filters` key starts a list of filters).
 */
type Finding = "filter" | "source" | "other";

/** The keys whose value is a filter or a list of them: a merge source's are filters as its taker's are. */
const GROUPS = new Set<unknown>(["not", "any", "all"]);

/** The merge key `<<` (a symbol as parsed, the text written once keepKeyText has read it). */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (key.value === "<<" || (typeof key.value === "symbol" && key.source === "<<"));
}

/** `equals`, `not_equals`, `contains` (a value) or `in` (a list). */
function isOperator(key: string, value: unknown): boolean {
  return TEXT_OPERATORS.has(key) || (key === "in" && isSeq(value));
}

/** What YAML read a scalar as, before keepNumberText or keepWordText made it the text written. */
const parsedAs = new WeakMap<Scalar, unknown>();

/**
 * A plain boolean or null scalar written otherwise than its JSON text (`True`, `FALSE`, `Null`, `~`; `yes` under
 * `%YAML 1.1`) becomes the string written in the file; one left empty stays null.
 */
function keepWordText(node: unknown, text: string): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN || node.range === undefined || node.range === null)
    return;
  if (typeof node.value !== "boolean" && node.value !== null) return;
  const written = text.slice(node.range[0], node.range[1]);
  if (written === "" || written === String(node.value)) return;
  if (!parsedAs.has(node)) parsedAs.set(node, node.value);
  node.value = written;
}

/**
 * `platforms.<name>.home_channel`, `.phone_number_id` or `.app_id`, and the phone number a platform sends
 * from (`sms.from`, signal's `number`, also under `chat_4`): ids, read as written.
 */
function isPlatformId(path: readonly string[]): boolean {
  if (path.length !== 3 || path[0] !== "platforms") return false;
  const [, platform, key] = path;
  return (
    ["home_channel", "phone_number_id", "app_id"].includes(key as string) ||
    (platform === "sms" && key === "from") ||
    ((platform === "signal" || platform === "chat_4") && key === "number")
  );
}

/** `mcp_servers.<name>.args`, `.env`, `.headers` or `.client_cert`: values passed on as text. */
function isServerText(path: readonly string[]): boolean {
  return (
    path.length === 3 &&
    path[0] === "mcp_servers" &&
    ["args", "env", "headers", "client_cert"].includes(path[2] as string)
  );
}

/** `mcp_servers.<name>.args`: arguments, passed on as text (`~` is the home directory). */
function isServerArgs(path: readonly string[]): boolean {
  return path.length === 3 && path[0] === "mcp_servers" && path[2] === "args";
}

/** `mcp_servers.<name>.tools.include` or `.exclude`: tool names, matched as text. */
function isToolFilter(path: readonly string[]): boolean {
  return (
    path.length === 4 &&
    path[0] === "mcp_servers" &&
    path[2] === "tools" &&
    (path[3] === "include" || path[3] === "exclude")
  );
}

/**
 * A tool name (`include: 7`) or a list's entry (`include: [2024, 3.10, true]`) that YAML reads as a number or
 * a boolean becomes the text written in the file: a tool's name is text, and `3.10` read as a number is `3.1`,
 * `True` read as a boolean `true`. So does a list's entry written as a null word (`[Null, null, 7]` names the
 * tools `Null`, `null` and `7`); one left empty or written `~` stays null, refused as no name, with the fix
 * (sections/mcp.ts). A value alone written `Null` or `NULL` names that tool, as `True` names `True` (an
 * allowlist of one tool, not the key left unset, which would expose every tool); one written `null` (what a
 * YAML serializer writes for no value, PyYAML's and js-yaml's dump), `~`, left empty, or tagged `!!null`
 * whatever its text, is the key left unset.
 */
function keepToolNameText(node: unknown, text: string): void {
  const list = isSeq(node);
  for (const item of list ? node.items : [node]) {
    keepNumberText(item, text);
    if (!isScalar(item) || item.type !== Scalar.PLAIN || item.range === undefined || item.range === null)
      continue;
    const written = text.slice(item.range[0], item.range[1]);
    const named =
      typeof item.value === "boolean" ||
      (item.value === null && (list ? written !== "" && written !== "~" : namesToolAlone(item, written)));
    if (!named) continue;
    if (!parsedAs.has(item)) parsedAs.set(item, item.value);
    item.value = written;
  }
}

/** A null word alone that no serializer writes for no value (`Null`, `NULL`), without a `!!null` tag. */
function namesToolAlone(node: Scalar, written: string): boolean {
  return node.tag === undefined && written !== "" && written !== "~" && written !== "null";
}

/**
 * An argument written `~` (the home directory, as `~/x` is its path) is YAML's null: it stays `~`, which
 * the connect expands like any path argument, rather than an argument "without a value".
 */
function keepTilde(node: unknown, text: string): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN || node.value !== null || !node.range) return;
  if (text.slice(node.range[0], node.range[1]) === "~") node.value = "~";
}

/** A plain (unquoted) number scalar becomes the string written in the file. */
/**
 * A name is the text written: a route `007:` or `1.10:` unquoted (YAML reads a number, 7 and 1.1) answers
 * at `/webhooks/007` and `/webhooks/1.10`, not under a name no sender posts to; `null:` or `~:` is not
 * the empty name. So for every key (routes, MCP servers, `deliver_extra`, `env` and `headers` names).
 */
/**
 * A key written as a list or mapping (`[github]:`, the brackets of a TOML table or a placeholder, or
 * `? [a, b]`): a JavaScript object's key is text, so YAML's library would name it by its printed form
 * (`[ github ]`, with spaces the file does not hold) and warn on stderr. Refused at its line instead,
 * with the name alone when it holds one.
 */
function refuseCollectionKey(
  node: unknown,
  path: readonly string[],
  text: string,
  file: string,
  lines: LineCounter,
): void {
  if (!isSeq(node) && !isMap(node)) return;
  const [start, end] = node.range ?? [];
  if (start === undefined || end === undefined) return;
  // `{https://u:<password>@host/mcp}:` as a key: quoted without the password.
  const written = textWithoutUrlCredentials(text.slice(start, end).trim());
  let inner: unknown;
  if (isSeq(node)) inner = node.items.length === 1 ? node.items[0] : undefined;
  else {
    const pair = node.items.length === 1 ? node.items[0] : undefined;
    inner = pair !== undefined && pair.value === null ? pair.key : undefined;
  }
  const raw = isScalar(inner) && typeof inner.value === "string" ? inner.value : undefined;
  const name = raw === undefined ? undefined : textWithoutUrlCredentials(raw);
  const [what, marks] = isSeq(node) ? ["a list", "[ ]"] : ["a mapping", "{ }"];
  const fix =
    name === undefined
      ? "write the key as a name (text)"
      : `write the name alone, without the ${marks}: ${name}:${name === raw ? "" : CREDENTIALS_LEFT_OUT}`;
  throw new SvcError(
    "config_invalid",
    `${file}: line ${lines.linePos(start).line}: ${path.length === 0 ? "(top level)" : path.join(".")}: the key ${written} is ${what} to YAML, not a name — ${fix}`,
  );
}

function keepKeyText(node: unknown, text: string): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN || node.range === undefined || node.range === null)
    return;
  if (typeof node.value === "string") return;
  node.value = text.slice(node.range[0], node.range[1]);
}

function keepNumberText(node: unknown, text: string): void {
  if (!isScalar(node) || node.type !== Scalar.PLAIN || node.range === undefined || node.range === null)
    return;
  if (typeof node.value !== "number" && typeof node.value !== "bigint") return;
  if (!parsedAs.has(node)) parsedAs.set(node, node.value);
  node.value = text.slice(node.range[0], node.range[1]);
}
