import type { z } from "zod";
import { describe, WrittenAs } from "./describe.js";
import {
  type InterpolationScope,
  interpolate,
  isVariableName,
  unreadPlaceholderProblem,
} from "./interpolate.js";

/**
 * The keys of an `mcp_servers` entry that hold text but are checked when config.yaml is loaded: a fixed
 * set of values (`transport: sse`), a duration (`timeout: "30"`) or a bool-like switch (`tools.resources`).
 * Every other string of an entry is rendered at each connect (a variable added to `.env` later is picked
 * up there); these decide what kind of server the entry is, so a `${VAR}` in them is rendered at load,
 * from the `.env` beside config.yaml and the environment. Booleans (`enabled: ${E}`) and integers
 * are not text: config.yaml takes them written out, as everywhere in the file.
 */
const LOAD_TIME_KEYS: ReadonlyArray<readonly string[]> = [
  ["transport"],
  ["type"],
  ["protocol"],
  ["auth"],
  ["timeout"],
  ["connect_timeout"],
  ["keepalive_interval"],
  ["idle_timeout_seconds"],
  ["max_lifetime_seconds"],
  ["lifecycle", "idle_timeout_seconds"],
  ["lifecycle", "max_lifetime_seconds"],
  ["tools", "resources"],
  ["tools", "prompts"],
  ["oauth", "flow"],
  ["oauth", "token_endpoint_auth_method"],
  ["oauth", "timeout"],
  ["elicitation", "unattended"],
  ["elicitation", "timeout"],
  ["sampling", "timeout"],
];

export interface LoadTimeRendering {
  /** A copy of `mcp_servers` with those keys rendered (the input is not changed). */
  readonly servers: unknown;
  /** One issue per such key whose `${...}` nothing set: it must not pass for a value. */
  readonly issues: z.core.$ZodIssue[];
  /** The file's text of each key rendered, by issue path (`mcp_servers\0name\0timeout`). */
  readonly written: ReadonlyMap<string, string>;
}

const pathKey = (path: readonly PropertyKey[]) =>
  path.map((segment, i) => (i === 2 && segment === "type" ? "transport" : String(segment))).join("\0");

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Renders the `${VAR}` of every entry's load-time keys (see LOAD_TIME_KEYS). */
export function renderLoadTimeKeys(servers: unknown, scope: InterpolationScope): LoadTimeRendering {
  const issues: z.core.$ZodIssue[] = [];
  const written = new Map<string, string>();
  if (!isMapping(servers)) return { servers, issues, written };
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) {
    out[name] = isMapping(entry) ? renderEntryKeys(name, entry, scope, issues, written) : entry;
  }
  return { servers: out, issues, written };
}

function renderEntryKeys(
  name: string,
  entry: Record<string, unknown>,
  scope: InterpolationScope,
  issues: z.core.$ZodIssue[],
  written: Map<string, string>,
): Record<string, unknown> {
  // The mappings written to are copies: the caller's tree stays as the file says.
  const copy: Record<string, unknown> = { ...entry };
  for (const [section] of LOAD_TIME_KEYS.filter((path) => path.length > 1)) {
    const inner = copy[section as string];
    if (isMapping(inner)) copy[section as string] = { ...inner };
  }
  for (const path of LOAD_TIME_KEYS) {
    const parent = path.length === 1 ? copy : copy[path[0] as string];
    if (!isMapping(parent)) continue;
    const key = path.at(-1) as string;
    const value = parent[key];
    if (typeof value !== "string" || !value.includes("${")) continue;
    const rendered = interpolate(value, scope);
    const unset = rendered.unresolved[0];
    if (unset === undefined) {
      parent[key] = rendered.value;
      written.set(pathKey(["mcp_servers", name, ...path]), value);
    } else issues.push(unsetIssue(["mcp_servers", name, ...path], unset, value));
  }
  return copy;
}

/** The issue of a load-time key whose `${...}` nothing set, worded by formatIssue (it knows the .env path). */
function unsetIssue(path: string[], name: string, written: string): z.core.$ZodIssue {
  if (isVariableName(name)) {
    return {
      code: "custom",
      path,
      message: `\${${name}} is not set`,
      params: { unsetVariable: name },
      input: written,
    } as z.core.$ZodIssue;
  }
  return {
    code: "custom",
    path,
    message: unreadPlaceholderProblem(written) ?? `\${${name}} is not set`,
    input: written,
  } as z.core.$ZodIssue;
}

/**
 * The schema's issues with those of `rendering` in place of the ones about the same keys (a `${T}` nothing
 * set is reported as unset, not as "expected one of sse, http, ..."; `type` is checked as `transport`),
 * and a rendered value a message quotes replaced by the file's text: `.env` is where secrets live.
 */
export function withUnsetLoadTimeKeys(
  issues: readonly z.core.$ZodIssue[],
  rendering: LoadTimeRendering,
): z.core.$ZodIssue[] {
  const replaced = new Set(rendering.issues.map((issue) => pathKey(issue.path)));
  const kept = issues
    .filter((issue) => !replaced.has(pathKey(issue.path)))
    .map((issue) => {
      const text = rendering.written.get(pathKey(issue.path));
      // The durations' and switches' own messages end with the value they got: `expected seconds, got "soon"`.
      return text === undefined || issue.code !== "custom"
        ? issue
        : {
            ...issue,
            message: issue.message.replace(/got .*$/s, `got ${describe(new WrittenAs(text))}`),
          };
    });
  return [...rendering.issues, ...kept];
}
