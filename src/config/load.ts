import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Scalar,
  visit,
  type YAMLError,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";
import type { z } from "zod";
import { SvcError } from "../errors.js";
import { asWritten, asWrittenScope, noteAsWritten } from "./asWritten.js";
import { isPresent, readUtf8 } from "./configFileRead.js";
import { WrittenAs } from "./describe.js";
import { checkEnvFile, secretScope, writtenEnvLines, writtenEnvValue } from "./envFile.js";
import { exactIntegers, type LongInteger, longIntegersAsText } from "./exactIntegers.js";
import { filterPathAsWritten, noteFiltersAsWritten } from "./filtersWrittenAsOne.js";
import { formatIssues } from "./format.js";
import { noteGivenValues } from "./givenValues.js";
import { type InterpolationScope, interpolate, interpolateDeep, variableValue } from "./interpolate.js";
import { knownKeysAt } from "./knownKeys.js";
import { renderLoadTimeKeys, withUnsetLoadTimeKeys } from "./mcpLoadKeys.js";
import { nearMiss } from "./nearMiss.js";
import { type SvcPaths, svcHome, svcPaths } from "./paths.js";
import { type Config, configSchema } from "./schema.js";
import { writtenAsBareVariable } from "./secretWarnings.js";
import { PLATFORM_ALIASES } from "./sections/platforms.js";
import {
  noteSecretAsWritten,
  noteSecretChecked,
  noteSecretFrom,
  noteSecretWriting,
  noteShadowedRoutes,
  noteShadowedSettings,
  type Route,
  type SecretWriting,
} from "./sections/webhook.js";
import { withWrittenOrder } from "./serverOrder.js";
import {
  colonInValueHint,
  flowEntryColonHint,
  reservedLeadHint,
  textAfterQuoteHint,
  unquotedFlowPatternHint,
  unquotedTemplateLine,
} from "./unquotedTemplate.js";
import { valueWithoutUrlCredentials } from "./urlCredentials.js";
import { misindentedKey, noBreakSpaceLine } from "./yamlIndent.js";
import {
  nonMappingMerge,
  refuseRecursiveAliases,
  refuseUnknownTags,
  unresolvedAlias,
} from "./yamlLeadingChars.js";
import { prepareConfigDocument } from "./yamlNodes.js";
import { refuseYamlOneOneTypes } from "./yamlOneOneTypes.js";

export interface LoadedConfig {
  readonly config: Config;
  readonly paths: SvcPaths;
  /** The default profile's secret scope (`.env` then the process environment). */
  readonly scope: InterpolationScope;
  /** False when no config.yaml exists and the embedded default is in use. */
  readonly fromFile: boolean;
  /**
   * config.yaml holds no setting at all (empty, or only comments and blank lines): what an editor that
   * truncates before it writes leaves for a moment, which a reload refuses.
   */
  readonly blank: boolean;
  /**
   * Where `platforms.webhook.enabled` was decided, for messages: `environment variable WEBHOOK_ENABLED`,
   * `<SVC_HOME>/.env: WEBHOOK_ENABLED`, or the key of config.yaml.
   */
  readonly enabledFrom: string;
  /**
   * config.yaml's value as written, its `${VAR}` not rendered (the embedded default without a file): which
   * variables a key takes its value from, for messages that name them (never their values).
   */
  readonly written: Readonly<Record<string, unknown>>;
}

/** How to turn the webhook adapter on, given where `enabled: false` came from (the environment wins over the file). */
export function howToEnableWebhook(loaded: LoadedConfig): string {
  const { enabledFrom, paths } = loaded;
  if (enabledFrom.startsWith("environment variable"))
    return "Turn it on with WEBHOOK_ENABLED=true in the environment (it overrides .env and config.yaml)";
  if (enabledFrom.startsWith(paths.env))
    return `Turn it on with \`svc gateway setup --enable\` or WEBHOOK_ENABLED=true in ${paths.env} (it overrides config.yaml)`;
  // The key that turned it off: under `extra`, whose value wins, an `enabled: true` written directly
  // beside it changes nothing (svc gateway setup edits the one under extra too).
  const where = enabledFrom.endsWith("platforms.webhook.extra.enabled")
    ? " under platforms.webhook.extra"
    : "";
  return `Turn it on with \`svc gateway setup\`, WEBHOOK_ENABLED=true (environment or ${paths.env}), or enabled: true${where} in the file`;
}

/** With no config file the gateway still runs: webhook adapter on loopback, echo agent, log delivery. */
export const EMBEDDED_DEFAULT = {
  platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644 } },
};

/**
 * config.yaml refused by the schema. `checkable` is what of it the startup rules can still judge (the
 * file without its unknown keys, the routes and sections whose values failed left out), so the gateway and
 * `svc config check` name those problems in the same pass; undefined when a failed value decides the rules
 * for every route (the webhook's secret, host or enabled, a platform's settings).
 */
export class ConfigInvalidError extends SvcError {
  constructor(
    message: string,
    readonly file: string,
    readonly checkable: Config | undefined,
  ) {
    super("config_invalid", message);
  }
}

/**
 * A text whose lines end in CR alone (classic Mac OS, some old editors): the YAML parser reads it as one
 * line (`Nested mappings are not allowed in compact mappings at line 1`), or, under a first comment line,
 * as a comment only, which would be an empty config. `.env` splits its lines at a lone CR as well.
 */
function crOnlyProblem(text: string): string | undefined {
  return text.includes("\r") && !text.includes("\n")
    ? "uses CR-only line endings (classic Mac) — save it with LF (or CRLF) line endings"
    : undefined;
}

/**
 * `<file>: line <n>: not valid YAML — <what to do>` for the first syntax error of config.yaml's `text`, or
 * undefined when it has none. The gateway, `svc config check` and the commands that edit the file
 * (`svc gateway setup`, `svc mcp add`) name a syntax error the same way. `doc` is `text` parsed with
 * `lineCounter` (parsed here when not given).
 */
export function yamlSyntaxProblem(
  file: string,
  text: string,
  parsed?: Document.Parsed,
  counter?: LineCounter,
): string | undefined {
  const crOnly = crOnlyProblem(text);
  if (crOnly !== undefined) return `${file}: ${crOnly}`;
  const lineCounter = counter ?? new LineCounter();
  const doc = parsed ?? parseDocument(text, { prettyErrors: true, lineCounter, merge: true });
  const first = doc.errors[0];
  if (first === undefined) return undefined;
  const cut =
    unclosedQuote(doc, first, lineCounter) ??
    unclosedFlow(doc, first, text, lineCounter) ??
    misindentedKey(first, text);
  if (cut !== undefined) return `${file}: line ${cut.line}: not valid YAML — ${cut.text}`;
  const where = first.linePos?.[0] ? ` line ${first.linePos[0].line}` : "";
  return `${file}:${where}: not valid YAML — ${yamlProblem(first.message.split("\n")[0] ?? "", text.split(/\r?\n/)[(first.linePos?.[0]?.line ?? 0) - 1], first.linePos?.[0]?.col)}`;
}

/** config.yaml's value, and whether it held nothing at all (`blank`). */
/** The names of `mcp_servers` as the document writes them, in its order (prepareConfigDocument kept each key's text). */
function writtenServerOrder(doc: Document): string[] | undefined {
  const servers = doc.get("mcp_servers", true);
  if (!isMap(servers)) return undefined;
  return servers.items
    .map((pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key)))
    .filter((name) => name !== "<<");
}

function readYaml(file: string): {
  value: unknown;
  blank: boolean;
  serverOrder?: string[];
  longIntegers: LongInteger[];
} {
  const text = readUtf8(file);
  // Integers are read exactly: a Discord or Slack id written unquoted (19 digits) is past 2^53.
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, intAsBigInt: true, lineCounter, merge: true });
  // Named before the parser's own words, which it leads to (a key of another mapping, a line of text).
  const crOnly = crOnlyProblem(text);
  if (crOnly !== undefined) throw new SvcError("config_invalid", `${file}: ${crOnly}`);
  const noBreakSpace = noBreakSpaceLine(text);
  if (noBreakSpace !== undefined) throw new SvcError("config_invalid", `${file}: ${noBreakSpace}`);
  const syntax = yamlSyntaxProblem(file, text, doc, lineCounter);
  if (syntax !== undefined) throw new SvcError("config_invalid", syntax);
  refuseUnknownTags(doc, text, file);
  refuseYamlOneOneTypes(doc, file, lineCounter);
  refuseRecursiveAliases(doc, file, lineCounter);
  prepareConfigDocument(doc, text, file, lineCounter);
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // `regex: *.md`: an alias of no anchor, named at its line.
    const alias = unresolvedAlias(doc, err, text, file, lineCounter);
    if (alias !== undefined) throw alias;
    // `<<: *events`, an anchor on a list: named at its line.
    const merge = nonMappingMerge(doc, err, text, file, lineCounter);
    if (merge !== undefined) throw merge;
    // The parser's limits (an alias that expands into millions of nodes): named with the file.
    throw new SvcError(
      "config_invalid",
      `${file}: not valid YAML — ${(err as Error).message}; write the values out instead of through so many aliases (*name)`,
    );
  }
  const serverOrder = writtenServerOrder(doc);
  const longIntegers: LongInteger[] = [];
  return {
    value: exactIntegers(value, longIntegers) ?? {},
    longIntegers,
    blank: value === null || value === undefined,
    ...(serverOrder === undefined ? {} : { serverOrder }),
  };
}

/**
 * A quote never closed: the parser reads on to the end of the file and reports the error there (line 7
 * of a 6-line file), far from the mistake. Named at the line and column where the quote opens instead.
 */
function unclosedQuote(
  doc: Document.Parsed,
  error: YAMLError,
  lineCounter: LineCounter,
): { line: number; text: string } | undefined {
  if (error.code !== "MISSING_CHAR" || !/closing .?quote/.test(error.message)) return undefined;
  let opened: Scalar | undefined;
  visit(doc, {
    Scalar(_key, node) {
      const [start, end] = node.range ?? [];
      if (start === undefined || end === undefined) return;
      if ((node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE") && start < error.pos[0])
        if (end >= error.pos[0] && (opened?.range?.[0] ?? -1) < start) opened = node;
    },
  });
  const start = opened?.range?.[0];
  if (opened === undefined || start === undefined) return undefined;
  const { line, col } = lineCounter.linePos(start);
  const quote = opened.type === "QUOTE_DOUBLE" ? '"' : "'";
  return {
    line,
    text: `the ${quote} that opens a value at line ${line}, column ${col} is never closed (the parser read on to the end of the file) — close it where the value ends`,
  };
}

/**
 * A `[list` or `{mapping` whose `]` / `}` the parser did not find before a line indented no further than
 * its key: reported at that next line ("Flow sequence in block collection must be sufficiently indented"),
 * one line past the mistake, never saying where the bracket opens. Named at its opening bracket instead:
 * never closed, or, when that line holds the closing bracket, written across lines not indented past its key.
 */
function unclosedFlow(
  doc: Document.Parsed,
  error: YAMLError,
  text: string,
  lineCounter: LineCounter,
): { line: number; text: string } | undefined {
  const kind = /^Flow (sequence|map) in block collection/.exec(error.message)?.[1];
  if (error.code !== "BAD_INDENT" || kind === undefined) return undefined;
  let opened: YAMLSeq | YAMLMap | undefined;
  const consider = (node: YAMLSeq | YAMLMap) => {
    const [start, end] = node.range ?? [];
    if (!node.flow || start === undefined || end !== error.pos[0]) return;
    if ((kind === "sequence") === isSeq(node) && (opened?.range?.[0] ?? -1) < start) opened = node;
  };
  visit(doc, { Seq: (_key, node) => consider(node), Map: (_key, node) => consider(node) });
  const start = opened?.range?.[0];
  if (opened === undefined || start === undefined) return undefined;
  const [open, close, what] = kind === "sequence" ? ["[", "]", "list"] : ["{", "}", "mapping"];
  const { line, col } = lineCounter.linePos(start);
  const at = lineCounter.linePos(error.pos[0]);
  const next = at.line;
  const nextLine = text.split(/\r?\n/)[next - 1] ?? "";
  // On its own line, a bracket of the other kind (or one too many) ends it: `filters: [{field: a, in: [x]]}`.
  const stray = text[error.pos[0]];
  if (next === line && (stray === "]" || stray === "}"))
    return {
      line,
      text: `the ${open} that opens a ${what} at line ${line}, column ${col} meets a ${stray} at column ${at.col} before its ${close} — a [ is closed by ] and a { by }: remove the stray ${stray}, or close the ${what} with ${close} before it`,
    };
  return {
    line,
    text: nextLine.includes(close)
      ? `the ${open} that opens a ${what} at line ${line}, column ${col} goes on at line ${next}, which is indented no further than its key — indent the ${what}'s further lines past the key, or write it on one line`
      : `the ${open} that opens a ${what} at line ${line}, column ${col} is never closed — end the ${what} with ${close}`,
  };
}

/** The parser's first line, with what to do where the fix is not obvious from it. */
function yamlProblem(message: string, line = "", column = 1): string {
  const text = message.replace(/:$/, "");
  // Two routes (or any keys) of one name in one mapping: the parser does not say which key.
  if (/^Map keys must be unique/.test(text)) {
    const key = /^\s*(?:-\s+)?("[^"]*"|'[^']*'|[^:#{},]+?)\s*:/.exec(line.slice(column - 1))?.[1];
    return `${text} — ${key === undefined ? "a key" : `the key ${key}`} is written twice in the same mapping: keep one, or rename one of them (a YAML mapping holds each name once)`;
  }
  if (/^Source contains multiple documents/.test(text))
    return `the file holds more than one YAML document (a --- line)${text.replace(/^.*?( at line \d+, column \d+)$/, "$1")} — keep one document`;
  if (/^Tabs are not allowed/.test(text)) return `${text} — indent with spaces`;
  // `routes: {a: {secret: x}}}`: a closing bracket with no [ or { open before it.
  const extraClose = /^Unexpected flow-(map|seq)-end token/.exec(text)?.[1];
  if (extraClose !== undefined) {
    const [close, open] = extraClose === "map" ? ["}", "{"] : ["]", "["];
    return `${text} — this ${close} closes nothing: remove it, or add the ${open} it was meant to close`;
  }
  // `enabled true` or `port:8644`: no ": " after the key, so YAML reads the line as a key with no value.
  // Only the key is written back: the rest may be a secret.
  if (/^Implicit (?:map )?keys need to/.test(text)) {
    const written = line.replace(/\s#.*$/, "").trim();
    const key = /^(?:-\s+)?([A-Za-z0-9_.-]+)(:?)/.exec(written);
    if (key?.[1] !== undefined && !/:(?:\s|$)/.test(written))
      return `${text} — ${key[2] === ":" ? `a colon after a key needs a space after it: write ${key[1]}: <value>` : `the line has no colon after its key: write ${key[1]}: ${written === key[1] ? "(its value after it, or its keys indented on the lines below)" : "<value>"}`}`;
  }
  // `secret: {x: ${VAR}}`: in a flow mapping `{` starts a mapping, so `${VAR}` must be quoted.
  // In a [flow, list] (`events: [${EV}]`) the parser says "Missing , or : between flow sequence items".
  if (/flow-map-start|between flow (?:sequence|map) items/.test(text) && line.includes("${"))
    return `${text} — put values written as \${VAR} in quotes`;
  // `regex: "^\d+$"`: in double quotes YAML reads a backslash as its own escape, which \d is not.
  if (/^Invalid escape sequence/.test(text))
    return `${text} — in "double quotes" a backslash starts a YAML escape: write a regex or path in 'single quotes' ('^\\d+$'), unquoted, or with the backslash doubled ("^\\\\d+$")`;
  // `prompt: {pull_request.title} was opened`: a value starting with { is a flow mapping to YAML.
  return `${text}${unquotedTemplateLine(text, line) ?? reservedLeadHint(text, line, column) ?? unquotedFlowPatternHint(text, line, column) ?? colonInValueHint(text, line) ?? flowEntryColonHint(text, line, column) ?? textAfterQuoteHint(text, line) ?? ""}`;
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A variable's value (the process environment first, then `.env`) and where it came from, for messages. */
function lookupVar(name: string, scope: InterpolationScope, envFile: string) {
  // Empty or blank (spaces only: `WEBHOOK_SECRET=" "` left as a placeholder) counts as unset.
  const fromEnv = scope.env[name];
  if (fromEnv !== undefined && fromEnv.trim() !== "")
    return { value: fromEnv, from: `environment variable ${name}`, inEnvFile: false };
  const fromFile = scope.secrets[name];
  if (fromFile !== undefined && fromFile.trim() !== "")
    return { value: fromFile, from: `${envFile}: ${name}`, inEnvFile: true };
  return undefined;
}

/** What to do about a bad WEBHOOK_* value, where it was set: what to write, or how to fall back to the file. */
function webhookVarFix(name: string, key: string, inEnvFile: boolean, value: string): string {
  return inEnvFile
    ? `write ${value} there, or remove the line to use platforms.webhook.${key}`
    : `set it to ${value}, or unset it (unset ${name}) to use .env or platforms.webhook.${key}`;
}

/**
 * WEBHOOK_ENABLED / WEBHOOK_PORT / WEBHOOK_SECRET (process environment, then `.env`) override the file;
 * they go under `extra` when the file uses it, since `extra` wins there. A section of the wrong type is
 * left alone for the schema to report.
 */
function applyWebhookEnv(
  raw: Record<string, unknown>,
  scope: InterpolationScope,
  envFile: string,
  /** Receives each bad value's problem (the value is left out, so the file's own problems can be named too). */
  problems: string[],
): string | undefined {
  const enabled = lookupVar("WEBHOOK_ENABLED", scope, envFile);
  const port = lookupVar("WEBHOOK_PORT", scope, envFile);
  const secret = lookupVar("WEBHOOK_SECRET", scope, envFile);
  if (enabled === undefined && port === undefined && secret === undefined) return undefined;
  raw.platforms ??= {};
  if (!isMapping(raw.platforms)) return undefined;
  raw.platforms.webhook ??= {};
  const webhook = raw.platforms.webhook;
  if (!isMapping(webhook)) return undefined;
  // Into extra only where extra holds the key (its value would win over the direct one), so a key the
  // variable sets is not taken for one written under extra: messages name platforms.webhook.<key>.
  const extra = isMapping(webhook.extra) ? webhook.extra : undefined;
  const targetOf = (key: string) => (extra !== undefined && Object.hasOwn(extra, key) ? extra : webhook);
  if (enabled !== undefined) {
    const on = /^\s*(1|true|yes|on)\s*$/i.test(enabled.value);
    if (on || /^\s*(0|false|no|off)\s*$/i.test(enabled.value)) targetOf("enabled").enabled = on;
    else
      problems.push(
        `${enabled.from}: expected true or false (or yes/no, on/off, 1/0), got "${enabled.value}" — ${webhookVarFix("WEBHOOK_ENABLED", "enabled", enabled.inEnvFile, "true or false")}`,
      );
  }
  if (port !== undefined) {
    const n = Number(port.value);
    if (/^\d+$/.test(port.value.trim()) && n <= 65535) targetOf("port").port = n;
    else
      problems.push(
        `${port.from}: expected a port number (0-65535), got "${port.value}" — ${webhookVarFix("WEBHOOK_PORT", "port", port.inEnvFile, "a plain number (WEBHOOK_PORT=8644; 0 picks a free port)")}`,
      );
  }
  if (secret !== undefined) targetOf("secret").secret = secret.value;
  return enabled?.from;
}

/**
 * Whether the global secret is WEBHOOK_SECRET as `.env` holds it in 'single quotes' (or backticks), which
 * take a value as written, as `svc gateway setup` writes one: a `${NAME}` in it is text of the secret, not a
 * variable left unset. (The process environment, which wins over `.env`, is not.)
 */
function secretWrittenVerbatim(scope: InterpolationScope, envFile: string): boolean {
  const fromEnv = scope.env.WEBHOOK_SECRET;
  if (fromEnv !== undefined && fromEnv.trim() !== "") return false;
  const fromFile = scope.secrets.WEBHOOK_SECRET;
  if (fromFile === undefined || fromFile.trim() === "" || !fromFile.includes("${")) return false;
  let verbatim = false;
  for (const line of writtenEnvLines(envFile)) if (line.name === "WEBHOOK_SECRET") verbatim = line.verbatim;
  return verbatim;
}

/**
 * A `${NAME}` in a `.env` value taken as written ('single quotes', backticks) is text of a config.yaml secret
 * that substitutes the value (`S='abc${LIT}'`, `secret: ${S}` is the secret `abc${LIT}`: values are not
 * rendered again). Each secret holding one is noted with the text it is checked in for a `${NAME}` nothing set:
 * rendered with those values stood in by text without `${`, so only config.yaml's own `${...}` are judged.
 */
function noteSecretsChecked(
  raw: Record<string, unknown>,
  webhook: Config["platforms"]["webhook"],
  scope: InterpolationScope,
  envFile: string,
  fromVariable: boolean,
): void {
  const verbatim: Record<string, string> = {};
  if (Object.values(scope.secrets).some((value) => value.includes("${")))
    for (const { name, verbatim: asWritten } of writtenEnvLines(envFile)) {
      const value = scope.secrets[name];
      if (asWritten && value?.includes("${") === true) verbatim[name] = value.replace(/[${]/g, "");
      else delete verbatim[name];
    }
  if (Object.keys(verbatim).length === 0) return;
  const standIn: InterpolationScope = { ...scope, secrets: { ...scope.secrets, ...verbatim } };
  const texts = writtenSecretTexts(raw);
  // The text a secret was written as, when it renders to `secret`.
  const note = (target: object, secret: string | undefined, text: unknown) => {
    if (secret?.includes("${") !== true || typeof text !== "string") return;
    if (interpolate(text, scope).value === secret)
      noteSecretChecked(target, interpolate(text, standIn).value);
  };
  if (!fromVariable) note(webhook, webhook.secret, texts.global);
  for (const [name, route] of Object.entries(webhook.routes)) note(route, route.secret, texts.route(name));
}

/**
 * The text config.yaml (before rendering) writes the global secret and a route's as, under `extra` when
 * written there (it wins); undefined where it writes none.
 */
function writtenSecretTexts(raw: Record<string, unknown>): {
  global: unknown;
  route: (name: string) => unknown;
} {
  const written = isMapping(raw.platforms) && isMapping(raw.platforms.webhook) ? raw.platforms.webhook : {};
  const extra = isMapping(written.extra) ? written.extra : {};
  const routes = isMapping(written.routes) ? written.routes : {};
  const extraRoutes = isMapping(extra.routes) ? extra.routes : {};
  const at = (routesOf: Record<string, unknown>, name: string) => {
    const entry = Object.hasOwn(routesOf, name) ? routesOf[name] : undefined;
    return isMapping(entry) ? entry.secret : undefined;
  };
  const first = (...texts: unknown[]) => texts.find((text) => text !== undefined);
  return {
    global: first(extra.secret, written.secret),
    route: (name) => first(at(extraRoutes, name), at(routes, name)),
  };
}

/** The keys written under `platforms.webhook.extra`; for `routes`, the route names written there. */
function webhookExtraKeys(raw: Record<string, unknown>): {
  keys: ReadonlySet<string>;
  /** Set when `routes` is written on both sides (then merged by name). */
  routes: ReadonlySet<string> | undefined;
} {
  const webhook = isMapping(raw.platforms) ? raw.platforms.webhook : undefined;
  const extra = isMapping(webhook) ? webhook.extra : undefined;
  const keys = new Set(isMapping(extra) ? Object.keys(extra) : []);
  const routes = isMapping(extra) && isMapping(extra.routes) ? Object.keys(extra.routes) : undefined;
  const directRoutes = isMapping(webhook) && isMapping(webhook.routes);
  // Both sides have routes: they merge by name, so only the names under extra were written there.
  return { keys, routes: directRoutes && routes !== undefined ? new Set(routes) : undefined };
}

/** The variables that override a setting of `platforms.webhook` (applyWebhookEnv). */
const WEBHOOK_ENV_KEYS = {
  enabled: "WEBHOOK_ENABLED",
  port: "WEBHOOK_PORT",
  secret: "WEBHOOK_SECRET",
} as const;

/**
 * Settings of `platforms.webhook` (not `routes`, which merge by name) written both directly and under `extra`:
 * the `extra` value is used and the other dropped. Read before the WEBHOOK_* variables are applied (they go
 * under `extra` when the file uses it), leaving out a key such a variable sets, which overrides both.
 */
function settingsWrittenTwice(
  raw: Record<string, unknown>,
  scope: InterpolationScope,
  envFile: string,
): string[] {
  const webhook = isMapping(raw.platforms) ? raw.platforms.webhook : undefined;
  const extra = isMapping(webhook) ? webhook.extra : undefined;
  if (!isMapping(webhook) || !isMapping(extra)) return [];
  const fromEnv = (key: string) =>
    Object.hasOwn(WEBHOOK_ENV_KEYS, key) &&
    lookupVar(WEBHOOK_ENV_KEYS[key as keyof typeof WEBHOOK_ENV_KEYS], scope, envFile) !== undefined;
  return Object.keys(webhook).filter(
    (key) => key !== "extra" && key !== "routes" && Object.hasOwn(extra, key) && !fromEnv(key),
  );
}

/** Route names written both under `platforms.webhook.routes` and `extra.routes`: only the latter is served. */
function routesWrittenTwice(raw: Record<string, unknown>): string[] {
  const webhook = isMapping(raw.platforms) ? raw.platforms.webhook : undefined;
  const extra = isMapping(webhook) ? webhook.extra : undefined;
  if (!isMapping(webhook) || !isMapping(webhook.routes) || !isMapping(extra) || !isMapping(extra.routes))
    return [];
  const under = extra.routes;
  return Object.keys(webhook.routes).filter((name) => Object.hasOwn(under, name));
}

/**
 * The schema sees `platforms.webhook.extra` merged into `platforms.webhook`; a problem with a key that
 * came from `extra` is reported at `platforms.webhook.extra.<key>`, where the user wrote it.
 */
function pointIntoExtra(
  issues: readonly z.core.$ZodIssue[],
  { keys: extraKeys, routes: extraRoutes }: ReturnType<typeof webhookExtraKeys>,
): z.core.$ZodIssue[] {
  if (extraKeys.size === 0) return [...issues];
  const atWebhook = (path: readonly PropertyKey[]) =>
    path.length >= 2 && path[0] === "platforms" && path[1] === "webhook";
  return issues.flatMap((issue): z.core.$ZodIssue[] => {
    if (!atWebhook(issue.path)) return [issue];
    if (issue.path.length === 2 && issue.code === "unrecognized_keys") {
      const fromExtra = issue.keys.filter((k) => extraKeys.has(k));
      const direct = issue.keys.filter((k) => !extraKeys.has(k));
      return [
        ...(direct.length > 0 ? [{ ...issue, keys: direct }] : []),
        ...(fromExtra.length > 0
          ? [{ ...issue, keys: fromExtra, path: ["platforms", "webhook", "extra"] }]
          : []),
      ];
    }
    const key = issue.path[2];
    if (typeof key !== "string" || !extraKeys.has(key)) return [issue];
    if (key === "routes" && extraRoutes !== undefined && !extraRoutes.has(String(issue.path[3])))
      return [issue];
    return [{ ...issue, path: ["platforms", "webhook", "extra", ...issue.path.slice(2)] }];
  });
}

/**
 * The schema reads an entry's `type:` (Claude Code's and VS Code's name) as `transport:`; a problem with
 * that value (`type: http` beside `command`, `type: websocket`) is reported at `mcp_servers.<name>.type`,
 * the key the file has, not at a `transport` it does not have.
 */
function pointAtType(issues: readonly z.core.$ZodIssue[], servers: unknown): z.core.$ZodIssue[] {
  return issues.map((issue) => {
    const [section, name, key] = issue.path;
    if (section !== "mcp_servers" || key !== "transport" || typeof servers !== "object" || servers === null)
      return issue;
    const entry = (servers as Record<PropertyKey, unknown>)[name as PropertyKey];
    const writtenAsType =
      typeof entry === "object" &&
      entry !== null &&
      Object.hasOwn(entry, "type") &&
      !Object.hasOwn(entry, "transport");
    return writtenAsType
      ? { ...issue, path: ["mcp_servers", name as PropertyKey, "type", ...issue.path.slice(3)] }
      : issue;
  });
}

/** The top-level sections whose keys are settings (not names, as mcp_servers' and platforms' are). */
const SETTINGS_SECTIONS = ["agent", "gateway", "state", "tools"] as const;

/**
 * YAML reads a key with nothing under it (`routes:` whose entries are all commented out) as null. A null
 * section, platform, route list or route property counts as absent and a null route as one with no
 * properties, as a reader of the file expects; so does a key of the agent, gateway, state and tools sections
 * (`max_steps:` with its value commented out) and of the tools' mappings (`tools.web.max_bytes:`), and a
 * delivery platform's key (`home_channel:`). So does an `mcp_servers` entry's key (`env:`, `tools:` whose
 * lines are all commented out) or a key of its mappings (`tools.include:`), and a null entry is one with no
 * keys (refused for having neither command nor url); likewise a key of a route's `coalesce` or `deliver_extra`. Deeper values (a filter's `equals: null`, an argument
 * `~`) are left alone.
 */
function dropNullSections(raw: Record<string, unknown>): void {
  const dropNulls = (map: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(map)) if (value === null) delete map[key];
  };
  dropNulls(raw);
  // A setting of agent, gateway, state or tools with its value commented out (`max_steps:   # 10`,
  // `api_key:   # ${OPENAI_API_KEY}` for a local endpoint): its default, as a route property's null is.
  for (const section of SETTINGS_SECTIONS) if (isMapping(raw[section])) dropNulls(raw[section]);
  // `tools.web.max_bytes:   # 2097152`, as the example of docs/agent-tools.md is commented.
  if (isMapping(raw.tools)) for (const tool of Object.values(raw.tools)) if (isMapping(tool)) dropNulls(tool);
  if (isMapping(raw.mcp_servers)) {
    for (const [name, entry] of Object.entries(raw.mcp_servers)) {
      if (entry === null) raw.mcp_servers[name] = {};
      if (!isMapping(entry)) continue;
      dropNulls(entry);
      for (const inner of ["tools", "oauth", "sampling", "elicitation", "lifecycle"])
        if (isMapping(entry[inner])) dropNulls(entry[inner]);
    }
  }
  if (!isMapping(raw.platforms)) return;
  dropNulls(raw.platforms);
  // A delivery platform's `home_channel:   # -100123` or `port:   # 587`: its default, as for the sections above.
  for (const [name, platform] of Object.entries(raw.platforms))
    if (name !== "webhook" && isMapping(platform)) dropNulls(platform);
  const webhook = raw.platforms.webhook;
  if (!isMapping(webhook)) return;
  for (const level of [webhook, webhook.extra]) {
    if (!isMapping(level)) continue;
    dropNulls(level);
    if (!isMapping(level.routes)) continue;
    for (const [name, route] of Object.entries(level.routes)) {
      if (route === null) level.routes[name] = {};
      else if (isMapping(route)) {
        dropNulls(route);
        // `window_seconds:` or `message_thread_id:` with its value commented out: the default (no thread),
        // as a subscription's null is.
        if (isMapping(route.coalesce)) dropNulls(route.coalesce);
        if (isMapping(route.deliver_extra)) dropNulls(route.deliver_extra);
      }
    }
  }
}

/** The value at `path` in `tree`, when every step exists. */
function valueAt(tree: unknown, path: readonly PropertyKey[]): unknown {
  let at: unknown = tree;
  for (const key of path) {
    if (typeof at !== "object" || at === null || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

const REFERENCE = /\$\{/;
const holdsReference = (value: unknown): boolean =>
  typeof value === "string"
    ? REFERENCE.test(value)
    : Array.isArray(value)
      ? value.some(holdsReference)
      : typeof value === "object" && value !== null && Object.values(value).some(holdsReference);

/** Issues about a `filters` written as one mapping, named as the file writes it (`filters.in`, not `filters[0].in`). */
function filterPathsAsWritten(issues: z.core.$ZodIssue[], written: unknown): z.core.$ZodIssue[] {
  return issues.map(
    (issue) => ({ ...issue, path: filterPathAsWritten(issue.path, written) }) as z.core.$ZodIssue,
  );
}

/** Notes which routes wrote `filters` as one mapping (the one under `extra.routes` is the route served). */
function noteRouteFilters(routes: Readonly<Record<string, Route>>, rendered: Record<string, unknown>): void {
  const webhook = valueAt(rendered, ["platforms", "webhook"]);
  for (const [name, route] of Object.entries(routes))
    noteFiltersAsWritten(
      route,
      valueAt(webhook, ["extra", "routes", name]) ?? valueAt(webhook, ["routes", name]),
    );
}

/**
 * Issues about a value the file wrote with a `${VAR}`: their message quotes the file's text, never what
 * `.env` or the environment put there (secrets live there: `rate_limit: ${API_KEY}` must not print the key).
 */
function writtenAsInFile(issues: z.core.$ZodIssue[], written: unknown): z.core.$ZodIssue[] {
  return issues.map((issue) => {
    const text = valueAt(written, issue.path);
    return holdsReference(text) ? ({ ...issue, input: new WrittenAs(text) } as z.core.$ZodIssue) : issue;
  });
}

/** The settings of `platforms.webhook` the startup rules read for every route: a failed one leaves none checkable. */
const RULING_WEBHOOK_KEYS: ReadonlySet<string> = new Set(["secret", "host", "enabled", "routes", "extra"]);
/** The keys of a route the startup rules (config/validate.ts, io/targets/validate.ts) read. */
const RULING_ROUTE_KEYS: ReadonlySet<string> = new Set([
  "secret",
  "deliver",
  "deliver_only",
  "deliver_extra",
  "cron_job",
  "coalesce",
  "profile",
]);

/**
 * What of the schema's `input` the startup rules can still judge (ConfigInvalidError.checkable): unknown keys
 * dropped, a route with a failed value (or an unknown key one or two letters from a key the rules read that
 * it lacks, `secert`) left out whole, a failed section or setting that no rule reads left to its default.
 */
function checkableRest(
  input: Record<string, unknown>,
  issues: readonly z.core.$ZodIssue[],
): Config | undefined {
  const rest = structuredClone(input);
  const webhook = isMapping(rest.platforms) ? rest.platforms.webhook : undefined;
  const levels = isMapping(webhook) ? [webhook, webhook.extra].filter(isMapping) : [];
  const dropRoute = (name: PropertyKey) => {
    for (const level of levels) if (isMapping(level.routes)) delete level.routes[String(name)];
  };
  for (const issue of issues) {
    const [section, platform, key, route] = issue.path;
    const unknownKeys = issue.code === "unrecognized_keys" ? issue.keys : undefined;
    // A key meant as one the rules read that the mapping lacks (`secert`, `enabeld`): what it was meant
    // to say is not known.
    const meantAbsent = (at: unknown, ruling: ReadonlySet<string>) =>
      unknownKeys?.some((k) => {
        const meant = nearMiss(k, knownKeysAt(configSchema, issue.path));
        return meant !== undefined && ruling.has(meant) && !(isMapping(at) && Object.hasOwn(at, meant));
      }) ?? false;
    const dropUnknown = (at: unknown) => {
      if (isMapping(at)) for (const k of unknownKeys ?? []) delete at[k];
    };
    if (issue.path.length === 0 && unknownKeys !== undefined) dropUnknown(rest);
    else if (section !== "platforms") delete rest[section as string];
    else if (platform !== "webhook" || webhook === undefined) return undefined;
    else if (issue.path.length === 2) {
      if (unknownKeys === undefined || meantAbsent(webhook, RULING_WEBHOOK_KEYS)) return undefined;
      for (const level of levels) dropUnknown(level);
    } else if (key === "routes" && route !== undefined) {
      const written = levels.map((level) => valueAt(level, ["routes", route])).find(isMapping);
      if (issue.path.length === 4 && unknownKeys !== undefined && !meantAbsent(written, RULING_ROUTE_KEYS))
        for (const level of levels) dropUnknown(valueAt(level, ["routes", route]));
      else dropRoute(route);
    } else if (RULING_WEBHOOK_KEYS.has(key as string)) return undefined;
    else for (const level of levels) delete level[key as string];
  }
  const parsed = configSchema.safeParse(rest);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Notes on `config` the configuration rendered with the values its `${NAME}` gave stood in by text without
 * `$` or `{` (asWritten.ts), when one of them holds a `$`: the warnings about a `${...}` or `$NAME` left in a
 * value judge config.yaml's own text, never a value `.env` or the environment gave (a password with `${`).
 * Not noted when that rendering does not parse (a stood-in value a key refuses): the warnings read `config`.
 */
function noteConfigAsWritten(
  config: Config,
  rest: Record<string, unknown>,
  servers: unknown,
  scope: InterpolationScope,
  envFile: string,
): void {
  const standIn = asWrittenScope(scope, envFile, rest);
  if (standIn === undefined) return;
  const rendered = interpolateDeep(rest, standIn);
  const view = configSchema.safeParse({ ...rendered, mcp_servers: servers });
  if (!view.success) return;
  noteRouteFilters(view.data.platforms.webhook.routes, rendered);
  noteAsWritten(config, view.data);
}

/** A whole `${NAME}` (`${env:NAME}`, `${NAME:-fallback}`): the variable whose value it is when NAME is set. */
const WHOLE_VARIABLE = /^\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(?:[^{}]|\$\{[^{}]*\})*)?\}$/;

/** Whether a variable's text as written (see noteSecretsWriting) is a shell's `$NAME`. */
const writtenBare = (written: { value: string; verbatim: boolean } | undefined): boolean =>
  written !== undefined && !written.verbatim && writtenAsBareVariable(written.value);

/**
 * How a secret config.yaml writes as a whole `${NAME}` (or `${NAME:-…}` that NAME's value rendered) is
 * written: as NAME's own text (see noteSecretsWriting), `from` naming where NAME is set; undefined when the
 * text is other (then config.yaml's own text is judged).
 */
function substitutedWriting(
  text: unknown,
  secret: string,
  scope: InterpolationScope,
  envFile: string,
): SecretWriting | undefined {
  const name = typeof text === "string" ? WHOLE_VARIABLE.exec(text)?.[1] : undefined;
  if (name === undefined || typeof text !== "string") return undefined;
  const value = variableValue(name, scope);
  if (value === undefined || value === "" || value !== secret || interpolate(text, scope).value !== secret)
    return undefined;
  // As `${NAME}` reads them: `.env` first, then the environment.
  const inEnvFile = Object.hasOwn(scope.secrets, name);
  return {
    bareVariable: writtenBare(inEnvFile ? writtenEnvValue(envFile, name) : { value, verbatim: false }),
    from: inEnvFile ? `${envFile}: ${name}` : `environment variable ${name}`,
    substituted: name,
  };
}

/**
 * Notes on the global secret and each route's own whether it is written as a shell's `$NAME`
 * (secretWarnings.ts), judged on the text that wrote it, never on a value a `${NAME}` rendered into another
 * text: config.yaml's own text (asWritten: `secret: "x${GS}"` with `.env`'s `GS='$Abc…'` is no such form);
 * or, when that text is a whole `${NAME}` (`${NAME:-…}` that NAME rendered), NAME's; or, for a global secret
 * WEBHOOK_SECRET gave, that variable's. A variable's text is the environment's value as it was passed
 * (nothing replaces a variable there), or `.env`'s line before its `${NAME}` are replaced, none in
 * 'single quotes' (taken as written, as svc advises for a value with a `$`): `GS=$Abc` is the secret `$Abc`.
 */
function noteSecretsWriting(
  config: Config,
  raw: Record<string, unknown>,
  scope: InterpolationScope,
  variable: ReturnType<typeof lookupVar>,
  envFile: string,
): void {
  const { webhook } = config.platforms;
  const view = asWritten(config).platforms.webhook;
  const texts = writtenSecretTexts(raw);
  const bare = (text: string | undefined) => text !== undefined && writtenAsBareVariable(text);
  for (const [name, route] of Object.entries(webhook.routes))
    if (route.secret !== undefined)
      noteSecretWriting(
        route,
        substitutedWriting(texts.route(name), route.secret, scope, envFile) ?? {
          bareVariable: bare(view.routes[name]?.secret ?? route.secret),
        },
      );
  if (webhook.secret === undefined) return;
  if (variable === undefined) {
    noteSecretWriting(
      webhook,
      substitutedWriting(texts.global, webhook.secret, scope, envFile) ?? {
        bareVariable: bare(view.secret ?? webhook.secret),
      },
    );
    return;
  }
  const written = variable.inEnvFile
    ? writtenEnvValue(envFile, "WEBHOOK_SECRET")
    : { value: variable.value, verbatim: false };
  noteSecretWriting(webhook, { bareVariable: writtenBare(written), from: variable.from });
}

/** `config` with the values a `${VAR}` of `written` gave noted (givenValues.ts), for the rules that judge it. */
function withGivenValues(config: Config | undefined, written: Record<string, unknown>): Config | undefined {
  if (config !== undefined) noteGivenValues(config, written, PLATFORM_ALIASES);
  return config;
}

/** What removing a config.yaml link to nothing leads to, said when one is refused (isPresent). */
export const WITHOUT_CONFIG = "svc then runs on its embedded default, with no routes";

/** Reads config.yaml (or the embedded default), `.env` and the environment, and validates the result. */
export function loadConfig(
  options: {
    home?: string;
    env?: NodeJS.ProcessEnv;
    /** A reload of a gateway started from config.yaml, which refuses the embedded default in its place. */
    runningFromFile?: boolean;
  } = {},
): LoadedConfig {
  const env = options.env ?? process.env;
  const paths = svcPaths(options.home ?? svcHome(env));
  const scope = secretScope(paths, env);
  checkEnvFile(paths.env);
  const fromFile = isPresent(paths.config, options.runningFromFile === true ? undefined : WITHOUT_CONFIG);
  const read: ReturnType<typeof readYaml> = fromFile
    ? readYaml(paths.config)
    : { value: structuredClone(EMBEDDED_DEFAULT), blank: false, longIntegers: [] };
  const raw = read.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new SvcError(
      "config_invalid",
      `${paths.config}: the top level must be a mapping of sections (platforms:, agent:, gateway:, mcp_servers:), got ${Array.isArray(raw) ? "a list" : JSON.stringify(valueWithoutUrlCredentials(raw))}`,
    );
  }
  const record = raw as Record<string, unknown>;
  dropNullSections(record);
  // MCP entries stay raw: they are rendered at connect time (a `${VAR}` set later must be picked up),
  // except the keys the schema checks at load (transport, durations, ...: see mcpLoadKeys.ts).
  const { mcp_servers, ...rest } = record;
  const rendered = interpolateDeep(rest, scope);
  const settingsTwice = settingsWrittenTwice(rendered, scope, paths.env);
  const variableProblems: string[] = [];
  const enabledFromEnv = applyWebhookEnv(rendered, scope, paths.env, variableProblems);
  const mcp = renderLoadTimeKeys(mcp_servers, scope);
  const input = { ...rendered, mcp_servers: mcp.servers };
  const parsed = configSchema.safeParse(input, { reportInput: true });
  // `secret: 12345678901234567890123`: refused as `secret: 123456789012345` is.
  const longAsText = longIntegersAsText(configSchema, input, read.longIntegers);
  if (!parsed.success || mcp.issues.length > 0 || longAsText.length > 0) {
    const at = (issue: z.core.$ZodIssue) => issue.path.map(String).join("\0");
    const refused = new Set(longAsText.map(at));
    const issues = withUnsetLoadTimeKeys(
      [...(parsed.error?.issues ?? []).filter((issue) => !refused.has(at(issue))), ...longAsText],
      mcp,
    );
    throw new ConfigInvalidError(
      [
        ...variableProblems,
        formatIssues(
          paths.config,
          writtenAsInFile(
            filterPathsAsWritten(
              pointAtType(pointIntoExtra(issues, webhookExtraKeys(rendered)), mcp_servers),
              rest,
            ),
            { ...rest, mcp_servers },
          ),
          (path) =>
            // A key under `extra` is one of platforms.webhook's own.
            knownKeysAt(
              configSchema,
              path.filter((segment, i) => !(i === 2 && segment === "extra" && path[1] === "webhook")),
            ),
          true,
        ),
      ].join("\n"),
      paths.config,
      withGivenValues(checkableRest({ ...rendered, mcp_servers: mcp.servers }, issues), record),
    );
  }
  const enabledKey = webhookExtraKeys(rendered).keys.has("enabled") ? "extra.enabled" : "enabled";
  const enabledFrom = enabledFromEnv ?? `${paths.config}: platforms.webhook.${enabledKey}`;
  noteGivenValues(parsed.data, record, PLATFORM_ALIASES, scope.secrets);
  noteShadowedRoutes(parsed.data.platforms.webhook, routesWrittenTwice(rendered));
  noteRouteFilters(parsed.data.platforms.webhook.routes, rendered);
  noteShadowedSettings(parsed.data.platforms.webhook, settingsTwice);
  if (secretWrittenVerbatim(scope, paths.env)) noteSecretAsWritten(parsed.data.platforms.webhook);
  const secretVariable = lookupVar("WEBHOOK_SECRET", scope, paths.env);
  if (secretVariable !== undefined) noteSecretFrom(parsed.data.platforms.webhook, secretVariable.from);
  noteSecretsChecked(rest, parsed.data.platforms.webhook, scope, paths.env, secretVariable !== undefined);
  if (read.serverOrder !== undefined) withWrittenOrder(parsed.data.mcp_servers, read.serverOrder);
  noteConfigAsWritten(parsed.data, rest, mcp.servers, scope, paths.env);
  noteSecretsWriting(parsed.data, rest, scope, secretVariable, paths.env);
  // The startup rules still judge the rest (WEBHOOK_SECRET's `${NAME}` that nothing set, a route's secret, ...).
  if (variableProblems.length > 0)
    throw new ConfigInvalidError(variableProblems.join("\n"), paths.config, parsed.data);
  return { config: parsed.data, paths, scope, fromFile, blank: read.blank, enabledFrom, written: record };
}
