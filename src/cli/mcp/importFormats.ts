/**
 * Server entries of other MCP clients' files as svc entries: Claude Code's `.mcp.json` (`mcpServers`, as GitHub
 * Copilot's `mcp-config.json`, Gemini CLI's `settings.json` and others write it) and VS Code's `mcp.json` (`servers`,
 * with `type`). Pure: the caller reads the file and writes config.yaml.
 */

import type { z } from "zod";
import { formatIssue } from "../../config/format.js";
import {
  filtersTools,
  HTTP_TRANSPORT_NAMES,
  jsonToolNamesSchema,
  jsonToolsPolicySchema,
  MCP_ENTRY_KEYS,
} from "../../config/sections/mcp.js";
import { shownName } from "../../io/mcp/shownName.js";
import { terminalText } from "../../io/terminalText.js";

export interface ImportedServers {
  /** Which layout the file used. */
  readonly format: "mcpServers" | "servers";
  readonly entries: Record<string, Record<string, unknown>>;
  /** One line per thing not carried over (a key svc has no use for, a variable form it does not read). */
  readonly notes: string[];
  /**
   * The servers not imported, each with why, said of the file: one whose tool filter svc refuses (a null in
   * Gemini CLI's `includeTools`), which imported without it would expose every tool the filter kept out.
   */
  readonly refused: Record<string, string>;
}

/** JSON with comments and trailing commas (VS Code's `mcp.json` allows both) as plain JSON text. */
export function stripJsonComments(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      i += 2;
      while (i < text.length && !(text[i] === "*" && text[i + 1] === "/")) i++;
      i++;
    } else out += c;
  }
  // A comma before a closing bracket, outside strings (strings hold no unescaped `,]` sequences here
  // that matter: they were copied verbatim above and this pass skips quoted text too).
  return out.replace(
    /("(?:[^"\\]|\\.)*")|,(\s*[}\]])/g,
    (match, quoted: string | undefined, close: string) => (quoted !== undefined ? match : close),
  );
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Keys carried over as they are; the others are noted and left out. */
/** Keys carried over as they are; `timeout` (Cline's, seconds per request) is svc's tool call timeout. */
const KEPT = ["command", "args", "env", "url", "headers", "timeout"] as const;

/**
 * `${input:x}`, a multi-root `${workspaceFolder:name}` and other VS Code/Claude forms svc does not
 * render; `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}` and `${/}` it does.
 */
const FOREIGN_VARIABLE =
  /\$\{(input:[^}]*|workspaceFolder:[^}]*|workspaceFolderBasename:[^}]*|CLAUDE_[A-Z_]*)\}/g;

const CONVERTED = ["type", "transport", "transportType", "serverUrl", "disabled", "enabled"];

/**
 * Claude Code's `oauth` (a pre-registered client: `clientId`, `callbackPort`, `scopes`) is svc's
 * `auth: oauth` with svc's own keys; its callback is `http://localhost:<callbackPort>/callback`, the
 * redirect URI registered with the client. The keys svc has no use for (`authServerMetadataUrl`: svc
 * discovers the authorization server from the MCP server) are noted. Gemini CLI's `enabled: false` turns it off.
 */
function claudeOAuth(name: string, raw: unknown, notes: string[]): Record<string, unknown> | undefined {
  if (!isMapping(raw) || raw.enabled === false) return undefined;
  const oauth: Record<string, unknown> = {};
  if (typeof raw.clientId === "string" && raw.clientId !== "") oauth.client_id = raw.clientId;
  const port = raw.callbackPort;
  if (typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535)
    oauth.redirect_uri = `http://localhost:${port}/callback`;
  if (typeof raw.scopes === "string" && raw.scopes.trim() !== "") oauth.scope = raw.scopes;
  const read = new Set([
    ...(raw.enabled === true ? ["enabled"] : []),
    ...(oauth.client_id === undefined ? [] : ["clientId"]),
    ...(oauth.redirect_uri === undefined ? [] : ["callbackPort"]),
    ...(oauth.scope === undefined ? [] : ["scopes"]),
  ]);
  const left = Object.keys(raw).filter((key) => !read.has(key));
  if (left.length > 0)
    notes.push(
      `${shownName(name)}: ${left.map((k) => shownName(`oauth.${k}`)).join(", ")} not carried over (svc's oauth keys are others: client_id, client_secret, scope, redirect_uri, ...; svc finds the authorization server from the MCP server's metadata; see docs/mcp-oauth.md)`,
    );
  return oauth;
}

/** Where a server's entry is in the imported file, for what is said of one of its keys. */
interface Where {
  readonly file: string;
  readonly format: ImportedServers["format"];
  readonly name: string;
}

/** A refusal of svc's schema, said of the key where the imported file writes it (`mcpServers.ga.includeTools`). */
function refusal(where: Where, keys: readonly string[], issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) =>
      formatIssue(
        where.file,
        { ...issue, path: [where.format, where.name, ...keys, ...issue.path] },
        undefined,
        false,
        "json",
      ),
    )
    .join("; ");
}

/** Gemini CLI's and Roo Code's tool lists, with the key of svc's `tools` each is read as. */
const TOOL_LISTS = { includeTools: "include", excludeTools: "exclude", disabledTools: "exclude" } as const;

/**
 * svc's `tools` for an entry: a `tools` mapping (svc's own, as svc writes it), GitHub Copilot's `tools` list
 * (`~/.copilot/mcp-config.json`: the tools to allow, `["*"]` every tool, `[]` none) or a lone name (`"echo"`, as
 * svc's `include` takes one; `"*"` every tool) as `tools.include`, a null as no filter, or Gemini
 * CLI's `includeTools` / `excludeTools` and Roo Code's `disabledTools` (lists of tool names) as `tools.include` /
 * `tools.exclude`. Where both of Gemini's are written, Gemini excludes a tool named in both; svc reads include
 * alone then, so those names are taken out of it. Each is judged by svc's schema as it is written, and one it
 * refuses (a null entry, `["a", null]`; a mapping with a key svc's `tools` has not, `{"Include": [...]}`) refuses
 * the entry, in the schema's words: left out, its allowlist would be lost and every tool of the server exposed.
 * The keys carried over are returned too.
 */
function toolFilters(
  raw: Record<string, unknown>,
  where: Where,
): { tools?: Record<string, unknown>; keys: string[] } | { refused: string } {
  const lists = (Object.keys(TOOL_LISTS) as (keyof typeof TOOL_LISTS)[]).filter((key) => key in raw);
  const tools = raw.tools;
  // A null is no filter, as config.yaml's `tools:` left empty: the key is read, and nothing written.
  if (tools != null) {
    if (lists.length > 0)
      return {
        refused: `${where.file}: ${where.format}.${shownName(where.name)}: writes both tools and ${lists.join(", ")} — keep one and import again`,
      };
    if (isMapping(tools)) {
      const parsed = jsonToolsPolicySchema.safeParse(tools, { reportInput: true });
      if (!parsed.success) return { refused: refusal(where, ["tools"], parsed.error.issues) };
      return { tools, keys: ["tools"] };
    }
    // A list, or a lone name as svc's include takes one; a number or a boolean is refused in the schema's words.
    const parsed = jsonToolNamesSchema("include").safeParse(tools, { reportInput: true });
    if (!parsed.success) return { refused: refusal(where, ["tools"], parsed.error.issues) };
    // Copilot's "*" is every tool: no filter, as svc has none without `tools`.
    return parsed.data.includes("*")
      ? { keys: ["tools"] }
      : { tools: { include: parsed.data }, keys: ["tools"] };
  }
  const read: Partial<Record<keyof typeof TOOL_LISTS, string[]>> = {};
  for (const key of lists) {
    // The other lists that filter (not null, nor an empty exclude list, which leaves no tool out): those alone
    // filter the tools once this one is removed.
    const beside = lists.filter((other) => other !== key && filtersTools(TOOL_LISTS[other], raw[other]));
    const schema = jsonToolNamesSchema(
      TOOL_LISTS[key],
      beside.length === 0 ? undefined : beside.join(" and "),
    );
    const parsed = schema.safeParse(raw[key], { reportInput: true });
    if (!parsed.success) return { refused: refusal(where, [key], parsed.error.issues) };
    read[key] = parsed.data;
  }
  const exclude = [...(read.excludeTools ?? []), ...(read.disabledTools ?? [])];
  // An empty includeTools is kept: Gemini CLI then enables none of the server's tools, as svc's include: [] does.
  const keys = tools === null ? ["tools", ...lists] : lists;
  if (read.includeTools !== undefined)
    return { tools: { include: read.includeTools.filter((n) => !exclude.includes(n)) }, keys };
  return exclude.length === 0 ? { keys } : { tools: { exclude }, keys };
}

/** An entry of the file as svc's, or why it is not imported (`toolFilters`). */
function convert(
  where: Where,
  raw: Record<string, unknown>,
  notes: string[],
): { entry: Record<string, unknown> } | { refused: string } {
  const { name } = where;
  const filters = toolFilters(raw, where);
  if ("refused" in filters) return filters;
  const entry: Record<string, unknown> = {};
  for (const key of KEPT) if (raw[key] !== undefined) entry[key] = raw[key];
  // Windsurf (and Antigravity) name a remote server's url `serverUrl`.
  if (entry.url === undefined && raw.serverUrl !== undefined) entry.url = raw.serverUrl;
  // Cline writes `transportType` (`sse`, `streamable-http`) where Claude Code and VS Code write `type`.
  const type = raw.type ?? raw.transport ?? raw.transportType;
  if (type === "sse" || (HTTP_TRANSPORT_NAMES as readonly unknown[]).includes(type))
    entry.transport = type === "sse" ? "sse" : "http";
  // GitHub Copilot writes a command server's type `local` or `stdio` (the same to it): both are implied by command.
  else if (type !== undefined && type !== "stdio" && type !== "local")
    notes.push(
      `${shownName(name)}: type ${terminalText(JSON.stringify(type))} is not a transport svc knows (stdio, http, sse) — left out`,
    );
  // Gemini CLI names a Streamable HTTP server's url `httpUrl`.
  if (entry.url === undefined && entry.command === undefined && typeof raw.httpUrl === "string") {
    entry.url = raw.httpUrl;
    entry.transport = "http";
  }
  if (raw.disabled === true || raw.enabled === false) entry.enabled = false;
  // `disabled: "true"` (text, as some writers quote it) is no switch the client reads either: said, not guessed.
  for (const key of ["disabled", "enabled"] as const)
    if (raw[key] !== undefined && typeof raw[key] !== "boolean")
      notes.push(
        `${shownName(name)}: ${key} ${terminalText(JSON.stringify(raw[key]))} is not true or false — not carried over, so the server is imported enabled; write enabled: false under mcp_servers.${shownName(name)} to keep it off`,
      );
  // Gemini CLI's trust (a boolean): true runs every tool without asking, as svc's default trust: full does;
  // false asks first, as trust: untrusted does (svc asks for the tools without readOnlyHint: true).
  if (raw.trust === false) entry.trust = "untrusted";
  if (filters.tools !== undefined) entry.tools = filters.tools;
  // A remote server's OAuth login: svc logs in only with auth: oauth.
  const oauth = entry.url === undefined ? undefined : claudeOAuth(name, raw.oauth, notes);
  if (oauth !== undefined) {
    entry.auth = "oauth";
    if (Object.keys(oauth).length > 0) entry.oauth = oauth;
  }
  const left = Object.keys(raw).filter(
    (k) =>
      !(KEPT as readonly string[]).includes(k) &&
      ![...CONVERTED, ...filters.keys].includes(k) &&
      !(k === "httpUrl" && entry.url === raw.httpUrl) &&
      // Gemini CLI's oauth: {enabled: false} is no login, as without auth: oauth.
      !(k === "oauth" && (oauth !== undefined || (isMapping(raw.oauth) && raw.oauth.enabled === false))) &&
      !(k === "trust" && typeof raw.trust === "boolean"),
  );
  // A key svc has, written as another client writes it (an oauth that is no mapping, a trust that is no word).
  const own = left.filter((k) => MCP_ENTRY_KEYS.includes(k));
  const unknown = left.filter((k) => !own.includes(k));
  if (unknown.length > 0)
    notes.push(
      `${shownName(name)}: ${unknown.map(shownName).join(", ")} not carried over (svc has no such key; see docs/mcp.md)`,
    );
  if (own.length > 0)
    notes.push(
      `${shownName(name)}: ${own.join(", ")} not carried over (svc's ${own.length === 1 ? "key takes" : "keys take"} other values than this file's; see docs/mcp.md)`,
    );
  // Cline's timeout is seconds, as svc's; Gemini CLI's (an entry with its httpUrl or tool lists) milliseconds.
  if (typeof raw.timeout === "number" && ["httpUrl", "includeTools", "excludeTools"].some((k) => k in raw))
    notes.push(
      `${shownName(name)}: timeout ${raw.timeout} is read as seconds; Gemini CLI writes milliseconds — if it came from there, write ${raw.timeout / 1000}`,
    );
  const foreign = [...new Set(JSON.stringify(entry).match(FOREIGN_VARIABLE) ?? [])];
  if (foreign.length > 0)
    notes.push(
      `${shownName(name)}: ${foreign.map((v) => terminalText(v)).join(", ")} ${foreign.length === 1 ? "is another client's variable" : "are other clients' variables"}, which svc does not render (carried over as written) — write \${NAME} and set NAME in .env`,
    );
  return { entry };
}

/** The servers of a parsed `.mcp.json` / `mcp.json` document, or a message saying why there are none. */
export function importedServers(document: unknown, file: string): ImportedServers {
  if (!isMapping(document)) throw new Error(`${file}: expected a JSON object with mcpServers or servers`);
  const format = isMapping(document.mcpServers)
    ? "mcpServers"
    : isMapping(document.servers)
      ? "servers"
      : undefined;
  if (format === undefined)
    throw new Error(
      `${file}: no "mcpServers" (Claude Code's .mcp.json) or "servers" (VS Code's mcp.json) object found`,
    );
  const notes: string[] = [];
  // No prototype: a server named `__proto__` (JSON.parse makes it an own key) stays an entry, which the
  // name check then refuses with a note, instead of becoming the object's prototype and vanishing.
  const entries: Record<string, Record<string, unknown>> = Object.create(null);
  const refused: Record<string, string> = Object.create(null);
  for (const [name, raw] of Object.entries(document[format] as Record<string, unknown>)) {
    if (!isMapping(raw)) {
      notes.push(`${shownName(name)}: not an object — skipped`);
      continue;
    }
    const converted = convert({ file, format, name }, raw, notes);
    if ("refused" in converted) refused[name] = converted.refused;
    else entries[name] = converted.entry;
  }
  if (format === "servers" && Array.isArray(document.inputs) && document.inputs.length > 0)
    notes.push(
      `inputs: VS Code prompts for these; svc reads secrets from .env — set each one there and refer to it as \${NAME}`,
    );
  return { format, entries, notes, refused };
}
