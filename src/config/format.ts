import type { z } from "zod";
import { nearMiss } from "./nearMiss.js";

function describeInput(input: unknown): string {
  if (input === undefined) return "nothing";
  try {
    const text = JSON.stringify(input);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof input;
  }
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
function textForTypeHint(expected: string, input: string): string {
  if (expected === "number" || expected === "int") {
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

/** A size or range problem in words (zod's own text otherwise reads "Too big: expected number to be <=65535"). */
function describeBound(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const bound =
    issue.code === "too_big"
      ? `${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`
      : `${issue.inclusive ? "at least" : "more than"} ${String(issue.minimum)}`;
  if (issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint")
    return `expected ${bound}, got ${describeValue(issue.path, issue.input)}`;
  if (issue.code === "too_small" && issue.origin === "string" && Number(issue.minimum) === 1)
    return "must not be empty";
  const unit = issue.origin === "string" ? "characters" : "entries";
  return `expected ${bound} ${unit}, got ${describeValue(issue.path, issue.input)}`;
}

/** The keys a mapping at an issue's path may have, to suggest the one a misspelt key meant. */
export type KnownKeys = (path: readonly PropertyKey[]) => readonly string[];

function unknownKeys(keys: readonly string[], known: readonly string[]): string {
  const meant = keys.flatMap((key) => {
    const match = nearMiss(key, known);
    return match === undefined || keys.includes(match) ? [] : [[key, match] as const];
  });
  const hint =
    meant.length === 0
      ? "check the spelling"
      : `did you mean ${meant.map(([key, match]) => (keys.length === 1 ? `"${match}"` : `"${match}" for "${key}"`)).join(", ")}?`;
  return `unknown key${keys.length > 1 ? "s" : ""} ${keys.map((k) => `"${k}"`).join(", ")} — ${hint} (see docs/configuration.md)`;
}

/** Keys whose value is a credential (`secret`, `token`, `auth_token`, `client_secret`, `password`, ...). */
const SECRET_KEY = /(?:^|_)(?:secret|token|password)$|^(?:api_key|authorization)$/i;

/** What a message says about a value: the value itself, except under a secret key (its type only). */
function describeValue(path: readonly PropertyKey[], input: unknown): string {
  const key = path.at(-1);
  if (typeof key === "string" && SECRET_KEY.test(key) && input !== undefined && input !== null)
    return `a ${Array.isArray(input) ? "list" : typeof input} (not shown: the key holds a secret)`;
  return describeInput(input);
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

/** One line per problem: `<file>: <key.path>: <what is wrong>`. */
export function formatIssue(file: string, issue: z.core.$ZodIssue, known?: KnownKeys): string {
  const path = issue.path.map(String).join(".") || "(top level)";
  let message = hiddenEntryValue(issue) ?? issue.message;
  if (issue.code === "invalid_type") {
    const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
    message =
      issue.input === undefined
        ? `missing — expected ${expected}`
        : `expected ${expected}, got ${describeValue(issue.path, issue.input)}`;
    // YAML reads 12345, true or 1e5 as a number or bool; quoting keeps the text.
    if (issue.expected === "string" && (typeof issue.input === "number" || typeof issue.input === "boolean"))
      message += ` — put it in quotes if it is meant as text`;
    else if (typeof issue.input === "string") message += textForTypeHint(issue.expected, issue.input);
  } else if (issue.code === "unrecognized_keys") {
    message = unknownKeys(issue.keys, known?.(issue.path) ?? []);
  } else if ((issue.code === "too_big" || issue.code === "too_small") && /^Too (big|small)/.test(message)) {
    message = describeBound(issue);
  } else if (issue.code === "invalid_key") {
    // zod says "Invalid key in record"; the key's own check says what a valid name looks like.
    const reason = issue.issues[0]?.message;
    message = `invalid name${reason === undefined ? "" : ` — ${reason}`}`;
  } else if (issue.code === "invalid_value") {
    message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${describeValue(issue.path, issue.input)}`;
  }
  return `${file}: ${path}: ${message}`;
}

export function formatIssues(file: string, issues: readonly z.core.$ZodIssue[], known?: KnownKeys): string {
  return issues.map((issue) => formatIssue(file, issue, known)).join("\n");
}
