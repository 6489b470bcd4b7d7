import { formatIssue } from "../config/format.js";
import { lookedUpVariables } from "../config/interpolate.js";
import { knownKeysAt } from "../config/knownKeys.js";
import { nameCharNote } from "../config/paths.js";
import { httpUrlProblem, jsonMcpServerSchema } from "../config/sections/mcp.js";
import { SvcError } from "../errors.js";
import { terminalText } from "./terminalText.js";

/** Spec 4.1 limits. */
export const INSTALL_NAME = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_INSTALL_PAYLOAD = 32 * 1024;
/** Base64 characters of the largest payload (padding included). */
const MAX_ENCODED = Math.ceil(MAX_INSTALL_PAYLOAD / 3) * 4;
/**
 * A bound on the whole link before it is parsed: the largest payload with every character percent-encoded
 * (standard base64 put in a URL with encodeURIComponent writes `+`, `/`, `=` as `%2B`, `%2F`, `%3D`), plus
 * the rest of the link. The payload limit itself is checked on the decoded bytes.
 */
const MAX_LINK_CHARS = 3 * MAX_ENCODED + 1024;

/** One character INSTALL_NAME allows. */
const INSTALL_NAME_CHAR = /[A-Za-z0-9._-]/;

/**
 * Why `name` cannot be a server name, or undefined when it can: it must match INSTALL_NAME, said in words
 * as a route name's rule is (the first character outside it named, with a name to write in its place; a
 * name of allowed characters past 64 by its length), and `__proto__`, which matches, is a key the loaded
 * configuration cannot hold (the entry would be written to config.yaml and then never appear).
 */
export function installNameProblem(name: string): string | undefined {
  if (!INSTALL_NAME.test(name)) {
    // Quoted with its line breaks and controls escaped: it may come from a file or a link (a name holding an
    // escape sequence would retitle the window, a line break would fake a line of its own).
    const quoted = `${terminalText(JSON.stringify(name.slice(0, 80)))}${name.length > 80 ? "…" : ""}`;
    if (name.length > 64 && [...name].every((c) => INSTALL_NAME_CHAR.test(c)))
      return `name ${quoted} is ${name.length} characters long — a server name has at most 64: shorten it`;
    return `name ${quoted} is not a valid server name: use letters, digits, ".", "_" and "-" (1-64 characters)${nameCharNote(name, INSTALL_NAME_CHAR)}`;
  }
  if (name === "__proto__") return 'name "__proto__" cannot be used as a server name — choose another';
  return undefined;
}

export interface InstallRequest {
  readonly name: string;
  readonly config: Record<string, unknown>;
  /** Command servers run a local program: the confirmation shows an extra warning. */
  readonly kind: "url" | "command";
}

/**
 * Every rejection is one line, and it may quote the link (its name, a key of its config): a line break
 * there is shown as `\n`, so the link cannot put a line of its own (`Installed mcp_servers.x.`) under it.
 */
function reject(message: string): never {
  const oneLine = message.replace(/\r/g, "\\r").replace(/\n/g, "\\n");
  throw new SvcError("install_link", `install link rejected: ${oneLine}`);
}

/** Base64url or standard base64 (padding optional) to bytes; undefined when it is neither. */
export function decodeBase64Loose(text: string): Buffer | undefined {
  const compact = text.replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/_-]*$/.test(compact) || compact.length % 4 === 1) return undefined;
  if (/[+/]/.test(compact) && /[-_]/.test(compact)) return undefined;
  return Buffer.from(compact.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

/**
 * Parses `svc://mcp/install?name=<NAME>&config=<BASE64>`. Pure: no I/O, throws
 * SvcError("install_link") naming the problem.
 */
export function parseInstallLink(link: string): InstallRequest {
  if (link.length > MAX_LINK_CHARS) reject(`the link is longer than ${MAX_LINK_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    reject("not a URL; expected svc://mcp/install?name=...&config=...");
  }
  // RFC 3986 section 6.2.2.1: the scheme and the host are case-insensitive (the URL parser lowercases the
  // scheme only, since svc: is no special scheme); the path is not.
  // The authority is mcp alone: url.host leaves out a user:password@ before it (svc://x@mcp/install).
  if (
    url.protocol !== "svc:" ||
    url.host.toLowerCase() !== "mcp" ||
    url.username !== "" ||
    url.password !== "" ||
    url.pathname !== "/install"
  ) {
    reject("expected svc://mcp/install?name=...&config=...");
  }
  const names = url.searchParams.getAll("name");
  const configs = url.searchParams.getAll("config");
  if (names.length !== 1 || configs.length !== 1)
    reject(
      `exactly one name and one config parameter are required${
        // A link pasted into a shell without quotes arrives cut at its first &.
        names.length + configs.length === 1 && !url.search.includes("&")
          ? ` — only ${names.length === 1 ? "name" : "config"} is there: a shell cuts a link given without quotes at its & (and runs the rest as a command of its own), so put the link in single quotes: svc mcp install 'svc://mcp/install?name=...&config=...'`
          : ""
      }`,
    );
  const name = names[0] as string;
  // Standard base64 pasted unescaped: the query decoding turned each '+' into a space (never base64).
  const encoded = (configs[0] as string).replace(/ /g, "+");
  const nameProblem = installNameProblem(name);
  if (nameProblem !== undefined) reject(nameProblem);
  if (encoded.length > MAX_ENCODED) reject("config payload is over 32 KB");
  const bytes = decodeBase64Loose(encoded);
  if (bytes === undefined) reject("config is not base64url or base64");
  if (bytes.length > MAX_INSTALL_PAYLOAD) reject("config payload is over 32 KB");
  let config: unknown;
  try {
    config = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    reject("config does not decode to JSON");
  }
  if (config === null || typeof config !== "object" || Array.isArray(config))
    reject("config must be a JSON object");
  const entry = config as Record<string, unknown>;
  const hasUrl = "url" in entry;
  const hasCommand = "command" in entry;
  if (hasUrl === hasCommand)
    reject('config must have either a string "url" or a string "command" (not both)');
  if (hasUrl) {
    if (typeof entry.url !== "string") reject('"url" must be a string');
    // As config.yaml checks it; one holding a ${VAR} (a port, a host from .env) is checked at connect, once
    // rendered, but the link must still show its scheme.
    const problem =
      lookedUpVariables(entry.url).length === 0
        ? httpUrlProblem(entry.url)
        : /^\s*https?:\/\//i.test(entry.url)
          ? undefined
          : "expected an http:// or https:// URL, and a variable may not stand for its scheme — write http:// or https:// before it";
    if (problem !== undefined) reject(`config: mcp_servers.${name}.url: ${problem}`);
    checkEntry(name, entry);
    return { name, config: entry, kind: "url" };
  }
  if (typeof entry.command !== "string" || entry.command === "") {
    // A list (`["npx", "-y", "pkg"]`) or Zed's `{path, args}` gets the fix config.yaml gives for it.
    if (entry.command !== null && typeof entry.command === "object") checkEntry(name, entry);
    reject('"command" must be a non-empty string');
  }
  checkEntry(name, entry);
  return { name, config: entry, kind: "command" };
}

/**
 * The entry must be one `config.yaml` accepts: an unknown key or a bad value would stop the gateway. The
 * problem is named as `config.yaml` names it, under `mcp_servers.<name>` (with a likely spelling and a
 * pointer to docs/mcp.md), not at the "(top level)" of the decoded JSON.
 */
function checkEntry(name: string, entry: Record<string, unknown>): void {
  const checked = jsonMcpServerSchema.safeParse(entry, { reportInput: true });
  const issue = checked.success ? undefined : checked.error.issues[0];
  if (issue === undefined) return;
  const placed = { ...issue, path: ["mcp_servers", name, ...issue.path] } as typeof issue;
  reject(formatIssue("config", placed, (path) => knownKeysAt(jsonMcpServerSchema, path.slice(2))));
}

/** One argv word as the warning shows it: plain when unambiguous, else JSON-quoted (spaces, escapes, quotes). */
function shownWord(word: unknown): string {
  const text = String(word);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : terminalText(JSON.stringify(text));
}

/**
 * Each `${NAME}` of the entry's strings that `.env` or the environment would fill in (context variables
 * such as `${userHome}` aside), with where it is: `${GITHUB_TOKEN} (headers.Authorization)`. A link that
 * writes one sends the user's secret of that name to the server it names.
 */
function filledVariables(value: unknown, path: string, out: string[] = []): string[] {
  if (typeof value === "string") {
    for (const name of lookedUpVariables(value))
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) out.push(`\${${name}} (${path})`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) filledVariables(item, `${path}[${i}]`, out);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value))
      filledVariables(item, path === "" ? key : `${path}.${key}`, out);
  }
  return out;
}

/**
 * Settings a link can turn on against the one who installs it, each said in a warning of its own (the JSON
 * above shows them, but as one key among many): sampling, which has this gateway's agent model (and its
 * bill) answer the server's requests, and `ssl_verify: false`, which lets anyone on the way read and
 * change the server's traffic, its headers (credentials) included.
 */
function riskySettings(request: InstallRequest): string[] {
  const parsed = jsonMcpServerSchema.safeParse(request.config);
  if (!parsed.success) return [];
  const entry = parsed.data;
  const warnings: string[] = [];
  if (entry.sampling.enabled)
    warnings.push(
      `WARNING: it turns sampling on (sampling.enabled: true): the server can have this gateway's agent model answer its requests, at your cost — up to ${entry.sampling.max_tokens} tokens each, ${entry.sampling.max_requests_per_minute} a minute`,
    );
  if (request.kind === "url" && entry.ssl_verify === false)
    warnings.push(
      `WARNING: it turns TLS certificate checks off (ssl_verify: false): anyone on the network path to ${shownWord(entry.url ?? "")} can read and change what is sent, the headers included`,
    );
  return warnings;
}

/** What the confirmation prompt shows. The link is untrusted: no control character reaches the terminal raw. */
export function describeInstall(request: InstallRequest): string {
  const lines = [
    `Install MCP server "${request.name}" with this configuration:`,
    terminalText(JSON.stringify(request.config, null, 2)),
  ];
  if (request.kind === "command") {
    const args = Array.isArray(request.config.args) ? request.config.args : [];
    // The environment the link sets goes first, as a shell writes it: PATH there picks which program runs,
    // NODE_OPTIONS, LD_PRELOAD, npm_config_registry and the like what it loads.
    const env = request.config.env;
    const assignments =
      env !== null && typeof env === "object" && !Array.isArray(env)
        ? Object.entries(env).map(([key, value]) => `${key}=${String(value)}`)
        : [];
    lines.push(
      "WARNING: this server runs a program on this machine with your permissions:",
      `  ${[...assignments, request.config.command, ...args].map(shownWord).join(" ")}`,
    );
    if (assignments.length > 0)
      lines.push(
        "  (the variables before it are the environment the link gives it: they can change which program runs and what it loads)",
      );
  }
  lines.push(...riskySettings(request));
  const variables = filledVariables(request.config, "");
  if (variables.length > 0) {
    lines.push(
      `WARNING: it fills in values from the profile's .env or the environment, which the server (or its program) may get: ${terminalText(variables.join(", "))}`,
    );
  }
  if (lines.length > 2) lines.push("Only continue if you trust where this link came from.");
  return lines.join("\n");
}
