import { basename, sep } from "node:path";
import { userHome } from "./paths.js";

/** Where `${VAR}` looks: the active profile's secrets first (its `.env`), then the process environment. */
export interface InterpolationScope {
  readonly secrets: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Session workspace root; the process working directory when absent. */
  readonly workspaceFolder?: string;
}

export interface Rendered {
  readonly value: string;
  /** Names of variables that had no value; their `${...}` text was kept literally. */
  readonly unresolved: readonly string[];
}

const FALLBACK = /^([A-Za-z_][A-Za-z0-9_]*):-(.*)$/s;

/** A `${}` or `${env:}` with the name left out. */
const NAMELESS = /^(?:env:)?\s*$/;

/** A `${VAR}` (or `${env:VAR}`) left in a value after interpolation: nothing set the variable. */
const LEFT_VARIABLE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The names of the variables a rendered value still holds as `${VAR}`, once each in order of first
 * appearance: set neither in `.env` nor the environment, so their literal text stands in the value.
 */
export function unsetVariablesIn(rendered: string): string[] {
  return [...new Set([...rendered.matchAll(LEFT_VARIABLE)].map((m) => m[1] as string))];
}

/** How a secret that itself holds `${` is written: every `${` in config.yaml starts a variable. */
export const LITERAL_IN_SECRET =
  " (a secret that holds ${ itself: set it in .env in 'single quotes', SECRET_NAME='...', and write ${SECRET_NAME} here)";

/** A name as people write a variable (`GH_SECRET`, `env:GH_SECRET`), not a run of a secret's own characters. */
const WRITTEN_AS_VARIABLE = /^(?:env:)?[A-Z_][A-Z0-9_]*$/;

/** Whether the text after a `${` in a secret reads as a variable's name (`GH_SECRET`), which may be quoted back. */
export const readsAsVariableName = (name: string): boolean => WRITTEN_AS_VARIABLE.test(name);

/**
 * Why a rendered value still holds a `${...}` form svc does not read (`${KEY:?x}`, `${input:key}`), or
 * undefined: its literal text would stand in the value. Ask after `unsetVariablesIn`. `secret`: the value is
 * a secret (a webhook secret, an API key) that may itself hold `${`: what follows it is quoted only when it
 * reads as a variable's name (`${GH_SECRET`), never a secret's own characters (`Xy7${Tk9qLm2`).
 */
export function unreadPlaceholderProblem(rendered: string, secret = false): string | undefined {
  const other = /\$\{([^}]*)\}/.exec(rendered);
  if (other !== null) {
    const named = /^\s*((?:env:)?[A-Za-z_][A-Za-z0-9_]*)/.exec(other[1] as string)?.[1];
    // `${ GH_SECRET }`: a name with spaces around it, as a template language writes one.
    if (named !== undefined && other[1]?.trim() === named && WRITTEN_AS_VARIABLE.test(named))
      return `${other[0]} is not a variable form svc reads — write \${${named}}, without spaces inside the braces`;
    // `${input:key}`: another MCP client's form, quoted as written.
    if (!secret || (named !== undefined && WRITTEN_AS_VARIABLE.test(named)) || other[1]?.startsWith("input:"))
      return `${other[0]} is not a variable form svc reads — write \${NAME} or \${NAME:-fallback}`;
    return `a \${...} in it is not a variable form svc reads — write \${NAME} or \${NAME:-fallback}${LITERAL_IN_SECRET}`;
  }
  // `${GH_SECRET` with its } left out: the text is kept as written. Only the name is quoted: the rest may be a secret.
  const unclosed = /\$\{((?:env:)?[A-Za-z_][A-Za-z0-9_]*)?/.exec(rendered);
  if (unclosed === null) return undefined;
  const name = unclosed[1];
  return name === undefined || (secret && !WRITTEN_AS_VARIABLE.test(name))
    ? `a \${ that no } closes is not a variable svc reads, so its text would be used as written — write \${NAME}, or \${NAME:-fallback}${secret ? LITERAL_IN_SECRET : ""}`
    : `\${${name} has no closing }, so its text would be used as written — end it with } (\${${name}}, or \${${name}:-fallback})`;
}

function contextVariable(name: string, scope: InterpolationScope): string | undefined {
  // Read only for the names that use it: every `${NAME}` is looked up here first, and a working directory
  // removed since makes process.cwd() throw.
  const workspace = () => scope.workspaceFolder ?? process.cwd();
  switch (name) {
    case "userHome":
      return userHome();
    case "workspaceFolder":
      return workspace();
    case "workspaceFolderBasename":
      return basename(workspace());
    case "pathSeparator":
    case "/":
      return sep;
    default:
      return undefined;
  }
}

/**
 * What `${name}` renders to in `scope`: `.env` first, then the environment. Own keys only: `${constructor}`
 * or `${toString}` must not render Object.prototype's members.
 */
export function variableValue(
  name: string,
  scope: Pick<InterpolationScope, "secrets" | "env">,
): string | undefined {
  if (Object.hasOwn(scope.secrets, name)) return scope.secrets[name];
  return Object.hasOwn(scope.env, name) ? scope.env[name] : undefined;
}

/**
 * The index of the `}` that closes the `${` at `start`, counting the `${...}` nested in it (a fallback
 * may hold one: `${A:-${B}}`); -1 when it is never closed.
 */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    if (text[i] === "$" && text[i + 1] === "{") {
      depth += 1;
      i += 1;
    } else if (text[i] === "}") {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/**
 * Renders `${VAR}`, `${env:VAR}`, `${VAR:-fallback}` (the fallback itself rendered, so `${A:-${B}}` gives
 * B's value when A is unset, as in a shell or docker compose) and the context variables; an unset
 * variable without a fallback keeps its literal text.
 */
export function interpolate(text: string, scope: InterpolationScope): Rendered {
  const unresolved: string[] = [];
  let value = "";
  let at = 0;
  for (let start = text.indexOf("${"); start !== -1; start = text.indexOf("${", at)) {
    const end = closingBrace(text, start);
    if (end === -1) break;
    value += text.slice(at, start) + placeholder(text.slice(start, end + 1), scope, unresolved);
    at = end + 1;
  }
  return { value: value + text.slice(at), unresolved };
}

/** One `${...}` (`whole`, braces included) rendered; an unset name is added to `unresolved`. */
function placeholder(whole: string, scope: InterpolationScope, unresolved: string[]): string {
  const inner = whole.slice(2, -1);
  const context = contextVariable(inner, scope);
  if (context !== undefined) return context;
  const fromEnv = inner.startsWith("env:");
  const variable = fromEnv ? inner.slice(4) : inner;
  // `${NAME:-fallback}` as a shell and docker compose read it: the fallback when NAME is unset or empty.
  const withFallback = FALLBACK.exec(variable);
  const name = withFallback?.[1] ?? variable;
  // `${userHome:-/x}`: a context variable is always set (`${env:userHome}` names the environment's), so its
  // fallback never applies, even where its value is empty (`${workspaceFolderBasename}` in `/`).
  if (withFallback !== null && !fromEnv) {
    const context = contextVariable(name, scope);
    if (context !== undefined) return context;
  }
  const found = variableValue(name, scope);
  if (withFallback !== null) {
    if (found !== undefined && found !== "") return found;
    const fallback = interpolate(withFallback[2] ?? "", scope);
    unresolved.push(...fallback.unresolved);
    return fallback.value;
  }
  if (found === undefined) {
    // `${env:}` names no variable: named as written, not as `${}`.
    unresolved.push(NAMELESS.test(name) ? inner : name);
    return whole;
  }
  return found;
}

/**
 * The names the `${...}` of `text` look up in `.env` and the environment, once each in order (a fallback's
 * too: `${A:-${B}}` reads A, then B when A is unset or empty); context variables such as `${userHome}` are
 * none. Found by rendering with a scope that records each lookup, so it reads `text` as `interpolate` does.
 */
export function lookedUpVariables(text: string): string[] {
  const names: string[] = [];
  const recording = new Proxy<Record<string, string>>(
    {},
    {
      getOwnPropertyDescriptor: (_target, name) => {
        if (typeof name === "string") names.push(name);
        return undefined;
      },
    },
  );
  interpolate(text, { secrets: recording, env: {} });
  return [...new Set(names)];
}

/** `~` and `~/x` expand to the user's home directory. */
export function expandHome(path: string): string {
  if (path === "~") return userHome();
  if (path.startsWith("~/")) return userHome() + path.slice(1);
  return path;
}

/** Interpolates every string inside a JSON-like value, keeping its shape. */
export function interpolateDeep<T>(value: T, scope: InterpolationScope, unresolved: string[] = []): T {
  if (typeof value === "string") {
    const rendered = interpolate(value, scope);
    unresolved.push(...rendered.unresolved);
    return rendered.value as T;
  }
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, scope, unresolved)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolateDeep(item, scope, unresolved);
    return out as T;
  }
  return value;
}

/** A name `.env` and a shell can set; another client's `${input:token}` or `${workspaceFolder:app}` is none. */
export const isVariableName = (name: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);

/**
 * A shell's form of a variable that svc does not read (`${TOKEN-x}`, `${TOKEN:=x}`, `${TOKEN:?msg}`, or
 * `${ TOKEN }` with spaces): the variable's name, so the fix can name it, unlike another client's.
 */
const SHELL_FORM = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s*$|\s*:?[-=?+])/;

/**
 * What to do about unset `${...}` names, `where` naming the files that set them ("the profile's .env or the
 * environment"): `add A=..., B=... to <where>`, or for a name no `.env` line can set (another client's
 * variable, kept by an import or a paste) `write ${NAME} in place of ${input:token} ... and add NAME=...`.
 */
export function addVariablesAdvice(names: readonly string[], where: string): string {
  const settable = names.filter(isVariableName);
  const nameless = names.filter((name) => NAMELESS.test(name));
  const shell = names.filter((name) => !isVariableName(name) && SHELL_FORM.test(name));
  const foreign = names.filter(
    (name) => !isVariableName(name) && !SHELL_FORM.test(name) && !NAMELESS.test(name),
  );
  const parts: string[] = [];
  if (nameless.length > 0)
    parts.push(
      `write \${NAME} in place of ${nameless.map((n) => `\${${n}}`).join(", ")} (${nameless.length === 1 ? "it names" : "they name"} no variable) and add NAME=... to ${where}`,
    );
  for (const form of shell) {
    const name = SHELL_FORM.exec(form)?.[1] as string;
    parts.push(
      `\${${form}} is not a variable form svc reads: write \${${name}} (or \${${name}:-fallback}) and set ${name} in ${where}`,
    );
  }
  if (foreign.length > 0)
    parts.push(
      `write \${NAME} in place of ${foreign.map((n) => `\${${n}}`).join(", ")} (${foreign.length === 1 ? "a variable" : "variables"} of another client, which svc does not render and no .env line can set) and add NAME=... to ${where}`,
    );
  if (settable.length > 0) parts.push(`add ${settable.map((n) => `${n}=...`).join(", ")} to ${where}`);
  return parts.join("; ");
}

/**
 * `${X} is not set, so <what> was ... as written — add X=... to ...`, when a value rendered at connect time
 * still holds a `${...}` (nothing set it, or a form svc does not render, such as `${input:bin}`), else
 * undefined. `what` says what was used (`command was run`, `the path was used`). With `written`, the value
 * as config.yaml writes it, only a `${...}` written there counts: one in what a variable gave (a password in
 * .env holding `${`) was rendered, and naming it would quote part of that value.
 */
export function keptAsWrittenHint(rendered: string, what: string, written?: string): string | undefined {
  const names = [
    ...new Set([...rendered.matchAll(/\$\{(?:env:)?([^}]+)\}/g)].map((m) => m[1] as string)),
  ].filter(
    (name) => written === undefined || written.includes(`{${name}}`) || written.includes(`{env:${name}}`),
  );
  if (names.length === 0) return undefined;
  return `${names.map((n) => `\${${n}}`).join(", ")} ${names.length === 1 ? "is" : "are"} not set, so ${what} as written — ${addVariablesAdvice(names, "the profile's .env or the environment")}`;
}
