import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isPresent } from "../../config/configFileRead.js";
import { CREDENTIAL_NAME, holdsNoCredential } from "../../config/credentialHeader.js";
import { formatIssue } from "../../config/format.js";
import { HEADER_NOT_LATIN1 } from "../../config/headerValue.js";
import { loadConfig, WITHOUT_CONFIG } from "../../config/load.js";
import { svcHome, svcPaths } from "../../config/paths.js";
import { jsonMcpServerSchema } from "../../config/sections/mcp.js";
import { withoutUrlCredentials } from "../../config/urlCredentials.js";
import { SvcError } from "../../errors.js";
import { homeProblem } from "../../io/homeWritable.js";
import { installNameProblem } from "../../io/installLink.js";
import { writtenInlineCredentials } from "../../io/mcp/entrySecrets.js";
import { shownName } from "../../io/mcp/shownName.js";
import { addServers, removeServer } from "../../io/mcpServersEdit.js";
import { existingServerNames } from "../../io/oauth/installWriter.js";
import { terminalText } from "../../io/terminalText.js";
import { addedCommandNotes } from "./addedCommand.js";
import { samePrefixNote } from "./crossServer.js";
import { duplicateJsonKeys } from "./duplicateJsonKeys.js";
import { importedServers, stripJsonComments } from "./importFormats.js";
import { reloadHint } from "./reloadHint.js";
import { unknownServerMessage } from "./unknownServer.js";

export interface AddOptions {
  transport?: string;
  env?: Record<string, string>;
  header?: Record<string, string>;
  force?: boolean;
}

/**
 * `--header K:V` (repeatable): split at the first colon, as curl takes it. A name given twice (in any case:
 * header names ignore case) is refused, as the entry holds one value per header.
 */
export function collectHeader(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf(":");
  // Not quoted: a header given without its name is usually the credential itself (`--header "Bearer $TOKEN"`).
  if (at <= 0)
    throw new SvcError(
      "usage",
      `--header: expected Name: value, got ${at < 0 ? "text with no colon" : "no name before the colon"} (not shown: it may be a credential) — e.g. --header 'Authorization: Bearer \${TOKEN}'`,
    );
  const name = value.slice(0, at).trim();
  const earlier = Object.keys(previous).find((key) => key.toLowerCase() === name.toLowerCase());
  if (earlier !== undefined)
    throw new SvcError(
      "usage",
      earlier === name
        ? `--header ${name} is given twice — a server entry holds one value per header: keep one`
        : `--header ${earlier} and --header ${name} are one header (header names ignore case) — keep one`,
    );
  const headerValue = value.slice(at + 1).trim();
  // Every connect would fail on such a value before sending anything (docs/mcp.md): refused here, the
  // value never quoted (it is usually a credential).
  if (/[\0\r\n]/.test(headerValue))
    throw new SvcError(
      "usage",
      `--header ${name}: the value contains a line break or NUL character, which an HTTP header cannot carry — give it on one line; nothing was written`,
    );
  if (HEADER_NOT_LATIN1.test(headerValue))
    throw new SvcError(
      "usage",
      `--header ${name}: the value contains a character an HTTP header cannot carry (one outside Latin-1, such as € or an emoji) — write it in ASCII, percent-encoded if the server decodes it; nothing was written`,
    );
  if (CREDENTIAL_NAME.test(name) && holdsNoCredential(headerValue))
    throw new SvcError("usage", emptyCredentialHeader(name, headerValue));
  return { ...previous, [name]: headerValue };
}

/**
 * A credential header given empty, or as a scheme alone: usually `--header "X-Api-Key: ${MY_KEY}"` in double
 * quotes, which the shell expanded to nothing as MY_KEY is set in `.env`, not in the shell.
 */
function emptyCredentialHeader(name: string, value: string): string {
  const variable = name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
  const written = `${value === "" ? "" : `${value} `}\${${variable}}`;
  return `--header ${name}: ${value === "" ? "the value is empty" : `the value is the scheme ${value} with no credential after it`}, so every connect would send none — the shell likely expanded a \${VAR} inside double quotes to nothing (set in .env, not in the shell): write it in single quotes, --header '${name}: ${written}', so svc reads ${variable} from .env at each connect; nothing was written`;
}

/** A name the configuration can hold, an entry its schema accepts: else a usage error naming the problem. */
function checkEntry(name: string, entry: Record<string, unknown>, configPath: string): void {
  const problem = installNameProblem(name);
  if (problem !== undefined) throw new SvcError("usage", problem);
  // The input in each issue: `command: 5` is "expected a string, got 5", not "missing".
  const parsed = jsonMcpServerSchema.safeParse(entry, { reportInput: true });
  if (!parsed.success)
    throw new SvcError(
      "usage",
      parsed.error.issues
        .map((issue) => formatIssue(configPath, { ...issue, path: ["mcp_servers", name, ...issue.path] }))
        .join("\n"),
    );
}

interface WrittenCredentials {
  env: string[];
  headers: string[];
  /** A URL's password or `?api_key=` in the url, an argument or an `env` value; a credential option's value. */
  urls: string[];
}

/** The credential-named `env` and `headers` keys whose value is written out, not a `${VAR}`, and URL credentials. */
function writtenCredentials(entry: {
  url?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  headers?: Record<string, string>;
}): WrittenCredentials {
  const named = (values: Record<string, string> | undefined) =>
    Object.entries(values ?? {})
      .filter(([k, v]) => CREDENTIAL_NAME.test(k) && !v.includes("${"))
      .map(([k]) => k);
  return { env: named(entry.env), headers: named(entry.headers), urls: writtenInlineCredentials(entry) };
}

/**
 * An imported entry's `args`, `env` and `headers` as svc reads them: text. Another client's JSON may
 * write a number or a boolean there (`"env": {"PORT": 3000}`, `"args": ["--port", 8080]`), which the
 * schema takes as its text; the credential check reads strings.
 */
function textValues(entry: Record<string, unknown>): Parameters<typeof writtenCredentials>[0] {
  const text = (v: unknown) => (typeof v === "string" ? v : String(v));
  const mapping = (v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, text(x)]))
      : undefined;
  const env = mapping(entry.env);
  const headers = mapping(entry.headers);
  return {
    ...(typeof entry.url === "string" ? { url: entry.url } : {}),
    ...(Array.isArray(entry.args) ? { args: entry.args.map(text) } : {}),
    ...(env === undefined ? {} : { env }),
    ...(headers === undefined ? {} : { headers }),
  };
}

const holdsCredential = (written: WrittenCredentials): boolean =>
  written.env.length + written.headers.length + written.urls.length > 0;

/** A credential written out in config.yaml: say where secrets go instead (the value is not echoed). */
function secretNotes(written: WrittenCredentials, configPath: string): string[] {
  const urlNote =
    written.urls.length === 0
      ? []
      : [
          `Note: ${written.urls.join(", ")} ${written.urls.length === 1 ? "holds a credential that is" : "hold credentials that are"} written to ${configPath} as given, so the file is now readable by you only (mode 0600); to keep it in .env instead, write that part as \${NAME} (e.g. postgresql://user:\${DB_PASSWORD}@host/db, ?api_key=\${API_KEY}, --api-key \${API_KEY}) and set NAME in .env`,
        ];
  const named = [...written.env, ...written.headers];
  if (named.length === 0) return urlNote;
  const variable = (key: string) => key.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
  const header = written.headers[0];
  const example =
    header === undefined
      ? `--env ${named[0]}='\${${named[0]}}'`
      : header.toLowerCase() === "authorization"
        ? `--header '${header}: Bearer \${${variable(header)}}' (or the header's own form)`
        : // An API-key header (X-Api-Key) holds the key alone: a Bearer before it would change the value sent.
          `--header '${header}: \${${variable(header)}}'`;
  const setIn = header === undefined ? named[0] : variable(header);
  return [
    `Note: ${named.join(", ")} ${named.length === 1 ? "is" : "are"} written to ${configPath} as given, so the file is now readable by you only (mode 0600); to keep the secret in .env instead, write e.g. ${example} and set ${setIn} in .env`,
    ...urlNote,
  ];
}

/**
 * An imported entry's credentials written out (the names of the keys, never the values): as for `svc mcp
 * add`, but the fix is an edit of config.yaml, as no option wrote them.
 */
export function importedSecretNote(name: string, written: WrittenCredentials, configPath: string): string[] {
  const places = [
    ...written.env.map((k) => `env.${k}`),
    ...written.headers.map((k) => `headers.${k}`),
    ...written.urls,
  ];
  if (places.length === 0) return [];
  const variable = (key: string) => key.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
  const env = written.env[0];
  const header = written.headers[0];
  const fix =
    env !== undefined
      ? `write it as env.${env}: \${${variable(env)}} and set ${variable(env)} in .env`
      : header !== undefined
        ? `write it as headers.${header}: ${header.toLowerCase() === "authorization" ? "Bearer " : ""}\${${variable(header)}} and set ${variable(header)} in .env`
        : `write that part as \${NAME} (e.g. postgresql://user:\${DB_PASSWORD}@host/db, ?api_key=\${API_KEY}, --api-key \${API_KEY}) and set NAME in .env`;
  return [
    `Note: ${name}: ${places.join(", ")} ${places.length === 1 ? "holds a credential that is" : "hold credentials that are"} written to ${configPath} as given, so the file is now readable by you only (mode 0600); to keep it in .env instead, ${fix}`,
  ];
}

async function afterWrite(names: readonly string[]): Promise<void> {
  const paths = svcPaths(svcHome());
  const first = names[0] ?? "<name>";
  const check = `Check ${names.length === 1 ? "it" : "them"}: svc mcp test ${names.length === 1 ? first : "--all"}`;
  const running = "; the running gateway picks the change up with svc mcp reload";
  const hint = await reloadHint(paths, running);
  process.stdout.write(
    hint?.startsWith(running) === true
      ? `${check}${hint}\n`
      : `${check}\n${hint === undefined ? "" : `${hint}\n`}`,
  );
}

/**
 * A target that is a URL of another scheme (`ws://host/mcp`), a host and port without `http://`
 * (`localhost:8080/mcp`) or a URL with `user:password@` but no scheme: no program, though anything but an
 * http(s) URL would be written as a command. Quoted without its credentials.
 */
export function urlNotCommand(target: string): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(target)?.[1];
  const shown = withoutUrlCredentials(target);
  if (scheme !== undefined)
    return `${shown} is a ${scheme.toLowerCase()}:// URL, not a command: svc reaches remote MCP servers at http:// or https:// URLs (Streamable HTTP, or SSE with --transport sse)`;
  // `[::1]:8080/mcp`: an IPv6 literal in brackets, as URLs write it, names no program either.
  if (/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+(?:\/\S*)?$/.test(target))
    return `${shown} is a host and port without http://, not a command — write http://${shown} (https:// for TLS)`;
  // `user:password@host/mcp`: no program is named so, and written as a command its password would be
  // quoted by every error of the server (`command not found: user:password@...`).
  if (/^[^\s:@/]+:[^\s@/]*@[A-Za-z0-9.-]+(?::\d+)?(?:[/?#]\S*)?$/.test(target))
    return `${shown} is a URL without http://, not a command — write http://${shown} (https:// for TLS)`;
  return undefined;
}

/** `svc mcp add <name> [--transport] [--env K=V] [--header K:V] -- <command or url> [args...]` */
/**
 * `--profile` is no option of the commands that edit `mcp_servers` (`add`, `remove`, `import`): the one
 * config.yaml serves every profile, whose runs connect with their own `.env` and logins. Refused with that
 * instead of a bare "unknown option", before anything is read or written.
 */
export function refuseProfileOption(profile: string | undefined): void {
  if (profile === undefined) return;
  const home = svcPaths(svcHome());
  const named = svcPaths(home.home, profile);
  throw new SvcError(
    "usage",
    `unknown option '--profile': the mcp_servers of ${home.config} serve every profile (one config.yaml for all) — run this without --profile; profile ${profile}'s runs connect to them with their own values: its \${VAR}s in ${named.env}, its OAuth logins with svc mcp login <server> --profile ${profile}`,
  );
}

export async function addServer(name: string, target: string[], options: AddOptions): Promise<void> {
  const loaded = loadConfig();
  const [first, ...args] = target;
  if (first === undefined)
    throw new SvcError(
      "usage",
      "give the server's command or URL after --, e.g. svc mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/notes",
    );
  const isUrl = /^https?:\/\//i.test(first);
  const notCommand = isUrl ? undefined : urlNotCommand(first);
  if (notCommand !== undefined && options.transport !== "http" && options.transport !== "sse")
    throw new SvcError("usage", notCommand);
  const transport = options.transport ?? (isUrl ? "http" : "stdio");
  if (!["stdio", "http", "sse"].includes(transport))
    throw new SvcError("usage", `--transport ${transport}: expected stdio, http or sse`);
  if ((transport === "stdio") === isUrl)
    throw new SvcError(
      "usage",
      transport === "stdio"
        ? `--transport stdio runs a command, but ${withoutUrlCredentials(first)} is a URL — leave --transport out (or give http or sse)`
        : `--transport ${transport} needs a URL (http:// or https://), got ${JSON.stringify(withoutUrlCredentials(first))}`,
    );
  if (isUrl && args.length > 0)
    throw new SvcError("usage", `a URL server takes no arguments after the URL (got ${args.join(" ")})`);
  if (!isUrl && options.header !== undefined)
    throw new SvcError("usage", "--header applies to http and sse servers; a command server takes --env");
  // A URL server starts no process: its env would be unused, and often a credential written out for nothing.
  if (isUrl && options.env !== undefined)
    throw new SvcError(
      "usage",
      `--env applies to command servers (their process environment); a URL server takes --header (e.g. --header 'Authorization: Bearer \${TOKEN}')`,
    );
  const entry: Record<string, unknown> = isUrl
    ? { url: first, ...(transport === "sse" ? { transport: "sse" } : {}) }
    : { command: first, ...(args.length > 0 ? { args } : {}) };
  if (options.env !== undefined) entry.env = options.env;
  if (options.header !== undefined) entry.headers = options.header;
  checkEntry(name, entry, loaded.paths.config);
  const written = writtenCredentials(entry as Parameters<typeof writtenCredentials>[0]);
  const skipped = addServers(
    loaded.paths.config,
    { [name]: entry },
    {
      replace: options.force === true,
      doing: "add",
      holdsCredential: holdsCredential(written),
    },
  );
  if (skipped.length > 0)
    throw new SvcError(
      "usage",
      `${loaded.paths.config}: mcp_servers.${name} already exists — choose another name, or --force to replace it`,
    );
  for (const note of secretNotes(written, loaded.paths.config)) process.stderr.write(`${note}\n`);
  const shared = samePrefixNote(name, existingServerNames(loaded.paths.config));
  if (shared !== undefined) process.stderr.write(`${shared}\n`);
  if (!isUrl)
    for (const note of addedCommandNotes(
      name,
      { command: first, args, ...(options.env === undefined ? {} : { env: options.env }) },
      loaded.paths.config,
    ))
      process.stderr.write(`${note}\n`);
  process.stdout.write(`Added mcp_servers.${shownName(name)} to ${loaded.paths.config}.\n`);
  await afterWrite([name]);
}

/**
 * `svc mcp remove <name>`. The file is edited as YAML without loading the configuration first: the entry
 * to remove is often the one the configuration refuses (a key of another client, a bad value), which would
 * otherwise stop the command that fixes it.
 */
export async function removeServerCommand(name: string): Promise<void> {
  const paths = svcPaths(svcHome());
  // A link to nothing, or into a directory this user may not look into, is named as every command names it,
  // not taken for no config.yaml.
  const exists = isPresent(paths.config, WITHOUT_CONFIG);
  if (!removeServer(paths.config, name)) {
    // No config.yaml because SVC_HOME itself is unusable (a file in its place, a link to nothing): say that.
    const problem = exists ? undefined : homeProblem(paths.home);
    if (problem !== undefined) throw new SvcError("config_unreadable", problem);
    throw new SvcError(
      "usage",
      unknownServerMessage(name, paths.config, exists, exists ? [...existingServerNames(paths.config)] : []),
    );
  }
  process.stdout.write(`Removed mcp_servers.${shownName(name)} from ${paths.config}.\n`);
  const hint = await reloadHint(paths, "The running gateway stops it with svc mcp reload.");
  if (hint !== undefined) process.stdout.write(`${hint}\n`);
}

/**
 * Why each server of an imported file that writes a key twice (the server's name, or a key inside its
 * entry) is skipped: JSON.parse kept the last value, so importing it would lose the other without a word.
 */
function writtenTwice(text: string, format: string, file: string): Map<string, string> {
  const why = new Map<string, string>();
  let paths: string[][];
  try {
    paths = duplicateJsonKeys(text);
  } catch {
    return why; // Nested deeper than the stack: JSON.parse read it, and the entries are checked as usual.
  }
  for (const [top, name, ...inside] of paths) {
    if (top !== format || name === undefined || why.has(name)) continue;
    why.set(
      name,
      inside.length === 0
        ? `it is written twice in ${file} (JSON keeps only the last, so the other would be lost): keep one, or give one another name, and import again`
        : `its ${inside.join(".")} is written twice in ${file} (JSON keeps only the last): keep one and import again`,
    );
  }
  return why;
}

/** The client files `svc mcp import` reads, where they sit in a project directory. */
const CLIENT_FILES = [".mcp.json", join(".vscode", "mcp.json")];

/**
 * Why `svc mcp import <file>` cannot read `file`: a path to nothing, or a project directory given for its
 * file (the client files in it named), said so rather than as JSON that cannot be read.
 */
function importFileProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT")
    return `${file}: no such file — give the path of Claude Code's .mcp.json or VS Code's mcp.json`;
  if (code === "EISDIR") {
    const found = CLIENT_FILES.map((name) => join(file, name)).filter((path) => existsSync(path));
    return found.length === 0
      ? `${file}: a directory — give the file: Claude Code's .mcp.json or VS Code's mcp.json (neither is in it)`
      : `${file}: a directory — give the client's file in it: ${found.map((path) => `svc mcp import ${path}`).join(", or ")}`;
  }
  return `${file}: cannot be read (${(err as Error).message})`;
}

/** `svc mcp import <file>`: Claude Code's `.mcp.json` or VS Code's `mcp.json`. */
export async function importServers(file: string, options: { force?: boolean }): Promise<void> {
  const loaded = loadConfig();
  let document: unknown;
  let text: string;
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (err) {
    throw new SvcError("usage", importFileProblem(file, err));
  }
  try {
    // A leading byte order mark (a file saved as "UTF-8 with BOM" on Windows), which JSON.parse refuses
    // and the editors that write these files ignore.
    text = stripJsonComments(raw.replace(/^\uFEFF/, ""));
    document = JSON.parse(text);
  } catch (err) {
    throw new SvcError("usage", `${file}: cannot be read as JSON (${(err as Error).message})`);
  }
  let imported: ReturnType<typeof importedServers>;
  try {
    imported = importedServers(document, file);
  } catch (err) {
    throw new SvcError("usage", (err as Error).message);
  }
  const valid: Record<string, Record<string, unknown>> = {};
  const problems: string[] = [];
  const twice = writtenTwice(text, imported.format, file);
  for (const [name, entry] of Object.entries(imported.entries)) {
    const written = twice.get(name);
    if (written !== undefined) {
      problems.push(`${shownName(name)}: skipped — ${written}`);
      continue;
    }
    try {
      checkEntry(name, entry, loaded.paths.config);
      valid[name] = entry;
    } catch (err) {
      problems.push(`${shownName(name)}: skipped — ${(err as Error).message}`);
    }
  }
  for (const [name, why] of Object.entries(imported.refused))
    problems.push(`${shownName(name)}: skipped — ${twice.get(name) ?? why}`);
  // Each note is said with what the file holds escaped (a value quoted from it, an other client's variable).
  for (const note of [...imported.notes, ...problems]) process.stderr.write(`Note: ${terminalText(note)}\n`);
  const names = Object.keys(valid);
  if (names.length === 0) {
    process.stdout.write(`Nothing imported from ${file}.\n`);
    if (problems.length > 0) process.exitCode = 1;
    return;
  }
  // Only the entries written count: one left as it is (already there, no --force) writes nothing.
  const writing = Object.entries(valid).filter(
    ([name]) => options.force === true || !Object.hasOwn(loaded.config.mcp_servers, name),
  );
  const written = writing.map(([name, entry]) => [name, writtenCredentials(textValues(entry))] as const);
  const credential = written.some(([, w]) => holdsCredential(w));
  const skipped = addServers(loaded.paths.config, valid, {
    replace: options.force === true,
    doing: "import",
    holdsCredential: credential,
  });
  const added = names.filter((n) => !skipped.includes(n));
  for (const [name, w] of written)
    if (added.includes(name))
      for (const note of importedSecretNote(name, w, loaded.paths.config))
        process.stderr.write(`${terminalText(note)}\n`);
  const order = added.length > 0 ? existingServerNames(loaded.paths.config) : new Set<string>();
  for (const name of added) {
    const shared = samePrefixNote(name, order);
    if (shared !== undefined) process.stderr.write(`${shared}\n`);
    const entry = valid[name];
    if (typeof entry?.command === "string") {
      const { args = [], env } = textValues(entry);
      const command = { command: entry.command, args, ...(env === undefined ? {} : { env }) };
      // The command and arguments as the file wrote them.
      for (const note of addedCommandNotes(name, command, loaded.paths.config))
        process.stderr.write(`${terminalText(note)}\n`);
    }
  }
  if (added.length > 0)
    process.stdout.write(
      `Imported ${added.join(", ")} from ${file} (${imported.format}) into ${loaded.paths.config}.\n`,
    );
  if (skipped.length > 0)
    process.stdout.write(
      `Already in ${loaded.paths.config}, left as they are: ${skipped.join(", ")} (--force replaces them).\n`,
    );
  if (added.length > 0) await afterWrite(added);
}
