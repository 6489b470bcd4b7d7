/**
 * Server entries of other MCP clients' files as svc entries: Claude Code's `.mcp.json` (`mcpServers`) and
 * VS Code's `mcp.json` (`servers`, with `type`). Pure: the caller reads the file and writes config.yaml.
 */

import { HTTP_TRANSPORT_NAMES, MCP_ENTRY_KEYS } from "../../config/sections/mcp.js";
import { terminalText } from "../../io/terminalText.js";

/**
 * A server name or key of the imported file as a note shows it: one holding a line break, a control or an
 * invisible character (a file from a cloned repository naming a server "a\u001b]0;x\u0007b") in JSON quotes
 * with those escaped, so the note stays one line and cannot act on the terminal; any other as it is.
 */
export function shownName(name: string): string {
  return /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name) ? terminalText(JSON.stringify(name)) : name;
}

export interface ImportedServers {
  /** Which layout the file used. */
  readonly format: "mcpServers" | "servers";
  readonly entries: Record<string, Record<string, unknown>>;
  /** One line per thing not carried over (a key svc has no use for, a variable form it does not read). */
  readonly notes: string[];
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

/**
 * Gemini CLI's `includeTools` / `excludeTools` and Roo Code's `disabledTools` (lists of tool names): svc's
 * `tools.include` / `tools.exclude`. Where both are written, Gemini excludes a tool named in both; svc
 * reads include alone then, so those names are taken out of it. The keys carried over are returned too.
 */
function toolFilters(raw: Record<string, unknown>): { tools?: Record<string, string[]>; keys: string[] } {
  const include = names(raw.includeTools);
  const excluded = { excludeTools: names(raw.excludeTools), disabledTools: names(raw.disabledTools) };
  const exclude = [...(excluded.excludeTools ?? []), ...(excluded.disabledTools ?? [])];
  const keys = [
    ...(include === undefined ? [] : ["includeTools"]),
    ...Object.entries(excluded).flatMap(([key, list]) => (list === undefined ? [] : [key])),
  ];
  if (include !== undefined) return { tools: { include: include.filter((n) => !exclude.includes(n)) }, keys };
  return exclude.length === 0 ? { keys } : { tools: { exclude }, keys };
}

const names = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && x !== "") ? v : undefined;

function convert(name: string, raw: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  for (const key of KEPT) if (raw[key] !== undefined) entry[key] = raw[key];
  // Windsurf (and Antigravity) name a remote server's url `serverUrl`.
  if (entry.url === undefined && raw.serverUrl !== undefined) entry.url = raw.serverUrl;
  // Cline writes `transportType` (`sse`, `streamable-http`) where Claude Code and VS Code write `type`.
  const type = raw.type ?? raw.transport ?? raw.transportType;
  if (type === "sse" || (HTTP_TRANSPORT_NAMES as readonly unknown[]).includes(type))
    entry.transport = type === "sse" ? "sse" : "http";
  else if (type !== undefined && type !== "stdio")
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
  const filters = toolFilters(raw);
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
  return entry;
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
  for (const [name, raw] of Object.entries(document[format] as Record<string, unknown>)) {
    if (!isMapping(raw)) {
      notes.push(`${shownName(name)}: not an object — skipped`);
      continue;
    }
    entries[name] = convert(name, raw, notes);
  }
  if (format === "servers" && Array.isArray(document.inputs) && document.inputs.length > 0)
    notes.push(
      `inputs: VS Code prompts for these; svc reads secrets from .env — set each one there and refer to it as \${NAME}`,
    );
  return { format, entries, notes };
}
