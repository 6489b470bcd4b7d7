import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { addVariablesAdvice, unsetVariablesIn } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { fnmatchAny } from "./fnmatch.js";
import { inputSchemaProblem, withoutNullKeywords } from "./toolSchema.js";

/** A tool as the agent sees it. */
export interface RegisteredTool {
  /** `mcp__<server>__<tool>`, sanitized. */
  readonly name: string;
  readonly server: string;
  /** The server's own name for it (or the utility name). */
  readonly original: string;
  readonly kind: "native" | "utility";
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly readOnly: boolean;
  /** The server's display `title`, `annotations` and `outputSchema` as listed (MCP's annotation keys only, and
   *  an output schema only when a client could read it): a command agent's MCP client gets them unchanged. */
  readonly title?: string;
  readonly annotations?: Readonly<Record<string, string | boolean>>;
  readonly outputSchema?: Record<string, unknown>;
  /** The server runs it only as a task (`execution.taskSupport: "required"`). */
  readonly task?: boolean;
}

export const UTILITY_TOOLS = {
  list_resources: { capability: "resources", description: "List the server's resources", input: {} },
  read_resource: {
    capability: "resources",
    description: "Read one resource by URI",
    input: { uri: { type: "string", description: "Resource URI" } },
    required: ["uri"],
  },
  list_prompts: { capability: "prompts", description: "List the server's prompts", input: {} },
  get_prompt: {
    capability: "prompts",
    description: "Render one prompt",
    input: {
      name: { type: "string", description: "Prompt name" },
      arguments: { type: "object", additionalProperties: { type: "string" } },
    },
    required: ["name"],
  },
} as const;
export type UtilityName = keyof typeof UTILITY_TOOLS;

/** Every character outside `[A-Za-z0-9_]` becomes one `_` (an emoji is one character, not two code units). */
export function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/gu, "_");
}

export function registeredName(server: string, tool: string): string {
  return `mcp__${sanitize(server)}__${sanitize(tool)}`;
}

/**
 * The collision a utility tool (`get_prompt`) lost to a server tool registering under its name
 * (`get-prompt`), from its toolset's `collisions`; undefined for other names.
 */
export function utilityCollision(name: string, collisions: readonly string[]): string | undefined {
  if (!Object.hasOwn(UTILITY_TOOLS, name)) return undefined;
  return collisions.find((c) => c.endsWith(`; the utility tool ${name} is skipped`));
}

/**
 * Why a utility tool (`list_resources`, ...) called by name is not registered: its `tools.resources` /
 * `tools.prompts` switch is off, the server does not offer the capability (rule 4), or a server tool
 * took its name (`collisions` of its toolset). Undefined for other names.
 */
export function unregisteredUtilityReason(
  name: string,
  policy: { readonly resources: boolean; readonly prompts: boolean },
  capabilities: { readonly resources?: unknown; readonly prompts?: unknown },
  collisions: readonly string[] = [],
): string | undefined {
  if (!Object.hasOwn(UTILITY_TOOLS, name)) return undefined;
  const capability = UTILITY_TOOLS[name as UtilityName].capability;
  const offered = capabilities[capability] !== undefined;
  if (!policy[capability])
    return `it is a utility tool of tools.${capability}, which is off — set tools.${capability}: true to register it${offered ? "" : ` (the server does not offer ${capability}, so it would still not be)`}`;
  const lost = utilityCollision(name, collisions);
  if (lost !== undefined && offered) return `it lost a name collision: ${lost.slice(lost.indexOf(": ") + 2)}`;
  return `it is a utility tool of tools.${capability}, and the server does not offer ${capability} (utility tools are registered only for what the server offers)`;
}

/**
 * Why a tool the server lists (by its own name) is not registered: `tools.include` / `tools.exclude` leave
 * it out, or another of the server's tools took its registered name (`collisions` of its toolset).
 * Undefined when neither explains it.
 */
export function unregisteredListedReason(
  tool: string,
  policy: McpServerEntry["tools"],
  collisions: readonly string[],
): string | undefined {
  if (selectTools([{ name: tool }], policy).length === 0)
    return policy.include !== undefined
      ? `the server lists it, but tools.include leaves it out — add ${JSON.stringify(tool)} to tools.include`
      : `the server lists it, but tools.exclude leaves it out — remove its entry from tools.exclude`;
  const lost = collisions.find((c) => c.endsWith(`; ${JSON.stringify(tool)} is skipped`));
  return lost === undefined ? undefined : `it lost a name collision: ${lost.slice(lost.indexOf(": ") + 2)}`;
}

/** MCP's tool annotations and the types MCP gives them; a client's schema refuses the whole list otherwise. */
const ANNOTATION_TYPES = {
  title: "string",
  readOnlyHint: "boolean",
  destructiveHint: "boolean",
  idempotentHint: "boolean",
  openWorldHint: "boolean",
} as const;

/**
 * A listed tool's `title`, `annotations` and `outputSchema`, as far as an MCP client can take them: a value
 * of the wrong type (or an output schema that is not an object schema) would make a client's `tools/list`
 * fail as a whole, so it is left out rather than passed on.
 */
function listedMetadata(tool: Tool): Pick<RegisteredTool, "title" | "annotations" | "outputSchema"> {
  const listed = (tool.annotations ?? {}) as Record<string, unknown>;
  const annotations: Record<string, string | boolean> = {};
  for (const [key, type] of Object.entries(ANNOTATION_TYPES)) {
    const value = listed[key];
    if (typeof value === type) annotations[key] = value as string | boolean;
  }
  if (isReadOnly(tool)) annotations.readOnlyHint = true;
  const output = withoutNullKeywords(tool.outputSchema) as Record<string, unknown> | undefined;
  return {
    ...(typeof tool.title === "string" ? { title: tool.title } : {}),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    ...(output?.type === "object" && inputSchemaProblem(output) === undefined
      ? { outputSchema: output }
      : {}),
  };
}

/**
 * `readOnlyHint: true` from the server (the snake-case `read_only_hint` spelling counts too). MCP's own
 * `annotations.readOnlyHint`, when the server writes it as a boolean, decides: a `false` there is not
 * overruled by another spelling's `true`.
 */
export function isReadOnly(tool: Pick<Tool, "annotations">): boolean {
  const annotations = (tool.annotations ?? {}) as Record<string, unknown>;
  if (typeof annotations.readOnlyHint === "boolean") return annotations.readOnlyHint;
  // Some servers put the hint beside the annotations instead of inside them.
  const top = tool as Record<string, unknown>;
  return [annotations.read_only_hint, top.readOnlyHint, top.read_only_hint].includes(true);
}

function taskRequired(tool: Tool): boolean {
  const execution = (tool as { execution?: { taskSupport?: unknown } }).execution;
  return execution?.taskSupport === "required";
}

/** Spec 2.2 rules 1-3 and 6: include wins over exclude; both match the server's original names. */
export function selectTools<T extends { name: string }>(
  tools: readonly T[],
  policy: McpServerEntry["tools"],
): T[] {
  if (policy.include !== undefined) {
    const included = fnmatchAny(policy.include);
    return tools.filter((t) => included(t.name));
  }
  if (policy.exclude !== undefined) {
    const excluded = fnmatchAny(policy.exclude);
    return tools.filter((t) => !excluded(t.name));
  }
  return [...tools];
}

/**
 * One warning per `tools.include` / `tools.exclude` entry (the one in force) that
 * matches none of the server's tools: usually a sanitized name (`write_note`) written for the server's
 * own (`write-note`), which rule 6 does not match. Plus one when both are set: `exclude` does nothing.
 */
export function unmatchedFilters(
  tools: readonly { name: string }[],
  policy: McpServerEntry["tools"],
): string[] {
  const key = policy.include !== undefined ? "include" : "exclude";
  const patterns = policy.include ?? policy.exclude ?? [];
  const ignored =
    policy.include !== undefined && policy.exclude !== undefined
      ? ["tools.exclude is ignored because tools.include is set (include wins) — remove one of them"]
      : [];
  // `include: []` is set, so it registers none of the tools: no entry of it is there to be reported.
  if (policy.include?.length === 0 && tools.length > 0)
    ignored.push(
      `tools.include is an empty list, so none of the server's ${tools.length} tool${tools.length === 1 ? "" : "s"} is registered — list the tools to register, or remove tools.include to register them all`,
    );
  return ignored.concat(
    patterns.flatMap((pattern) => {
      if (tools.some((t) => fnmatchAny([pattern])(t.name))) return [];
      // The policy is rendered: a `${VAR}` left in it is set nowhere, so the pattern is its literal text.
      const unset = unsetVariablesIn(pattern);
      // A sanitized name (`write_note` for `write-note`), or another case (matching is case-sensitive).
      const loose = (name: string) => sanitize(name).toLowerCase();
      // Also a registered name (`mcp__gh__search_issues`, as agents' logs and Claude Code's allow lists write them).
      const registered = (name: string) =>
        loose(pattern).startsWith("mcp__") && loose(pattern).endsWith(`__${loose(name)}`);
      const meant = tools
        .filter((t) => loose(t.name) === loose(pattern) || registered(t.name))
        .map((t) => JSON.stringify(t.name));
      // `include: "search_*, get_issue"`: one pattern, commas and all (fnmatch has no lists).
      const parts = pattern
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part !== "");
      // `exclude: [read_resource]`: the utility tools are switched on and off, never filtered (rule 6).
      const utility = Object.hasOwn(UTILITY_TOOLS, loose(pattern))
        ? UTILITY_TOOLS[loose(pattern) as UtilityName].capability
        : undefined;
      const hint =
        unset.length > 0
          ? ` — ${unset.map((n) => `\${${n}}`).join(", ")} ${unset.length === 1 ? "is" : "are"} not set, so it stands as written: ${addVariablesAdvice(unset, "the profile's .env or the environment")}`
          : meant.length > 0
            ? ` — filters use the server's own names: did you mean ${meant.join(" or ")}?`
            : parts.length > 1 && parts.some((part) => tools.some((t) => fnmatchAny([part])(t.name)))
              ? ` — it is one name with commas in it: a list is written in brackets, tools.${key}: [${parts.join(", ")}]`
              : utility !== undefined
                ? ` — ${loose(pattern)} is a utility tool of tools.${utility}, which filters do not apply to (they match the server's own tools): tools.${utility} switches ${utility === "resources" ? "list_resources and read_resource" : "list_prompts and get_prompt"} on or off together`
                : key === "include"
                  ? ` — filters use the server's own names: ${ownNames(tools)}`
                  : " — filters use the server's own names (svc mcp tools <server> shows them)";
      return [`tools.${key}: "${pattern}" matches no tool of this server${hint}`];
    }),
  );
}

/** How many of a server's tool names a warning lists before it counts the rest. */
const NAMES_LISTED = 10;

/**
 * The server's own tool names, for an `include` entry that matches none of them: `svc mcp tools` shows the
 * registered tools only, which leaves out every tool an include does not name (all of them, when it names
 * none), so the names to write are said here.
 */
function ownNames(tools: readonly { name: string }[]): string {
  if (tools.length === 0) return "the server lists no tools";
  const listed = tools.slice(0, NAMES_LISTED).map((t) => JSON.stringify(t.name));
  const more = tools.length - listed.length;
  return `it lists ${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/** The tool-name limit of the common model APIs (`^[a-zA-Z0-9_-]{1,64}$`). */
const MODEL_TOOL_NAME_LIMIT = 64;

/**
 * Registered names past the model APIs' 64 characters stay as svc builds them (spec 2.5): a model run
 * offers each shortened (`modelToolName`: its first 55 characters, `_` and 8 hex of a hash), a command
 * agent's MCP client gets it whole. The warning says so and how to keep the name readable.
 */
export function longNameWarning(server: string, tools: readonly { name: string }[]): string | undefined {
  const long = tools.filter((t) => t.name.length > MODEL_TOOL_NAME_LIMIT).map((t) => t.name);
  if (long.length === 0) return undefined;
  const one = long.length === 1;
  return `${server}: ${long.join(", ")} ${one ? "is" : "are"} longer than ${MODEL_TOOL_NAME_LIMIT} characters, the limit of the OpenAI and Anthropic APIs' tool names: model runs offer ${one ? "it" : "them"} shortened (the first 55 characters, _ and a hash), a command agent's MCP client gets ${one ? "it" : "them"} whole — a shorter server name or tools.exclude keeps ${one ? "it" : "them"} as registered`;
}

export interface Toolset {
  readonly tools: RegisteredTool[];
  /** Human-readable reports of names that could not be registered. */
  readonly collisions: string[];
  /** Tools left out because their `inputSchema` cannot be offered to a model (see `inputSchemaProblem`). */
  readonly invalid?: ReadonlyArray<{ readonly tool: string; readonly report: string }>;
  /** Why no tool is registered, when none is (`svc mcp tools` / `test` print it). */
  readonly empty?: string;
}

/**
 * What a server offers, as a toolset is built from it: `tools: false` when its initialize answer declares
 * no `tools` capability, so it was never asked for its tools; `"unanswered"` when it declares it but answers
 * tools/list with -32601 Method not found (absent: it lists them, or a cache written before the key was).
 */
export interface OfferedCapabilities {
  readonly resources: boolean;
  readonly prompts: boolean;
  readonly tools?: false | "unanswered";
}

/** Why a server without the `tools` capability has none registered: svc did not ask it, as MCP says. */
export const NO_TOOLS_CAPABILITY =
  "the server declares no tools capability in its initialize answer, so svc does not ask it for tools";

/**
 * The true reason a listing registered nothing: no tools capability, no tools at all, or filters that left
 * none; plus each utility switch that is on without the capability behind it, or off beside a capability
 * (rule 4).
 */
export function emptyReason(
  listed: number,
  capabilities: OfferedCapabilities,
  policy: McpServerEntry["tools"],
  invalid = 0,
  skipped = 0,
): string {
  const reasons = [
    capabilities.tools === false
      ? NO_TOOLS_CAPABILITY
      : capabilities.tools === "unanswered"
        ? "the server declares the tools capability but has no tools/list (Method not found)"
        : listed === 0 && skipped > 0
          ? `the server lists ${skipped === 1 ? "one tool" : `${skipped} tools`} svc could not read (see the warnings)`
          : listed === 0
            ? "the server lists no tools"
            : invalid > 0
              ? `${invalid === 1 ? "the one tool" : `all ${invalid} tools`}${policy.include === undefined && policy.exclude === undefined ? " it lists" : " tools.include/exclude left"} ${invalid === 1 ? "has" : "have"} an unusable inputSchema (see the warnings)`
              : `tools.include/exclude left none of its ${listed} tool${listed === 1 ? "" : "s"}`,
  ];
  for (const key of ["resources", "prompts"] as const) {
    if (policy[key] && !capabilities[key])
      reasons.push(`tools.${key} is on but the server does not offer ${key}`);
    else if (!policy[key] && capabilities[key])
      reasons.push(`the server offers ${key}: tools.${key}: true registers their utility tools`);
  }
  return reasons.join("; ");
}

/**
 * The toolset of one server: filtered native tools plus the utility tools that are both enabled and
 * backed by a session capability (rule 4). An empty result means no toolset (rule 5). Two originals that
 * sanitize to one name: the first keeps it, the second is reported and not registered. A tool whose
 * `inputSchema` is not a usable JSON Schema is left out and reported, so it cannot make the model API
 * refuse every run that is offered this server's tools.
 */
export function buildToolset(
  server: string,
  tools: readonly Tool[],
  capabilities: OfferedCapabilities,
  policy: McpServerEntry["tools"],
  /** Entries of the listing skipped before it (`tools/list entry … is skipped`), for the empty reason. */
  skipped = 0,
): Toolset {
  const out: RegisteredTool[] = [];
  const collisions: string[] = [];
  const invalid: Array<{ tool: string; report: string }> = [];
  const owner = new Map<string, RegisteredTool>();
  // A server tool named like a utility tool (`list_resources`): the message says which one is which. A server's
  // own name is JSON-quoted: a line break or a `"` in it is escaped, so a collision line cannot forge others.
  const shown = (tool: RegisteredTool) =>
    tool.kind === "utility" ? `the utility tool ${tool.original}` : JSON.stringify(tool.original);
  const add = (tool: RegisteredTool) => {
    const first = owner.get(tool.name);
    // One tool listed twice (twice in a page, or offset paging that repeats a page): not two tools colliding.
    if (first !== undefined && first.kind === tool.kind && first.original === tool.original) {
      const twice = `${server}: the server lists ${JSON.stringify(tool.original)} more than once; its first listing is registered`;
      if (!collisions.includes(twice)) collisions.push(twice);
      return;
    }
    if (first !== undefined) {
      const mixed = first.kind !== tool.kind;
      const firstShown =
        mixed && first.kind === "native" ? `the server's tool ${shown(first)}` : shown(first);
      collisions.push(
        `${server}: ${shown(tool)} and ${firstShown} both register as ${tool.name}; ${shown(tool)} is skipped`,
      );
      return;
    }
    owner.set(tool.name, tool);
    out.push(tool);
  };
  for (const listed of selectTools(tools, policy)) {
    const tool = { ...listed, inputSchema: withoutNullKeywords(listed.inputSchema) as Tool["inputSchema"] };
    const problem = inputSchemaProblem(tool.inputSchema);
    if (problem !== undefined) {
      invalid.push({
        tool: tool.name,
        report: `${server}: ${JSON.stringify(tool.name)} is not registered: its inputSchema ${problem} — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude`,
      });
      continue;
    }
    add({
      name: registeredName(server, tool.name),
      server,
      original: tool.name,
      kind: "native",
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      readOnly: isReadOnly(tool),
      ...listedMetadata(tool),
      ...(taskRequired(tool) ? { task: true } : {}),
    });
  }
  for (const [name, spec] of Object.entries(UTILITY_TOOLS)) {
    const enabled = spec.capability === "resources" ? policy.resources : policy.prompts;
    if (!enabled || !capabilities[spec.capability]) continue;
    add({
      name: registeredName(server, name),
      server,
      original: name,
      kind: "utility",
      description: spec.description,
      inputSchema: {
        type: "object",
        properties: spec.input,
        ...("required" in spec ? { required: [...spec.required] } : {}),
      },
      readOnly: true,
      // They only read (no approval asked, replayed after a lost session): a command agent's MCP client
      // with approval rules of its own is told so, as for a server tool listed with readOnlyHint.
      annotations: { readOnlyHint: true },
    });
  }
  const reported = invalid.length === 0 ? {} : { invalid };
  return out.length > 0
    ? { tools: out, collisions, ...reported }
    : {
        tools: out,
        collisions,
        ...reported,
        empty: emptyReason(tools.length, capabilities, policy, invalid.length, skipped),
      };
}

/** One server's part of the merge: `pending` while its first connect has not listed its tools yet. */
export type MergeEntry = readonly [server: string, toolset: Toolset, pending?: boolean];

/** The merged registry, with the cross-server collisions each server lost (for its status). */
export interface MergedToolset extends Toolset {
  readonly lostBy: ReadonlyMap<string, readonly string[]>;
}

/**
 * Across servers, configuration order decides: the server listed first keeps a name and later ones are
 * reported, whatever order they connect in. So that a name never moves from a later server to an
 * earlier one mid-run, a later server's tools under the prefix of an earlier server still making its
 * first connect (`mcp__<server>__`) are held back until that server has listed its tools or failed.
 */
export function mergeToolsets(toolsets: ReadonlyArray<MergeEntry>): MergedToolset {
  const taken = new Map<string, string>();
  const reserved: string[] = [];
  const tools: RegisteredTool[] = [];
  const collisions: string[] = [];
  const lostBy = new Map<string, string[]>();
  for (const [server, set, pending] of toolsets) {
    collisions.push(...set.collisions);
    for (const tool of set.tools) {
      const holder = taken.get(tool.name);
      if (holder !== undefined && holder !== server) {
        const collision = `${server}: ${JSON.stringify(tool.original)} registers as ${tool.name}, already taken by server ${holder} (listed earlier in mcp_servers); skipped`;
        collisions.push(collision);
        const lost = lostBy.get(server);
        if (lost === undefined) lostBy.set(server, [collision]);
        else lost.push(collision);
        continue;
      }
      if (reserved.some((prefix) => tool.name.startsWith(prefix))) continue;
      taken.set(tool.name, server);
      tools.push(tool);
    }
    if (pending === true) reserved.push(`mcp__${sanitize(server)}__`);
  }
  return { tools, collisions, lostBy };
}
