import { writtenEnvLines } from "./envFile.js";
import {
  type InterpolationScope,
  lookedUpVariables,
  unsetVariablesIn,
  variableValue,
} from "./interpolate.js";
import type { Config } from "./schema.js";

const AS_WRITTEN = Symbol("the configuration with the values variables gave stood in without $ or {");

/**
 * Every string of `tree` (a config.yaml value as written, before rendering), for the `${NAME}` they look up.
 */
function strings(tree: unknown, out: string[] = []): string[] {
  if (typeof tree === "string") out.push(tree);
  else if (Array.isArray(tree)) for (const item of tree) strings(item, out);
  else if (typeof tree === "object" && tree !== null)
    for (const item of Object.values(tree)) strings(item, out);
  return out;
}

/** `value` with its `$` and `{` left out, but for the `${NAME}` of `kept` (left unset by the `.env` line). */
function withoutForms(value: string, kept: readonly string[]): string {
  if (kept.length === 0) return value.replace(/[${]/g, "");
  const parts = value.split(/(\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*\})/);
  return parts
    .map((part, i) =>
      i % 2 === 1 && kept.includes(/\{(?:env:)?(\w+)\}/.exec(part)?.[1] ?? "")
        ? part
        : part.replace(/[${]/g, ""),
    )
    .join("");
}

/**
 * `scope` with each value that a `${NAME}` of `written` (config.yaml as written) substitutes and that holds a
 * `$` stood in by that text without its `$` and `{`, or undefined when no such value does: rendered with it,
 * only config.yaml's own `${...}` and `$NAME` are left in a value. A value config.yaml substitutes is not
 * rendered again (`P='Xy7${Tk9q'` in `.env`, `password: ${P}` is the password `Xy7${Tk9q`), so what a
 * warning says about a `${` must not come from it (and must not quote it). Only a `${NAME}` that an unquoted
 * or "double-quoted" `.env` line itself left unset (`GH=${VAULT}-tail`, nothing setting VAULT) is kept: that
 * line's own variable is not set.
 */
export function asWrittenScope(
  scope: InterpolationScope,
  envFile: string,
  written: unknown,
): InterpolationScope | undefined {
  const names = new Set(
    strings(written)
      .filter((text) => text.includes("${"))
      .flatMap(lookedUpVariables),
  );
  const holding = [...names].filter((name) => variableValue(name, scope)?.includes("$") === true);
  if (holding.length === 0) return undefined;
  // The last line that sets a name decides whether its value was taken as written.
  const verbatim = new Map<string, boolean>();
  for (const line of writtenEnvLines(envFile)) verbatim.set(line.name, line.verbatim);
  const secrets = { ...scope.secrets };
  const env = { ...scope.env };
  for (const name of holding) {
    if (Object.hasOwn(scope.secrets, name)) {
      const value = scope.secrets[name] as string;
      secrets[name] = withoutForms(value, verbatim.get(name) === false ? unsetVariablesIn(value) : []);
    } else env[name] = withoutForms(env[name] as string, []);
  }
  return { ...scope, secrets, env };
}

/** Notes `view`, the configuration rendered with `asWrittenScope`, on `config`. */
export function noteAsWritten(config: Config, view: Config): void {
  Object.defineProperty(config, AS_WRITTEN, { value: view, enumerable: false });
}

/**
 * The configuration as noteAsWritten noted it (config.yaml's own text, what its `${NAME}` gave standing in
 * without a `$` or `{`), else `config` itself (no substituted value held a `$`).
 */
export function asWritten(config: Config): Config {
  return (config as { [AS_WRITTEN]?: Config })[AS_WRITTEN] ?? config;
}
