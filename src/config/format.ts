import { dirname, join } from "node:path";
import type { z } from "zod";
import { terminalText } from "../io/terminalText.js";
import { describe, type Quoting, WrittenAs } from "./describe.js";
import { leftInEnvValue } from "./envFile.js";
import { envNameNearMiss } from "./envNearMiss.js";
import { elsewhere, otherClientsKeys } from "./keysElsewhere.js";
import { nearMiss } from "./nearMiss.js";
import { setInAProfileEnv } from "./profileEnvsSetting.js";
import { protocolHint } from "./protocolHint.js";
import {
  AGENT_PROVIDERS,
  MAX_CONCURRENT_RUNS,
  MAX_DRAIN_SECONDS,
  MAX_RETRIES,
  MAX_STEPS,
} from "./sections/agent.js";
import { IN_EXAMPLE } from "./sections/filters.js";
import { MAX_SEARCH_RESULTS } from "./sections/tools.js";
import { MAX_BODY_BYTES_LIMIT, MAX_WORKERS, ROUTE_NAME } from "./sections/webhook.js";
import { FINITE_SECONDS, TIMER_SECONDS_KEYS } from "./timerSeconds.js";
import { bracedListHint, unquotedTemplateHint } from "./unquotedTemplate.js";
import { CREDENTIALS_LEFT_OUT, textWithoutUrlCredentials, withoutUrlCredentials } from "./urlCredentials.js";

/** `filters: x` (text): what a list of filters looks like, as config.yaml and as a JSON store record. */
const FILTERS_EXAMPLE = {
  yaml: "filters is a list of filters, each a field and one operator: filters: [{field: action, in: [opened, reopened]}]",
  json: 'filters is a list of filters, each a field and one operator: "filters": [{"field": "action", "in": ["opened", "reopened"]}]',
} as const;

/** A place that takes one filter: an item of `filters`, `all` or `any`, or `not`. */
function isFilterSlot(path: readonly PropertyKey[]): boolean {
  if (!path.includes("filters")) return false;
  const [parent, last] = path.slice(-2).map(String);
  return last === "not" || (/^\d+$/.test(last ?? "") && ["filters", "all", "any"].includes(parent ?? ""));
}

/** `filters: [action]`: a filter is a mapping; the text is taken for the field it names when it can be one. */
function filterHint(text: string, json: boolean): string {
  const field = /^[^\s{}[\],:#'"]+$/.test(text) && textWithoutUrlCredentials(text) === text ? text : "action";
  return json
    ? `a filter is a field and one operator: {"field": ${JSON.stringify(field)}, "exists": true}`
    : `a filter is a field and one operator: {field: ${field}, exists: true}`;
}

const EXPECTED_WORDS: Record<string, string> = {
  number: "a number",
  boolean: "true or false",
  string: "a string",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
  int: "a whole number",
};

/**
 * How to write a number or a boolean that arrived as text: quoted in the file (`port: "8644"`), from a
 * `${VAR}` (always text), or in the YAML 1.1 spelling other tools accept (`enabled: yes`).
 */
/** Seconds in each unit other tools write a duration with (`30s`, `5m`, `1h`, `500ms`). */
const SECONDS_IN: Readonly<Record<string, number>> = { ms: 0.001, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
/** Bytes in each unit a size is written with (`1mb`, `512k`): binary, as the default 1048576 is 1 MiB. */
const BYTES_IN: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1048576,
  mb: 1048576,
  mib: 1048576,
  g: 1073741824,
  gb: 1073741824,
  gib: 1073741824,
};

/**
 * A duration or size written with its unit (`window_seconds: 1m`, `max_body_bytes: 1mb`) or a rate with its
 * period (`rate_limit: 30/min`): the plain number to write instead, or undefined.
 */
function plainNumberFor(key: string, input: string): string | undefined {
  const unit = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(input);
  const [amount, suffix] = [Number(unit?.[1]), unit?.[2]?.toLowerCase() ?? ""];
  if (key.endsWith("_seconds") && Object.hasOwn(SECONDS_IN, suffix)) {
    const seconds = amount * (SECONDS_IN[suffix] as number);
    // The plain number must pass the next load too: past the longest drain, that longest is what to write.
    if (key === "drain_timeout_seconds" && seconds > MAX_DRAIN_SECONDS)
      return `write at most ${MAX_DRAIN_SECONDS} (a number of seconds, without a unit: ${input.trim()} is ${seconds}, past the longest drain, 1 hour)`;
    return `write ${seconds} (a number of seconds, without a unit)`;
  }
  if (key.endsWith("_bytes") && Object.hasOwn(BYTES_IN, suffix)) {
    const bytes = Math.round(amount * (BYTES_IN[suffix] as number));
    // The plain number must pass the next load too: past the largest body, that largest is what to write.
    if (key === "max_body_bytes" && bytes > MAX_BODY_BYTES_LIMIT)
      return `write at most ${MAX_BODY_BYTES_LIMIT} (a number of bytes, without a unit: ${input.trim()} is ${bytes}, past the largest body svc takes, 256 MiB)`;
    return `write ${bytes} (a number of bytes, without a unit)`;
  }
  const rate = /^\s*(\d+)\s*(?:\/|per\s+)\s*(?:m|min|minute)\s*$/i.exec(input);
  if (key === "rate_limit" && rate !== null)
    return `write ${rate[1]} (rate_limit counts requests per minute)`;
  return undefined;
}

function textForTypeHint(expected: string, input: string, key = ""): string {
  if (expected === "number" || expected === "int") {
    const plain = plainNumberFor(key, input);
    if (plain !== undefined) return ` — ${plain}`;
    if (input.trim() !== "" && Number.isFinite(Number(input)))
      return " — write the number without quotes (a ${VAR} always gives text)";
    return " — write a plain number, without units or quotes";
  }
  if (expected === "boolean")
    return /^(yes|no|on|off|y|n)$/i.test(input)
      ? " — write true or false (YAML 1.2 reads yes/no/on/off as text)"
      : " — write true or false, without quotes";
  return "";
}

/**
 * How to write a number or a boolean that arrived as text in a JSON file: the quotes are the mistake, or a
 * unit (`"window_seconds": "1m"`, whose number without quotes would be no JSON), as in config.yaml.
 */
function textForJsonHint(expected: string, input: string, key: string): string {
  if (expected === "number" || expected === "int") {
    const plain = plainNumberFor(key, input);
    if (plain !== undefined) return ` — ${plain}`;
    return input.trim() !== "" && Number.isFinite(Number(input))
      ? " — write the number without quotes"
      : " — write a plain number, without units or quotes";
  }
  if (expected === "boolean") return " — write true or false, without quotes";
  return "";
}

/**
 * An empty text value, with what to do: a `${VAR}` that gives an empty value (`GH_SECRET=` left blank in
 * `.env`) is named, since the file itself shows no empty value; a value written empty can be left out.
 */
function emptyText(input: unknown, file: string): string {
  if (input instanceof WrittenAs && typeof input.text === "string") {
    const env = join(dirname(file), ".env");
    return `must not be empty, but ${input.text} gives an empty value — set it in ${env} or the environment`;
  }
  return "must not be empty — write a value, or leave the key out";
}

/**
 * A `${VAR}` that is set nowhere, with the file to set it in: the `.env` beside config.yaml, whose
 * variables config.yaml reads (a profile's own `.env` serves only its MCP connections).
 */
function unsetVariable(file: string, name: string, orElse: unknown, path: readonly PropertyKey[]): string {
  const env = join(dirname(file), ".env");
  // An MCP server's `${VAR}` may come from a profile's .env (its connections there read it); the agent's not.
  const inProfile = path[0] === "agent" ? setInAProfileEnv(file, name) : "";
  return `\${${name}} is not set — set ${name} in ${env} or the environment${typeof orElse === "string" ? `, or ${orElse}` : ""}${leftInEnvValue(env, name)}${inProfile}${envNameNearMiss(env, name)}`;
}

/** What to write instead of `.inf` or `.nan` for a number whose schema bounds it: the range it takes. */
const FINITE_IN_RANGE: Readonly<Record<string, string>> = {
  drain_timeout_seconds: `write a finite number of seconds, at most ${MAX_DRAIN_SECONDS}`,
  max_concurrent_runs: `write a whole number from 1 to ${MAX_CONCURRENT_RUNS}`,
  max_steps: `write a whole number from 1 to ${MAX_STEPS}`,
  retries: `write a whole number from 0 to ${MAX_RETRIES}`,
  max_results: `write a whole number from 1 to ${MAX_SEARCH_RESULTS}`,
  workers: `write a whole number from 0 to ${MAX_WORKERS}`,
};

/** The webhook adapter's numbers, by key (directly under `platforms.webhook` or under its `extra`). */
const WEBHOOK_RANGES: Readonly<Record<string, string>> = {
  port: "write a port from 0 to 65535 (0 picks a free one)",
  rate_limit: "write the requests per minute each route takes, a whole number of 1 or more (default 30)",
  max_body_bytes: `write the largest body in bytes, a whole number from 1 to ${MAX_BODY_BYTES_LIMIT} (256 MiB, past which no body could be read as JSON; at most 64 bodies are received at once, so memory for them is bounded at 64 × this; default 1048576)`,
  script_timeout_seconds: "write a number of seconds above 0 (default 30)",
};

/** The agent's numbers without a range of their own to name, by key (directly under `agent`). */
const AGENT_RANGES: Readonly<Record<string, string>> = {
  timeout_seconds: "write the longest a run may take in seconds, above 0 (default 600)",
  max_tokens: "write the output tokens one model turn may use, a whole number of 1 or more (default 4096)",
  max_tool_result_chars: "write a number of characters such as 100000, or 0 for no cap",
};

/** The `gateway` section's numbers, by key. */
const GATEWAY_RANGES: Readonly<Record<string, string>> = {
  drain_timeout_seconds: `write a number of seconds from 0 to ${MAX_DRAIN_SECONDS} (default 30)`,
};

/** The `tools` section's sizes, by `<tool>.<key>` (docs/agent-tools.md). */
const TOOLS_RANGES: Readonly<Record<string, string>> = {
  "web.max_bytes": "write the bytes read from one page, a whole number of 1 or more (default 2097152)",
  "web.max_chars":
    "write the characters of a page's text returned to the model, a whole number of 1 or more (default 20000)",
  "terminal.max_output_bytes":
    "write the bytes kept of stdout and of stderr each, a whole number of 1 or more (default 65536)",
  "file.max_bytes":
    "write the most bytes file_read returns and file_write accepts, a whole number of 1 or more (default 1048576)",
};

/** A route's `coalesce` numbers (a subscription's too), by key. */
const COALESCE_RANGES: Readonly<Record<string, string>> = {
  window_seconds: "write the quiet window in seconds, 0 or more (default 30)",
  max_wait_seconds: "write the longest wait in seconds from a group's first event, 0 or more (default 300)",
};

/** What to write for a number out of its key's range, where the key's range is known; undefined elsewhere. */
function rangeAdvice(path: readonly PropertyKey[]): string | undefined {
  const at = path.map(String);
  const key = at.at(-1) ?? "";
  const webhook = at[0] === "platforms" && at[1] === "webhook" && at.length === (at[2] === "extra" ? 4 : 3);
  if (webhook && Object.hasOwn(WEBHOOK_RANGES, key)) return WEBHOOK_RANGES[key];
  if (at.at(-2) === "coalesce" && Object.hasOwn(COALESCE_RANGES, key)) return COALESCE_RANGES[key];
  if (at[0] === "agent" && at.length === 2 && Object.hasOwn(AGENT_RANGES, key)) return AGENT_RANGES[key];
  if (at[0] === "gateway" && at.length === 2 && Object.hasOwn(GATEWAY_RANGES, key))
    return GATEWAY_RANGES[key];
  const tool = `${at[1] ?? ""}.${key}`;
  if (at[0] === "tools" && at.length === 3 && Object.hasOwn(TOOLS_RANGES, tool)) return TOOLS_RANGES[tool];
  if (key !== "drain_timeout_seconds" && Object.hasOwn(FINITE_IN_RANGE, key)) return FINITE_IN_RANGE[key];
  return undefined;
}

/** A size or range problem in words (zod's own text otherwise reads "Too big: expected number to be <=65535"). */
function describeBound(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall, file: string): string {
  const bound =
    issue.code === "too_big"
      ? `${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`
      : `${issue.inclusive ? "at least" : "more than"} ${String(issue.minimum)}`;
  if (issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint") {
    const advice = rangeAdvice(issue.path);
    return `expected ${bound}, got ${describeValue(issue.path, issue.input)}${advice === undefined ? "" : ` — ${advice}`}`;
  }
  if (issue.code === "too_small" && issue.origin === "string" && Number(issue.minimum) === 1)
    return emptyText(issue.input, file);
  const one = Number(issue.code === "too_big" ? issue.maximum : issue.minimum) === 1;
  const unit = issue.origin === "string" ? (one ? "character" : "characters") : one ? "entry" : "entries";
  // `command: []`: the provider has nothing to run.
  const argv =
    issue.path.map(String).join(".") === "agent.command"
      ? " — write the program and its arguments, one entry each: command: [my-agent, --quiet]"
      : "";
  return `expected ${bound} ${unit}, got ${describeValue(issue.path, issue.input)}${argv}`;
}

/**
 * What each word of a list written as one text is, where words cannot hold a space: the arguments of an
 * argv (`agent.command`, an MCP server's `args`: no shell splits them) and a route's skill and toolset
 * names. Undefined elsewhere (an event type may hold spaces: GitLab's `Merge Request Hook`).
 */
function listOfWords(path: readonly PropertyKey[]): { key: string; noun: "argument" | "name" } | undefined {
  const at = path.map(String);
  if (at.join(".") === "agent.command") return { key: "command", noun: "argument" };
  if (at.length === 3 && at[0] === "mcp_servers" && at[2] === "args")
    return { key: "args", noun: "argument" };
  const key = at.at(-1);
  if (at.includes("routes") && (key === "skills" || key === "toolsets")) return { key, noun: "name" };
  return undefined;
}

/** The keys a mapping at an issue's path may have, to suggest the one a misspelt key meant. */
export type KnownKeys = (path: readonly PropertyKey[]) => readonly string[];

const ON_WORDS = new Set(["true", "enabled", "enable", "on", "yes"]);
const OFF_WORDS = new Set(["false", "disabled", "disable", "off", "no"]);

/**
 * What to write for a mapping written as the one word of its main key: `agent: openai` →
 * `agent: {provider: openai}`, `state: redis` → `state: {backend: redis}`, a platform written `true` (or
 * `enabled`) → `{enabled: true}`; undefined for anything else.
 */
function sectionWord(path: readonly PropertyKey[], input: unknown): string | undefined {
  const [section, platform] = path;
  const word =
    typeof input === "boolean" ? String(input) : typeof input === "string" ? input.trim().toLowerCase() : "";
  const on = ON_WORDS.has(word) ? true : OFF_WORDS.has(word) ? false : undefined;
  if (path.length === 2 && section === "platforms" && typeof platform === "string") {
    return on === undefined
      ? undefined
      : `a platform is a mapping of its settings: write ${platform}: {enabled: ${on}}, its other keys beside enabled`;
  }
  // An MCP server's `sampling: true` or `elicitation: false`: the switch is the mapping's `enabled`.
  const policy = path[2];
  if (
    path.length === 3 &&
    section === "mcp_servers" &&
    (policy === "sampling" || policy === "elicitation") &&
    on !== undefined
  )
    return `${policy} is a mapping of its settings: write ${policy}: {enabled: ${on}}`;
  if (path.length !== 1 || typeof input !== "string") return undefined;
  const value = input.trim();
  if (section === "agent" && (AGENT_PROVIDERS as readonly string[]).includes(value))
    return `the agent section is a mapping of its settings: write agent: {provider: ${value}}`;
  if (section === "state" && (value === "local" || value === "redis"))
    return `the state section is a mapping of its settings: write state: {backend: ${value}}`;
  return undefined;
}

/**
 * The page that lists the keys at `path`: an MCP server entry's in docs/mcp.md (its `oauth` mapping's in
 * docs/mcp-oauth.md), a delivery platform's in docs/delivery-targets.md, `tools` in docs/agent-tools.md,
 * the rest (webhook adapter and routes, agent, gateway, state, the top level) in docs/configuration.md.
 */
export function docPageOf(path: readonly PropertyKey[]): string {
  if (path[0] === "mcp_servers") return path[2] === "oauth" ? "docs/mcp-oauth.md" : "docs/mcp.md";
  if (path[0] === "tools") return "docs/agent-tools.md";
  if (path[0] === "platforms" && path.length > 1 && path[1] !== "webhook") return "docs/delivery-targets.md";
  return "docs/configuration.md";
}

/** `mcp_servers.<name>.tools: [a, b]`: a list of tool names where the tools policy mapping goes. */
function mcpToolsList(path: readonly PropertyKey[], input: unknown): input is string[] {
  return (
    path.length === 3 &&
    path[0] === "mcp_servers" &&
    path[2] === "tools" &&
    Array.isArray(input) &&
    input.length > 0 &&
    input.every((x) => typeof x === "string")
  );
}

/**
 * `env: [GITHUB_TOKEN=ghp_..., A=1]`, `env: "A=1"` or `headers: ["Authorization: Bearer ..."]` (as a docker
 * command line, `claude mcp add -e` or a curl line writes them): an MCP entry's env or headers written as a
 * list or text, whose values are credentials as often as not. Undefined for any other key; else the names
 * of its entries when each has one (`NAME=value` / `Name: value`).
 */
function mcpPairText(path: readonly PropertyKey[], input: unknown): { names?: string[] } | undefined {
  const section = path[2];
  if (path.length !== 3 || path[0] !== "mcp_servers" || (section !== "env" && section !== "headers"))
    return undefined;
  const entries = typeof input === "string" ? [input] : input;
  if (!Array.isArray(entries)) return undefined;
  const separator = section === "env" ? /^([^=\s]+)=/ : /^([^:\s]+):/;
  const names = entries.map((entry) => (typeof entry === "string" ? separator.exec(entry)?.[1] : undefined));
  return names.length > 0 && names.every((name) => name !== undefined) ? { names: names as string[] } : {};
}

function unknownKeys(
  keys: readonly string[],
  known: readonly string[],
  at?: { path: readonly PropertyKey[]; input?: unknown },
  path: readonly PropertyKey[] = at?.path ?? [],
): string {
  const foreign = otherClientsKeys(path, keys, known);
  if (foreign !== undefined)
    return `unknown key${keys.length > 1 ? "s" : ""} ${keys.map((k) => `"${k}"`).join(", ")} — ${foreign} (see docs/mcp.md)`;
  const meant = keys.flatMap((key) => {
    const match = nearMiss(key, known) ?? withUnit(key, known);
    return match === undefined || keys.includes(match) ? [] : [[key, match] as const];
  });
  const moved =
    at !== undefined && meant.length === 0 && keys.length === 1
      ? elsewhere(at.path, keys[0] as string, at.input)
      : undefined;
  // `deliver_extra:` written at the routes' indentation: a route named deliver_extra, whose keys are unknown.
  const misplaced =
    at !== undefined && routePropertyAsName(path, known) ? routePropertyHint(path) : undefined;
  const hint =
    misplaced ??
    moved ??
    severalMoved(keys, meant, at) ??
    (meant.length === 0
      ? "check the spelling"
      : `did you mean ${meant.map(([key, match]) => (keys.length === 1 ? `"${match}"` : `"${match}" for "${key}"`)).join(", ")}?`);
  const doc = docPageOf(path);
  return `unknown key${keys.length > 1 ? "s" : ""} ${keys.map((k) => `"${k}"`).join(", ")} — ${hint} (see ${doc})`;
}

/**
 * Several unknown keys of which some belong elsewhere (a subscription record's `enabled` and `description`
 * pasted into a config.yaml route, as `svc webhook list` shows them): each one's hint, as for one key,
 * then the near misses and the keys left to check, in the shape of `otherClientsKeys`. Undefined when
 * none of the keys belongs elsewhere.
 */
function severalMoved(
  keys: readonly string[],
  meant: ReadonlyArray<readonly [string, string]>,
  at: { path: readonly PropertyKey[]; input?: unknown } | undefined,
): string | undefined {
  if (at === undefined || keys.length < 2) return undefined;
  const guessed = new Set(meant.map(([key]) => key));
  const moves = keys.flatMap((key) => {
    const hint = guessed.has(key) ? undefined : elsewhere(at.path, key, at.input);
    return hint === undefined ? [] : [[key, hint] as const];
  });
  if (moves.length === 0) return undefined;
  const unmatched = keys.filter((key) => !guessed.has(key) && !moves.some(([moved]) => moved === key));
  return [
    ...moves.map(([key, hint]) => `${key}: ${hint}`),
    ...meant.map(([key, match]) => `"${key}": did you mean "${match}"?`),
    ...(unmatched.length === 0 ? [] : [`${unmatched.map((k) => `"${k}"`).join(", ")}: check the spelling`]),
  ].join("; ");
}

/**
 * The known key that is `key` with its unit (`window` → `window_seconds`, `max_wait` → `max_wait_seconds`,
 * `max_body` → `max_body_bytes`): other tools name these without the unit, which is too far for a typo.
 */
function withUnit(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  return known.find((candidate) => UNITS.some((unit) => candidate === `${lower}_${unit}`));
}
const UNITS = ["seconds", "ms", "bytes"];

/** Keys whose value is a credential (`secret`, `token`, `auth_token`, `client_secret`, `password`, ...). */
const SECRET_KEY = /(?:^|_)(?:secret|token|password)$|^(?:api_key|authorization)$/i;

/**
 * A webhook `secret` written as a list (`[old, new]`, meant for a rotation): a route checks one secret, and
 * senders that rotate sign with both meanwhile, so the new one alone refuses nothing.
 */
const ONE_SECRET =
  "a route checks one secret: write the one the sender signs with (to change it without refused deliveries, see docs/webhook-auth.md, Rotating a secret)";

/** What a message says about a value: the value itself, except under a secret key (its type only). */
function describeValue(path: readonly PropertyKey[], input: unknown): string {
  const key = path.at(-1);
  if (typeof key === "string" && SECRET_KEY.test(key) && input !== undefined && input !== null)
    return `a ${Array.isArray(input) ? "list" : typeof input === "object" ? "mapping" : typeof input === "bigint" ? "number" : typeof input} (not shown: the key holds a secret)`;
  // `routes: [{name: gh, secret: s3cret}]` written as a list: the secret inside is not quoted either.
  if (holdsSecretKey(input))
    return `${Array.isArray(input) ? "a list" : "a mapping"} (not shown: it holds a secret)`;
  return describe(input);
}

/** A list or mapping with a credential key somewhere inside. */
function holdsSecretKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsSecretKey);
  if (typeof value !== "object" || value === null || value instanceof WrittenAs) return false;
  return Object.entries(value).some(([key, item]) => SECRET_KEY.test(key) || holdsSecretKey(item));
}

/** An MCP entry's `env` or `headers` name that carries a credential (DB_PASSWORD, X-Api-Key, Cookie, ...). */
const CREDENTIAL_NAME = /key|token|secret|pass|auth|cred|session|cookie/i;

/**
 * A wrong `env`/`headers` value under a credential name: its kind only. Its schema quotes the value (a
 * team name in a list is worth seeing); a key or password written as a list or mapping by mistake is not.
 */
function hiddenEntryValue(issue: z.core.$ZodIssue): string | undefined {
  const [section, name] = issue.path.slice(-2);
  if ((section !== "env" && section !== "headers") || typeof name !== "string" || !CREDENTIAL_NAME.test(name))
    return undefined;
  if (!issue.message.startsWith("expected a string, got ")) return undefined;
  const received =
    issue.code === "invalid_union"
      ? /received (\w+)/.exec(issue.errors[0]?.[0]?.message ?? "")?.[1]
      : undefined;
  const kind =
    received === "array" ? "a list" : received === "object" ? "a mapping" : "a value that is not text";
  return `expected a string, got ${kind} (not shown: the key holds a secret)`;
}

/** An MCP server's `command` written as a whole argv list (`[npx, -y, pkg]`, as opencode's config writes it). */
/**
 * A server written as its url or command line (`a: https://x/mcp`, `a: npx -y pkg`, `a: [npx, -y, pkg]`): the
 * entry to write, or undefined. A line with quotes or a credential is not shown back (see argsTextMessage).
 */
function mcpEntryShorthand(
  path: readonly PropertyKey[],
  input: unknown,
): { entry: string; hidden: boolean } | undefined {
  if (path.length !== 2 || path[0] !== "mcp_servers") return undefined;
  if (typeof input === "string" && /^https?:\/\/\S+$/i.test(input.trim()))
    return withoutUrlCredentials(input.trim()) !== input.trim()
      ? { entry: "{url: ...}", hidden: true }
      : { entry: `{url: ${input.trim()}}`, hidden: false };
  const words =
    typeof input === "string"
      ? input.trim().split(/\s+/)
      : Array.isArray(input) && input.every((w) => typeof w === "string")
        ? (input as string[])
        : undefined;
  if (words === undefined || words[0] === undefined || words[0] === "") return undefined;
  if (words.some((w) => /['"\\]/.test(w)) || holdsCredential(words))
    return { entry: "{command: <program>, args: [<argument>, ...]}", hidden: true };
  const item = flowItem;
  const [command, ...args] = words;
  return {
    entry: `{command: ${item(command)}${args.length > 0 ? `, args: [${args.map(item).join(", ")}]` : ""}}`,
    hidden: false,
  };
}

/** An option whose value is a credential (`--api-key`, `--token=`): its value is never shown. */
const CREDENTIAL_OPTION = /^--?[^=]*(?:key|token|secret|pass|auth|cred|cookie)/i;

/** Words of a command line holding a credential (an option's value, a URL's password): not quoted back. */
const holdsCredential = (words: readonly string[]) =>
  words.some(
    (w) =>
      CREDENTIAL_OPTION.test(w) || /:\/\/[^/@\s]*:[^/@\s]*@/.test(w) || textWithoutUrlCredentials(w) !== w,
  );

/** `coalesce: <key>` (or `[<key>]`): the mapping to write, the key without a URL's credentials. */
function coalesceKeyFix(written: string, json: boolean): string {
  const key = textWithoutUrlCredentials(written);
  const leftOut = key === written ? "" : CREDENTIALS_LEFT_OUT;
  return json
    ? `write "coalesce": {"key": ${JSON.stringify(key)}}${leftOut}`
    : `write coalesce: {key: ${flowItem(key)}}${leftOut}`;
}

/** `chat_id=42` or `chat_id: 42`: a deliver_extra entry written as text. */
const EXTRA_PAIR = /^\s*([A-Za-z_][\w.-]*)\s*(?:=|:\s)\s*(.*?)\s*$/;

/**
 * What to write for a `deliver_extra` that is not a mapping: items written `key=value` (as `--deliver-extra`
 * takes them) or `key: value` (a list item quoted whole) as the mapping they mean, else the mapping's shape.
 */
function deliverExtraHint(input: unknown, json: boolean): string {
  const items = typeof input === "string" ? [input] : Array.isArray(input) ? input : [];
  const pairs = items.map((item) => (typeof item === "string" ? EXTRA_PAIR.exec(item) : null));
  const lead = "deliver_extra maps each key to its value: write";
  if (pairs.length > 0 && pairs.every((pair) => pair !== null && pair[2] !== "")) {
    // `url=https://hooks.example.com/x?token=<token>`: written back without the token.
    const written = pairs.map((pair) => pair?.[2] ?? "");
    const entries = pairs.map(
      (pair, i) => [pair?.[1] ?? "", textWithoutUrlCredentials(written[i] ?? "")] as const,
    );
    const leftOut = entries.some(([, v], i) => v !== written[i]) ? CREDENTIALS_LEFT_OUT : "";
    return json
      ? `${lead} "deliver_extra": {${entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")}}${leftOut}`
      : `${lead} deliver_extra: {${entries.map(([k, v]) => `${k}: ${flowItem(v)}`).join(", ")}}${leftOut}`;
  }
  return json
    ? `${lead} "deliver_extra": {"chat_id": "<id>"} (each target's keys: docs/delivery-targets.md)`
    : `${lead} deliver_extra: {chat_id: <id>} (each target's keys: docs/delivery-targets.md)`;
}

/** One entry of a YAML flow list: as written when YAML reads it as that text, else in double quotes. */
export const flowItem = (w: string) =>
  /^[A-Za-z0-9_./~=+-][A-Za-z0-9_./~=+@:-]*$/.test(w) && !/:$/.test(w) ? w : JSON.stringify(w);

/**
 * A list of words written as one line of text (`args: -y @scope/server`, `agent.command: /usr/bin/agent
 * --quiet`, `skills: review triage`): each word is one entry, so the fix is a list of the words (a list
 * of the line alone would pass it as one argument, with its spaces). A word YAML would not read as plain
 * text (`@scope/server`) is quoted; a line with quotes, a credential option or a URL's password is not split.
 */
function wordsTextMessage(
  text: string,
  { key, noun }: { key: string; noun: "argument" | "name" },
  syntax: "yaml" | "json",
): string {
  const words = text.trim().split(/\s+/);
  const why =
    noun === "argument"
      ? "each argument is one entry of a list (svc starts no shell to split a line)"
      : "each name is one entry of a list (a name holds no space)";
  if (/['"\\]/.test(text) || holdsCredential(words))
    return `expected a list, got text (not shown: it may hold a credential or quoting) — ${why}: write one list entry per ${noun}: ${key}: [first, second, ...]`;
  const item = (w: string) => (syntax === "yaml" ? flowItem(w) : JSON.stringify(w));
  return `expected a list, got ${JSON.stringify(text)} — ${why}: write ${key}: [${words.map(item).join(", ")}]`;
}

/** `command: {path: npx, args: [-y, pkg]}`, as Zed's context_servers wrote a server's command. */
function mcpCommandMapping(
  path: readonly PropertyKey[],
  input: unknown,
): input is { path: string; args?: unknown; env?: unknown } {
  return (
    path.at(-1) === "command" &&
    path.at(-3) === "mcp_servers" &&
    typeof input === "object" &&
    input !== null &&
    typeof (input as { path?: unknown }).path === "string"
  );
}

function mcpCommandList(path: readonly PropertyKey[], input: unknown): input is [string, ...string[]] {
  return (
    path.at(-1) === "command" &&
    path.at(-3) === "mcp_servers" &&
    Array.isArray(input) &&
    input.length > 0 &&
    input.every((part) => typeof part === "string" && part !== "")
  );
}

/**
 * One line per problem: `<file>: <key.path>: <what is wrong>`. `placement` (config.yaml only) adds where
 * an unknown key belongs when it is another section's key.
 */
/**
 * A key as an issue's path shows it: a key holding a line break, a control or an invisible character (a
 * route name quoted in the file as "bad\nname") in JSON quotes with those escaped, so the line stays one
 * line and shows what the file holds; a URL written as a key (an MCP server named by its URL) without its
 * credentials.
 */
function shownKey(written: string): string {
  const key = textWithoutUrlCredentials(written);
  return /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(key) ? terminalText(JSON.stringify(key)) : key;
}

export function formatIssue(
  file: string,
  issue: z.core.$ZodIssue,
  known?: KnownKeys,
  placement = false,
  syntax: "yaml" | "json" = "yaml",
): string {
  // A list entry as `args[1]`, a mapping key as `.key`.
  const path =
    issue.path
      .map((key, i) =>
        typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${shownKey(String(key))}`,
      )
      .join("") || "(top level)";
  let message = hiddenEntryValue(issue) ?? issue.message;
  // A check's own message that quotes a value a `${VAR}` gave (quotingIssue): said again of the file's text.
  const quoting = issue.code === "custom" ? (issue.params?.quoting as Quoting | undefined) : undefined;
  if (typeof quoting === "function" && issue.input instanceof WrittenAs)
    message = quoting(describe(issue.input), true);
  if (issue.code === "invalid_type") {
    const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
    const pairs = mcpPairText(issue.path, issue.input);
    const section = String(issue.path[2]);
    message =
      issue.input === undefined
        ? `missing — expected ${expected}`
        : pairs !== undefined
          ? // The values are credentials as often as not: only the names are shown.
            `expected ${expected}, got ${Array.isArray(issue.input) ? "a list" : "text"} (not shown: ${section === "env" ? "env" : "header"} values are often credentials) — write each entry as NAME: value${pairs.names === undefined ? "" : `, ${section}: {${pairs.names.map((n) => (syntax === "json" ? `${JSON.stringify(n)}: "..."` : `${n}: ...`)).join(", ")}}`}`
          : `expected ${expected}, got ${describeValue(issue.path, issue.input)}`;
    // `webhook:` then `  enabled true` (or `secret abc`, `port:8644`) alone under it: YAML reads the line
    // as the mapping's text. Only a key of that mapping is written back: the rest may be a secret.
    const keyLine =
      (issue.expected === "record" || issue.expected === "object") &&
      syntax === "yaml" &&
      typeof issue.input === "string"
        ? /^([A-Za-z0-9_.-]+)(?::(?=\S)|\s+(?=\S))/.exec(issue.input)
        : null;
    if (keyLine?.[1] !== undefined && (known?.(issue.path) ?? []).includes(keyLine[1]))
      message = `expected ${expected}, got a line with no ": " after its key ${keyLine[1]} (not shown) — write ${keyLine[1]}: <value>, a colon and a space after the key`;
    // `routes:` then `  events: [push]` at the routes' own indentation: a route's key read as a route's name.
    else if (routePropertyAsName(issue.path, known?.(issue.path) ?? []) && syntax === "yaml")
      message += ` — ${routePropertyHint(issue.path)}`;
    // `github: <secret>`: a route written as its one value, which is its secret as often as not; so is a
    // subscription record (`{"demo": "<secret>"}` in webhook_subscriptions.json).
    else if (routeAsValue(issue.path, issue.input, syntax)) {
      const got = `expected ${expected}, got ${typeof issue.input === "number" ? "a number" : typeof issue.input === "boolean" ? "true or false" : "text"} (not shown: it may be the route's secret)`;
      message =
        syntax === "json"
          ? `${got} — a subscription record is a mapping of its keys: write ${JSON.stringify(String(issue.path.at(-1)))}: {"secret": "...", ...} with its other keys (events, prompt, ...) beside secret, or create it with svc webhook subscribe`
          : `${got} — a route is a mapping of its keys: write ${String(issue.path.at(-1))}: on its own line, with secret: and its other keys (events, prompt, ...) indented under it`;
    }
    // `.inf`, `.nan` or `1e400` (past what a double holds): a duration that is capped says at what.
    else if (issue.expected === "number" && typeof issue.input === "number" && !Number.isFinite(issue.input))
      message += ` — ${TIMER_SECONDS_KEYS.has(String(issue.path.at(-1))) ? FINITE_SECONDS : (FINITE_IN_RANGE[String(issue.path.at(-1))] ?? "write a finite number")}`;
    // `enabled: 1`: YAML's number, where WEBHOOK_ENABLED (an environment text) takes 1 and 0.
    else if (issue.expected === "boolean" && (issue.input === 1 || issue.input === 0)) {
      const webhookEnabled =
        issue.path.map(String).join(".") === "platforms.webhook.enabled" ||
        issue.path.map(String).join(".") === "platforms.webhook.extra.enabled";
      message += ` — write true or false (${syntax === "json" ? "JSON's" : "YAML reads"} 1 and 0 ${syntax === "json" ? "are" : "as"} numbers${webhookEnabled ? "; WEBHOOK_ENABLED in .env or the environment takes 1 and 0" : ""})`;
    }
    // `port: 80.5`: a number, but not a whole one; the key's range when it has one.
    else if (issue.expected === "int" && typeof issue.input === "number") {
      const advice = rangeAdvice(issue.path);
      if (advice !== undefined) message += ` — ${advice}`;
    }
    // YAML reads 12345, true or 1e5 as a number or bool; quoting keeps the text.
    else if (
      issue.expected === "string" &&
      (typeof issue.input === "number" || typeof issue.input === "bigint" || typeof issue.input === "boolean")
    )
      message += ` — put it in quotes if it is meant as text`;
    else if (issue.path.at(-1) === "secret" && Array.isArray(issue.input)) message += ` — ${ONE_SECRET}`;
    // `routes: []` or `mcp_servers: []` for none: an empty mapping is written in braces.
    else if (
      (issue.expected === "record" || issue.expected === "object") &&
      syntax === "yaml" &&
      Array.isArray(issue.input) &&
      issue.input.length === 0 &&
      issue.path.length > 0
    )
      message += ` — an empty mapping is written in braces: ${String(issue.path.at(-1))}: {} (or leave the key out)`;
    else if (
      (issue.expected === "record" || issue.expected === "object") &&
      syntax === "yaml" &&
      listedNames(issue.input) !== undefined
    )
      message += ` — write each entry under its name, not as a list item with name: (${listedNames(issue.input)?.[0]}: on its own line, its other keys indented under it, no "- " and no name: key)`;
    // `routes:` then `- github:` with its keys under it: the entries right, but each one a list item.
    else if (
      (issue.expected === "record" || issue.expected === "object") &&
      syntax === "yaml" &&
      itemNames(issue.input) !== undefined
    )
      message = `expected ${expected}, got ${describeValue(issue.path, issue.input)} — write each entry without the "- " before its name (${itemNames(issue.input)?.[0]}: on its own line, its keys indented under it)`;
    // `routes: [github, stripe]`: the names alone, as a list of routes to serve.
    else if (
      (issue.expected === "record" || issue.expected === "object") &&
      issue.path.at(-1) === "routes" &&
      routeNames(issue.input) !== undefined
    )
      message += ` — routes maps each route's name to its keys: write ${routeNames(issue.input)?.[0]}: on its own line under routes:, with its keys (secret, events, ...) indented under it (${routeNames(issue.input)?.[0]}: {} for a route with no keys of its own)`;
    else if (mcpCommandList(issue.path, issue.input)) {
      // `[npx, -y, pkg, --api-key, <key>]`: the list is not quoted back when it holds a credential.
      const [program, ...rest] = issue.input;
      if (holdsCredential(issue.input))
        message = `expected a string, got a list (not shown: it may hold a credential) — command is the program alone: write command: ${flowItem(program)} and args: [the rest of the list]`;
      else
        message += ` — command is the program alone: write command: ${flowItem(program)}${rest.length > 0 ? ` and args: [${rest.map(flowItem).join(", ")}]` : ""}`;
    } else if (mcpCommandMapping(issue.path, issue.input)) {
      const args = Array.isArray(issue.input.args) ? issue.input.args.map(String) : [];
      const shownArgs = holdsCredential(args) ? "[the arguments]" : `[${args.map(flowItem).join(", ")}]`;
      if (holdsCredential(args) || holdsSecretKey(issue.input))
        message = "expected a string, got a mapping (not shown: it may hold a credential)";
      message += ` — command is the program alone, beside the entry's other keys: write command: ${flowItem(issue.input.path)}${args.length > 0 ? ` and args: ${shownArgs}` : ""}${issue.input.env === undefined ? "" : " and env: {...} in the entry"}`;
    } else if (
      issue.path.length === 3 &&
      issue.path[0] === "mcp_servers" &&
      issue.path[2] === "oauth" &&
      typeof issue.input === "boolean"
    )
      message += issue.input
        ? " — auth: oauth turns the login on; oauth holds its options (flow, client_id, ...): write auth: oauth"
        : " — remove it (without auth: oauth there is no login)";
    else if (issue.input instanceof WrittenAs && issue.expected !== "string" && issue.expected !== "array")
      message += ` — a $\{VAR} always gives text: write the value itself in the file${adapterVariableInstead(issue.path)}`;
    else if (mcpToolsList(issue.path, issue.input))
      message += ` — a list of tool names goes under include (or exclude): write tools: {include: [${issue.input.join(", ")}]}`;
    // A template (`{repo}#{n}`) or a `: ` in the key is quoted, as YAML reads it as text only then; a JSON
    // store (webhook_subscriptions.json) is advised in JSON.
    else if (issue.path.at(-1) === "coalesce" && typeof issue.input === "string")
      // An empty or blank text names no field: written back as the key, it would be refused in turn.
      message +=
        issue.input.trim() === ""
          ? syntax === "json"
            ? ' — write "coalesce": {"key": "<the payload path that names the entity, e.g. pull_request.number>"}, or remove coalesce'
            : " — write coalesce: {key: <the payload path that names the entity, e.g. pull_request.number>}, or remove coalesce"
          : ` — ${coalesceKeyFix(issue.input, syntax === "json")}`;
    // `deliver_extra: [chat_id=42]`, as `--deliver-extra` takes it: the mapping it means, else its shape.
    else if (
      issue.path.at(-1) === "deliver_extra" &&
      (issue.expected === "record" || issue.expected === "object")
    )
      message += ` — ${deliverExtraHint(issue.input, syntax === "json")}`;
    // `coalesce: [pull_request.number]` or `coalesce: true`: the mapping, with the key when one was written.
    else if (
      issue.path.at(-1) === "coalesce" &&
      (issue.expected === "record" || issue.expected === "object")
    ) {
      const [only] = Array.isArray(issue.input) && issue.input.length === 1 ? issue.input : [];
      message +=
        typeof only === "string" && only.trim() !== ""
          ? ` — ${coalesceKeyFix(only, syntax === "json")}`
          : syntax === "json"
            ? ' — write "coalesce": {"key": "<the payload path that names the entity, e.g. pull_request.number>"}, or remove coalesce'
            : " — write coalesce: {key: <the payload path that names the entity, e.g. pull_request.number>}, or remove coalesce";
    }
    // `deliver: [log]`: one value written as a list (of plain values: a ${VAR}'s is never written back).
    else if (
      Array.isArray(issue.input) &&
      // A key, not a list entry (`events: [[push]]`), whose advice would read `write 0: push`.
      typeof issue.path.at(-1) === "string" &&
      (issue.expected === "string" || issue.expected === "number" || issue.expected === "boolean") &&
      issue.input.length > 0 &&
      issue.input.every((item) => ["string", "number", "boolean"].includes(typeof item)) &&
      !describeValue(issue.path, issue.input).includes("not shown") &&
      // `prompt: [ALERT]`, `regex: [A-Z]`: text YAML read as a list; quoting it is the fix (below).
      !(syntax === "yaml" && bracedValueHint(issue) !== undefined)
    ) {
      const key = String(issue.path.at(-1) ?? "");
      const [written] = issue.input as Array<string | number | boolean>;
      // `redis_url: [redis://:<password>@host]`: written back without the password.
      const only = typeof written === "string" ? textWithoutUrlCredentials(written) : written;
      const leftOut = only === written ? "" : CREDENTIALS_LEFT_OUT;
      message +=
        issue.input.length > 1
          ? ` — ${key} takes one value, not a list`
          : syntax === "json"
            ? ` — one value, not a list: write ${JSON.stringify(key)}: ${JSON.stringify(only)}${leftOut}`
            : ` — one value, not a list: write ${key}: ${typeof only === "string" ? flowItem(only) : String(only)}${leftOut}`;
    }
    // `agent: openai`, `state: redis` or `webhook: true`: the one word is the value of the mapping's main key.
    else if (sectionWord(issue.path, issue.input) !== undefined)
      message += ` — ${sectionWord(issue.path, issue.input)}`;
    else if (issue.input === undefined && issue.path.at(-1) === "key" && issue.path.at(-2) === "coalesce")
      message =
        "missing — set it to the payload path that names the entity (pull_request.number) or a {template}";
    else if (
      typeof issue.input === "string" &&
      issue.expected === "array" &&
      listOfWords(issue.path) !== undefined
    )
      message = wordsTextMessage(
        issue.input,
        listOfWords(issue.path) as { key: string; noun: "argument" | "name" },
        syntax,
      );
    else if (syntax === "yaml" && mcpEntryShorthand(issue.path, issue.input) !== undefined) {
      const shorthand = mcpEntryShorthand(issue.path, issue.input) as { entry: string; hidden: boolean };
      // The text held a credential (or quoting): it is not quoted back.
      if (shorthand.hidden)
        message = `expected ${expected}, got ${Array.isArray(issue.input) ? "a list" : "text"} (not shown: it may hold a credential)`;
      message += ` — a server is a mapping of its keys: write ${String(issue.path[1])}: ${shorthand.entry}`;
    } else if (
      typeof issue.input === "string" &&
      (issue.expected === "number" || issue.expected === "int") &&
      /^\s*-?\d{16,}\s*$/.test(issue.input) &&
      !Number.isSafeInteger(Number(issue.input))
    ) {
      // YAML keeps a whole number past 2^53 as text, so that no digit is silently lost: a number all the same.
      message = `${issue.input.trim()} is too large to be read exactly (a whole number is read up to ${Number.MAX_SAFE_INTEGER}) — write a smaller number`;
    } else if (typeof issue.input === "string") {
      // A JSON store has no YAML spellings and no ${VAR}: only the quotes are wrong there.
      message +=
        syntax === "json"
          ? textForJsonHint(issue.expected, issue.input, String(issue.path.at(-1) ?? ""))
          : textForTypeHint(issue.expected, issue.input, String(issue.path.at(-1) ?? ""));
      // `events: push` for `events: [push]`; the value is quoted back only where describeValue shows it.
      if (isFilterSlot(issue.path) && (issue.expected === "record" || issue.expected === "object")) {
        message += ` — ${filterHint(issue.input, syntax === "json")}`;
      } else if (issue.expected === "array" && issue.path.at(-1) === "filters") {
        // `[x]` would be a list of text, which is no filter either: show a filter.
        message += ` — ${FILTERS_EXAMPLE[syntax === "json" ? "json" : "yaml"]}`;
      } else if (issue.expected === "array") {
        const shown = describeValue(issue.path, issue.input);
        const shownText = textWithoutUrlCredentials(issue.input);
        const entry = syntax === "json" ? JSON.stringify(shownText) : shownText;
        message += ` — write a list: [${shown.startsWith('"') ? entry : "..."}]`;
      }
    }
  } else if (
    issue.code === "custom" &&
    typeof issue.params?.unsetVariable === "string" &&
    (syntax === "yaml" || issue.params.unlessJson !== true)
  ) {
    message = unsetVariable(file, issue.params.unsetVariable, issue.params.orElse, issue.path);
  } else if (issue.code === "unrecognized_keys") {
    // `state:` then `  redis://:<password>@host:6379/0: 1`: a URL written as a key is named without its
    // credentials.
    const keys = issue.keys.map(textWithoutUrlCredentials);
    message = unknownKeys(keys, known?.(issue.path) ?? [], placement ? issue : undefined, issue.path);
  } else if ((issue.code === "too_big" || issue.code === "too_small") && /^Too (big|small)/.test(message)) {
    message = describeBound(issue, file);
  } else if (issue.code === "too_small" && syntax === "json") {
    message = message.replace(IN_EXAMPLE.yaml, IN_EXAMPLE.json);
  } else if (issue.code === "invalid_key") {
    // zod says "Invalid key in record"; the key's own check says what a valid name looks like.
    const reason = issue.issues[0]?.message;
    message = `invalid name${reason === undefined ? "" : ` — ${reason}`}`;
  } else if (issue.code === "invalid_value") {
    // `backend: reddis`, `approvals: alow`: the value meant is named, as a misspelt key's is.
    const words = issue.values.filter((v): v is string => typeof v === "string");
    const meant = typeof issue.input === "string" ? nearMiss(issue.input, words) : undefined;
    message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${describeValue(issue.path, issue.input)}${meant === undefined ? "" : ` — did you mean "${meant}"?`}`;
    // `auth: bearer` / `auth: {type: bearer, token: ...}` as other clients write a static token.
    if (issue.path.length === 3 && issue.path[0] === "mcp_servers" && issue.path[2] === "auth")
      message += ` — auth: oauth logs in with OAuth; a token is sent with headers: {Authorization: "Bearer $\{TOKEN}"} (TOKEN in the profile's .env)`;
    // `protocol: 2026-07-28` (a revision) or `protocol: sse` (a transport): the era, or the key, meant.
    const era =
      issue.path.length === 3 && issue.path[0] === "mcp_servers" && issue.path[2] === "protocol"
        ? protocolHint(issue.input)
        : undefined;
    if (era !== undefined && meant === undefined) message += ` — ${era}`;
  }
  if (syntax === "yaml" && takesText(issue)) message += bracedValueHint(issue) ?? "";
  else if (syntax === "yaml" && issue.code === "invalid_type" && issue.expected === "array") {
    const key = issue.path.at(-1);
    if (typeof key === "string" && !SECRET_KEY.test(key)) message += bracedListHint(key, issue.input) ?? "";
  }
  return `${file}: ${path}: ${message}`;
}

/** A key that takes text (or a `deliver_extra` value: text, a number or true/false) got something else. */
function takesText(issue: z.core.$ZodIssue): boolean {
  return (
    (issue.code === "invalid_type" && issue.expected === "string") ||
    (issue.code === "invalid_union" && issue.message.startsWith("expected text"))
  );
}

/** `prompt: {pull_request.title}` unquoted: YAML made it a mapping; say to quote it (src/config/unquotedTemplate.ts). */
function bracedValueHint(issue: z.core.$ZodIssue): string | undefined {
  const key = issue.path.at(-1);
  if (typeof key !== "string") return undefined;
  return unquotedTemplateHint(issue.path, issue.input, !SECRET_KEY.test(key));
}

export function formatIssues(
  file: string,
  issues: readonly z.core.$ZodIssue[],
  known?: KnownKeys,
  placement = false,
): string {
  return issues.map((issue) => formatIssue(file, issue, known, placement)).join("\n");
}

/**
 * The same lines for a record of a JSON store (webhook_subscriptions.json, a cron store, the records in
 * Redis), whose hints are written in JSON: `write a list: ["push"]`, where YAML's `[push]` would break the file.
 */
export function formatJsonIssues(
  file: string,
  issues: readonly z.core.$ZodIssue[],
  known?: KnownKeys,
): string {
  return issues.map((issue) => formatIssue(file, issue, known, false, "json")).join("\n");
}

/**
 * `platforms.webhook.routes.<key>` (or under `extra.routes`) whose name is one of a route's own keys (`events`,
 * `secret`, `prompt`): a route property written where route names go, and so not a mapping.
 */
function routePropertyAsName(path: readonly PropertyKey[], known: readonly string[]): boolean {
  const name = path.at(-1);
  const atRoute =
    path[0] === "platforms" &&
    path[1] === "webhook" &&
    path.at(-2) === "routes" &&
    path.length === (path[2] === "extra" ? 5 : 4);
  return atRoute && typeof name === "string" && known.includes(name);
}

/** Route names written where the routes' mapping goes: `routes: [github, stripe]`, or one, `routes: github`. */
function routeNames(input: unknown): readonly string[] | undefined {
  const names = typeof input === "string" ? [input] : Array.isArray(input) ? input : [];
  if (names.length === 0 || !names.every((name) => typeof name === "string" && ROUTE_NAME.test(name)))
    return undefined;
  return names as string[];
}

/**
 * A static route (directly under `routes` or under `extra.routes`), or a record of a subscription store (its
 * name alone: the JSON stores' other records sit under `jobs`), written as one value, not a mapping.
 */
function routeAsValue(path: readonly PropertyKey[], input: unknown, syntax: "yaml" | "json"): boolean {
  const atRoute =
    (syntax === "json" && path.length === 1) ||
    (path[0] === "platforms" &&
      path[1] === "webhook" &&
      path.at(-2) === "routes" &&
      path.length === (path[2] === "extra" ? 5 : 4));
  return atRoute && (input instanceof WrittenAs || (typeof input !== "object" && input !== undefined));
}

/** What to do with a route property written where route names go (`routePropertyAsName`). */
function routePropertyHint(path: readonly PropertyKey[]): string {
  const name = String(path.at(-1));
  return `${name} is a route property, not a route: indent it under the route's name (${path.slice(0, -1).join(".")}.<name>.${name})`;
}

/**
 * `routes: [{name: github, ...}]` or `mcp_servers: [{name: gh, ...}]`, as other tools list named
 * entries: the names, or undefined when the list is not made of such entries.
 */
function listedNames(input: unknown): string[] | undefined {
  if (!Array.isArray(input) || input.length === 0) return undefined;
  const names = input.map((item) =>
    typeof item === "object" && item !== null && typeof (item as { name?: unknown }).name === "string"
      ? (item as { name: string }).name
      : undefined,
  );
  return names.every((name) => name !== undefined) ? (names as string[]) : undefined;
}

/**
 * The names of a list whose every item is a mapping of one key to a mapping (`- github: {secret: ...}`), as
 * a mapping of named entries written with a "- " before each name reads; else undefined.
 */
function itemNames(input: unknown): string[] | undefined {
  if (!Array.isArray(input) || input.length === 0) return undefined;
  const names = input.map((item) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return undefined;
    const entries = Object.entries(item);
    const [name, value] = entries[0] ?? [];
    return entries.length === 1 && typeof value === "object" && value !== null && !Array.isArray(value)
      ? name
      : undefined;
  });
  return names.every((name) => name !== undefined) ? (names as string[]) : undefined;
}

/**
 * For `port: ${PORT}` or `enabled: ${ON}` of `platforms.webhook` (or its `extra`): the variable the adapter
 * reads as a number or boolean instead, as a platform that hands out the port in `PORT` needs.
 */
function adapterVariableInstead(path: readonly PropertyKey[]): string {
  const key = path.at(-1);
  const webhook = path[0] === "platforms" && path[1] === "webhook";
  const level = path.length === 3 || (path.length === 4 && path[2] === "extra");
  if (!webhook || !level || (key !== "port" && key !== "enabled")) return "";
  return `, or set WEBHOOK_${key.toUpperCase()} in .env or the environment instead, which the adapter reads as ${key === "port" ? "a number" : "a boolean"} (it overrides the file)`;
}
