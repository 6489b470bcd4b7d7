/** The `.env` files svc reads its secrets from (`SVC_HOME/.env`, a profile's): read as a shell, docker compose and python-dotenv read them. */
import { parse as parseEnv } from "dotenv";
import { SvcError } from "../errors.js";
import { isPresent, readUtf8 } from "./configFileRead.js";
import { type InterpolationScope, interpolate, isVariableName, unsetVariablesIn } from "./interpolate.js";
import type { SvcPaths } from "./paths.js";

const WITHOUT_ENV = "svc then reads no .env";

/**
 * A `.env` file's variables. `${NAME}` and `${NAME:-fallback}` in a value not in 'single quotes' (or `backticks`) are
 * replaced, as a shell, docker compose and python-dotenv read them, by the value an earlier line gave NAME (so
 * `A=1`, `B=${A}`, `A=2` gives B `1`, and `A=${A}x` adds to A), else by `env` (the process environment); an
 * unset one keeps its text, as in config.yaml.
 */
export function readEnvFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  if (!isPresent(path, WITHOUT_ENV)) return {};
  const values: Record<string, string> = {};
  for (const assignment of envAssignments(readUtf8(path))) {
    const verbatim = isVerbatim(assignment);
    const read = {
      ...parseEnv(assignment),
      ...unquotedHashValue(assignment),
      ...doubleQuotedValue(assignment),
    };
    for (const [name, value] of Object.entries(read))
      values[name] =
        verbatim || !value.includes("${") ? value : interpolate(value, { secrets: values, env }).value;
  }
  return values;
}

/**
 * A `.env` text cut into its lines, in order, a quoted value that spans lines kept whole with the line that
 * opens it (what dotenv reads as one value): read one after the other, each `${NAME}` sees the lines above it
 * only, and a line inside such a value is never taken for an assignment of its own.
 */
function envAssignments(text: string): string[] {
  return numberedAssignments(text).map(({ text: assignment }) => assignment);
}

/** envAssignments, each with the number of the line it starts on. */
function numberedAssignments(text: string): Array<{ text: string; line: number }> {
  const assignments: Array<{ text: string; line: number }> = [];
  let open: { quote: string; lines: string[]; line: number } | undefined;
  for (const [i, line] of text
    .replace(/^\uFEFF/, "")
    .split(/\r\n|\r|\n/)
    .entries()) {
    if (open !== undefined) {
      open.lines.push(line);
      if (closingQuote(line, open.quote) === -1) continue;
      assignments.push({ text: open.lines.join("\n"), line: open.line });
      open = undefined;
      continue;
    }
    const value = (ASSIGNMENT.exec(line)?.[1] ?? "").trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === "`") && closingQuote(value, quote, 1) === -1)
      open = { quote, lines: [line], line: i + 1 };
    else assignments.push({ text: line, line: i + 1 });
  }
  if (open !== undefined) assignments.push({ text: open.lines.join("\n"), line: open.line });
  return assignments;
}

/**
 * A `.env` line whose name is no variable's name as a shell reads one (`1BAD=x`, `app.name=x`, `my-key=x`):
 * dotenv reads it, and a file shared with a tool that takes such names must still load, so it is not refused;
 * named instead at start, on each reload and by `svc config check`, with its line. The value is not quoted.
 */
export function unnamedEnvLineWarnings(path: string): string[] {
  let text: string;
  try {
    if (!isPresent(path, WITHOUT_ENV)) return [];
    text = readUtf8(path);
  } catch {
    return []; // named by envFileProblem
  }
  return numberedAssignments(text).flatMap(({ text: assignment, line }) => {
    const name = ENV_LINE.exec(firstLine(assignment))?.[1];
    if (name === undefined || isVariableName(name)) return [];
    const renamed = name.replace(/[.-]/g, "_").replace(/^(?=\d)/, "_");
    return [
      `${path}: line ${line}: ${name} is not a variable name as a shell reads one (a letter or _ first, then letters, digits and _) — if config.yaml is to use it, rename it ${renamed} and write \${${renamed}} there (svc's checks take a \${${name}} left unset for a form svc does not read); a line that only another tool reads may stay`,
    ];
  });
}

/**
 * Refuses a `.env` line that sets nothing. Checked when the configuration is loaded (start, reload, every
 * command), not on the lookups a running gateway makes later (MCP connects), which must not throw.
 */
export function checkEnvFile(path: string): void {
  const problem = envFileProblem(path);
  if (problem !== undefined) throw new SvcError("config_invalid", problem);
}

/**
 * The first line of a `.env` that sets nothing, as `<file>: line <n>: <problem> — <what to do>`, or why it
 * cannot be read (a directory, a file this user may not read, another encoding than UTF-8, a link to
 * nothing); undefined for a good file or a missing one.
 */
export function envFileProblem(path: string): string | undefined {
  let text: string;
  try {
    if (!isPresent(path, WITHOUT_ENV)) return undefined;
  } catch (err) {
    return (err as SvcError).message;
  }
  try {
    text = readUtf8(path);
  } catch (err) {
    // A named profile's .env is read only at its MCP connects, which never refuse: its start warns with this.
    return (err as SvcError).message;
  }
  const stray = strayEnvLine(text);
  if (stray === undefined) return undefined;
  const name = stray.name ?? "NAME";
  if (stray.quote === undefined)
    return `${path}: line ${stray.line}: not a NAME=value line — write ${name}=<value>, or start the line with # to keep it as a comment`;
  return stray.closed === true
    ? `${path}: line ${stray.line}: the value of ${name} goes on after its closing ${stray.quote} quote — put the whole value inside the quotes (${name}=${stray.quote}<value>${stray.quote}): read so, the quotes would be part of the value (a shell would join the pieces)`
    : `${path}: line ${stray.line}: the value of ${name} opens a ${stray.quote} quote that no later line closes — close it where the value ends, or drop it (${name}=<value>)`;
}

/**
 * Whether `rest`, what follows a value's closing quote, holds more of the value: anything but spaces or
 * a `# comment`. dotenv reads `"abc"def` (or `'abc' 'def'`) whole, quotes included, where a shell joins
 * the pieces: neither is what was meant for a secret.
 */
const goesOnAfterQuote = (rest: string): boolean => !/^\s*(?:#.*)?$/.test(rest);

/**
 * Where `quote` closes in `text` from `from`, -1 if it does not. In "double quotes" a backslash escapes the
 * character after it, as a shell reads them (`\"` is a quote, `\\` a backslash, so `"a\\"` closes at its
 * last quote); in the others a quote after a backslash does not close, as dotenv reads them.
 */
function closingQuote(text: string, quote: string, from = 0): number {
  if (quote === '"') {
    for (let at = from; at < text.length; at++) {
      if (text[at] === "\\") at++;
      else if (text[at] === '"') return at;
    }
    return -1;
  }
  for (let at = text.indexOf(quote, from); at !== -1; at = text.indexOf(quote, at + 1))
    if (text[at - 1] !== "\\") return at;
  return -1;
}

const ASSIGNMENT = /^\s*(?:export\s+)?[\w.-]+\s*=(.*)$/;

/**
 * The first line of `.env` that no reader takes as a variable: dotenv skips it without a word, so a
 * `WEBHOOK_SECRET: abc` written YAML-style would leave the secret unset. Lines inside a quoted value
 * that spans several lines are part of that value.
 */
function strayEnvLine(
  text: string,
): { line: number; name: string | undefined; quote?: string; closed?: true } | undefined {
  const lines = text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
  let openQuote: string | undefined;
  // Where the open quote began: a quote never closed would take the rest of the file as the value
  // (dotenv keeps the quote as its first character instead).
  let opened: { line: number; name: string | undefined } | undefined;
  for (const [i, line] of lines.entries()) {
    if (openQuote !== undefined) {
      const close = closingQuote(line, openQuote);
      if (close === -1) continue;
      if (goesOnAfterQuote(line.slice(close + 1)) && opened !== undefined)
        return { line: i + 1, name: opened.name, quote: openQuote, closed: true };
      openQuote = undefined;
      continue;
    }
    const trimmed = line.trim();
    // `export NAME` and a bare `NAME` (docker --env-file: take it from the environment) set nothing here on purpose.
    if (trimmed === "" || trimmed.startsWith("#") || /^(?:export\s+)?[\w.-]+$/.test(trimmed)) continue;
    const assignment = ASSIGNMENT.exec(line);
    if (assignment === null) {
      // The value is not quoted back: the line may hold a secret.
      return { line: i + 1, name: /^(?:export\s+)?([\w.-]+)\s*[:\s]/.exec(trimmed)?.[1] };
    }
    const value = (assignment[1] ?? "").trim();
    const quote = value[0];
    if (quote !== '"' && quote !== "'" && quote !== "`") continue;
    const name = /^(?:export\s+)?([\w.-]+)/.exec(trimmed)?.[1];
    const close = closingQuote(value, quote, 1);
    if (close === -1) {
      openQuote = quote;
      opened = { line: i + 1, name };
    } else if (goesOnAfterQuote(value.slice(close + 1))) return { line: i + 1, name, quote, closed: true };
  }
  return openQuote === undefined || opened === undefined ? undefined : { ...opened, quote: openQuote };
}

const ENV_LINE = /^\s*(?:export\s+)?([\w.-]+)\s*=[ \t]*(.*)$/;

const firstLine = (assignment: string): string => assignment.split("\n", 1)[0] as string;

/** Whether an assignment of `envAssignments` holds its value in 'single quotes' or `backticks`: taken as written. */
const isVerbatim = (assignment: string): boolean =>
  /^['`]/.test(ENV_LINE.exec(firstLine(assignment))?.[2] ?? "");

/**
 * dotenv cuts an unquoted value at its first `#` (`SECRET=abc#def` reads `abc`), where a shell, docker
 * compose and systemd read `abc#def`: `#` starts a comment only after whitespace. A cut HMAC secret
 * fails every signature, so such a value (of one of `envAssignments`) is read as those tools read it.
 */
function unquotedHashValue(assignment: string): Record<string, string> {
  const match = ENV_LINE.exec(firstLine(assignment));
  const raw = match?.[2];
  if (match === null || raw === undefined || /^['"`]/.test(raw)) return {};
  const value = raw.replace(/\s#.*$/, "").trim();
  return value.includes("#") ? { [match[1] as string]: value } : {};
}

const DOUBLE_QUOTED = /^\s*(?:export\s+)?([\w.-]+)\s*=[ \t]*"([\s\S]*)$/;
const DOUBLE_QUOTED_ESCAPE = /\\([\\"nr])/g;
const ESCAPED: Readonly<Record<string, string>> = { "\\": "\\", '"': '"', n: "\n", r: "\r" };

/**
 * dotenv keeps the backslash of `\"` and `\\` in a "double-quoted" value (`"a\"b"` reads `a\"b`), where a
 * shell, python-dotenv and docker compose read a quote and one backslash: a secret written so would key
 * every HMAC with other text than the sender's. Such a value (of one of `envAssignments`) is read with
 * those two escapes undone, and dotenv's `\n` and `\r` (a line feed, a carriage return) kept, in one pass
 * (`\\n` is a backslash and an `n`).
 */
function doubleQuotedValue(assignment: string): Record<string, string> {
  const match = DOUBLE_QUOTED.exec(assignment);
  const rest = match?.[2];
  if (match === null || rest === undefined || !rest.includes("\\")) return {};
  const close = closingQuote(rest, '"');
  if (close === -1) return {};
  return {
    [match[1] as string]: rest
      .slice(0, close)
      .replace(DOUBLE_QUOTED_ESCAPE, (_, c: string) => ESCAPED[c] as string),
  };
}

export function secretScope(paths: SvcPaths, env: NodeJS.ProcessEnv = process.env): InterpolationScope {
  return { secrets: readEnvFile(paths.env, env), env };
}

/**
 * Each assignment of a `.env` file (none when there is no file): the variable it sets and whether its value
 * is taken as written ('single quotes', backticks), in the file's order.
 */
export function writtenEnvLines(path: string): Array<{ name: string; verbatim: boolean }> {
  if (!isPresent(path, WITHOUT_ENV)) return [];
  return envAssignments(readUtf8(path)).flatMap((assignment) => {
    const name = ENV_LINE.exec(firstLine(assignment))?.[1];
    return name === undefined ? [] : [{ name, verbatim: isVerbatim(assignment) }];
  });
}

/**
 * The value the last line of a `.env` that sets `name` writes, read as readEnvFile reads it but before its
 * `${NAME}` are replaced (what the line itself says), and whether it is taken as written ('single quotes',
 * backticks); undefined when no line sets it.
 */
export function writtenEnvValue(
  path: string,
  name: string,
): { value: string; verbatim: boolean } | undefined {
  if (!isPresent(path, WITHOUT_ENV)) return undefined;
  let written: { value: string; verbatim: boolean } | undefined;
  for (const assignment of envAssignments(readUtf8(path))) {
    const read = {
      ...parseEnv(assignment),
      ...unquotedHashValue(assignment),
      ...doubleQuotedValue(assignment),
    };
    const value = read[name];
    if (value !== undefined) written = { value, verbatim: isVerbatim(assignment) };
  }
  return written;
}

/**
 * Why a reload refuses `.env` as it is now: present but setting no variable (empty, or comments only, as an
 * editor that truncates the file before writing it leaves it for a moment; a line that sets nothing is
 * named as such) while the running config read
 * `runningCount` variables from it. Applied, every `${VAR}` it gave would fall back at once (a stdio
 * server restarted with the literal `${TOKEN}`). Undefined when the reload may go on; a file removed is
 * left to the load, since `.env` is optional.
 */
export function emptiedEnvProblem(path: string, runningCount: number): string | undefined {
  if (runningCount === 0 || writtenEnvLines(path).length > 0 || !isPresent(path, WITHOUT_ENV))
    return undefined;
  // Lines that set nothing (`NAME: value`) are no editor mid-save: named at their line, as at start.
  const stray = envFileProblem(path);
  if (stray !== undefined) return stray;
  const variables = runningCount === 1 ? "1 variable" : `${runningCount} variables`;
  return `${path}: is empty (no variable in it) — the running config read ${variables} from it: write it whole and reload again (an editor may still have been writing it), or remove the file to run without it`;
}

/**
 * `GH_SECRET=${VAULT_PREFIX}-tail` in `.env`, and `secret: ${GH_SECRET}`: the unset name is in the value that
 * `.env` line gives, which config.yaml does not show. Names that variable (never its value), or "".
 */
export function leftInEnvValue(env: string, name: string): string {
  let values: Record<string, string>;
  try {
    values = readEnvFile(env);
  } catch {
    return "";
  }
  // A value in 'single quotes' is taken as written: its ${NAME} is text of the value, not left unset.
  const verbatim = new Set(writtenEnvLines(env).flatMap((line) => (line.verbatim ? [line.name] : [])));
  const holder = Object.keys(values).find(
    (variable) => !verbatim.has(variable) && unsetVariablesIn(values[variable] as string).includes(name),
  );
  return holder === undefined
    ? ""
    : ` (it is left in the value ${env} gives ${holder}: set ${name} on a line above ${holder} there, or in the environment)`;
}
