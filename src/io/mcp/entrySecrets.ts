import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { InterpolationScope } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { CREDENTIAL_QUERY_NAME, percentDecoded } from "../../config/urlCredentials.js";
import { describeError, SvcError } from "../../errors.js";
import { authorizationSecrets, scrub } from "../credentials.js";

/** An `env` name that holds a credential (API_KEY, GITHUB_TOKEN, DB_PASSWORD, AUTH, ...). */
const CREDENTIAL_NAME = /key|token|secret|pass|auth|cred|session|cookie/i;

/** The password of a `scheme://user:password@host` inside a value (a DATABASE_URL, a proxy URL). */
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:([^\s@/]+)@/gi;

/**
 * An option naming a credential (`--api-key`, `--token`, `--auth-token=`, `--client-secret`, `--password`),
 * as servers such as Context7 take their key: its value is the rest after `=`, else the next argument.
 */
const CREDENTIAL_OPTION =
  /^--?[A-Za-z0-9_-]*(?:key|token|secret|password|passwd|passphrase|cookie|credential)[A-Za-z0-9_-]*(?:=(.*))?$/is;

/** The credentials given to credential-named options among `args`, with the index of the argument holding each. */
function optionValues(args: readonly string[]): { index: number; value: string }[] {
  const found: { index: number; value: string }[] = [];
  for (const [index, arg] of args.entries()) {
    const option = CREDENTIAL_OPTION.exec(arg);
    if (option === null) continue;
    if (option[1] !== undefined) {
      if (option[1] !== "") found.push({ index, value: option[1] });
      continue;
    }
    const next = args[index + 1];
    if (next !== undefined && next !== "" && !next.startsWith("-"))
      found.push({ index: index + 1, value: next });
  }
  return found;
}

/**
 * `NAME=value`, as a shell or `env` sets a variable: an argument (`command: env`, `args: [GITHUB_TOKEN=...,
 * server]`) or a word of `command` copied from a shell line (`GITHUB_TOKEN=... npx`).
 */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s;

/** The values of credential-named `NAME=value` words, with the index of the word holding each. */
function assignedValues(words: readonly string[]): { index: number; value: string }[] {
  const found: { index: number; value: string }[] = [];
  for (const [index, word] of words.entries()) {
    const assignment = ASSIGNMENT.exec(word);
    if (assignment !== null && CREDENTIAL_NAME.test(assignment[1] as string))
      found.push({ index, value: assignment[2] as string });
  }
  return found;
}

const commandWords = (command: string | undefined): string[] => command?.trim().split(/\s+/) ?? [];

function urlPasswords(value: string): string[] {
  return [...value.matchAll(URL_PASSWORD)].map((m) => percentDecoded(m[1] as string));
}

/** A URL inside a value, up to the next white space or quote. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/**
 * The credential-named query values of each URL inside a value (`https://api.example/v1?api_key=<key>` as an
 * argument, `postgresql://db/app?user=app&password=<password>` as libpq takes it in an `env` value), as the
 * entry's own `url` has its `?api_key=` taken for one.
 */
function urlQueryCredentials(value: string): string[] {
  if (!value.includes("?")) return [];
  const found: string[] = [];
  for (const [text] of value.matchAll(URL_IN_TEXT)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      continue;
    }
    for (const [name, param] of url.searchParams)
      if (param !== "" && CREDENTIAL_QUERY_NAME.test(name)) found.push(param);
  }
  return found;
}

/** The credentials written inside URLs in a value: each URL's password and credential-named query values. */
const urlCredentials = (value: string): string[] => [...urlPasswords(value), ...urlQueryCredentials(value)];

/**
 * The secrets of one header: of an `Authorization` (or `Proxy-Authorization`) header, the credentials
 * after its scheme, whatever the scheme (`authorizationSecrets`: a server may quote them alone), the
 * scheme word staying readable as in the log's own redaction; of another header, the token after a
 * leading `Bearer`/`Basic`/`Token`, else the whole value.
 */
function headerSecrets(name: string, value: string): string[] {
  if (/^(?:proxy-)?authorization$/i.test(name)) {
    const secrets = authorizationSecrets(value);
    return secrets.length > 0 ? secrets : [value];
  }
  const credential = /^\s*(?:Bearer|Basic|Token)\s+(\S+)/i.exec(value)?.[1];
  return [credential ?? value];
}

/**
 * The credentials a rendered MCP entry carries: header values (`headerSecrets`: an Authorization header's
 * credentials after its scheme),
 * credential-named `env` values and url query values (`?api_key=`), the url's password (and the password
 * and credential-named query values of a URL inside an `env` value or an argument), the value of a credential-named option in `args`
 * (`--api-key <key>`, `--token=<token>`; also in a whole command line written in `command`) and of a
 * credential-named `NAME=value` argument or word of `command` (as `env` or a copied shell line sets a
 * variable), the OAuth client secret and the client certificate's
 * key password. A server that echoes one in an error body, or a stdio process that prints one on stderr,
 * must not put it into lastError, the log or `svc mcp test` (no secret in
 * any log line).
 */
export function entrySecrets(entry: McpServerEntry): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(entry.headers ?? {}))
    secrets.push(...headerSecrets(name, value));
  for (const [name, value] of Object.entries(entry.env ?? {})) {
    if (CREDENTIAL_NAME.test(name)) secrets.push(value);
    else secrets.push(...urlCredentials(value));
  }
  // A whole command line written in `command` (`npx -y pkg --api-key <key>`, as some clients and install
  // links write it) carries its arguments, credentials too: its words count as arguments.
  const words = commandWords(entry.command);
  const args = [...words.slice(1), ...(entry.args ?? [])];
  for (const arg of args) secrets.push(...urlCredentials(arg));
  for (const { value } of optionValues(args)) secrets.push(value);
  for (const { value } of assignedValues(entry.args ?? [])) secrets.push(value);
  for (const { value } of assignedValues(words)) secrets.push(value);
  if (entry.url !== undefined) {
    try {
      const url = new URL(entry.url);
      // As render.ts sends it (a % not followed by two hex digits as written).
      if (url.password !== "") secrets.push(percentDecoded(url.password));
      for (const [name, value] of url.searchParams) if (CREDENTIAL_QUERY_NAME.test(name)) secrets.push(value);
    } catch {
      // Not a URL: the connect fails on it with its own message.
    }
  }
  if (entry.oauth?.client_secret !== undefined) secrets.push(entry.oauth.client_secret);
  if (Array.isArray(entry.client_cert) && entry.client_cert[2] !== undefined)
    secrets.push(entry.client_cert[2]);
  // A value written with spaces around it (`X-Api-Key: " k-123 "`, a `.env` line `KEY= k-123`) goes out
  // without them (HTTP drops a header value's), and a server quotes what it got: hidden trimmed too.
  for (const secret of secrets.slice()) {
    const trimmed = secret.trim();
    if (trimmed !== secret && trimmed !== "") secrets.push(trimmed);
  }
  return secrets;
}

/**
 * The credentials a command line carries (`agent.command`, as an entry's `command` and `args` are read):
 * the password and credential query values of a URL in a word, the value of a credential-named option
 * (`--api-key <key>`, `--token=<token>`) and of a credential-named `NAME=value` word, and every value of
 * `dotenv` (the `.env` a `${VAR}` of it was taken from) that a word holds. A program that fails quoting its
 * own command line must not put them into a log line.
 */
export function commandLineSecrets(
  argv: readonly string[],
  dotenv: Readonly<Record<string, string>> = {},
): string[] {
  const secrets = argv.flatMap((word) => urlCredentials(word));
  for (const { value } of optionValues(argv)) secrets.push(value);
  for (const { value } of assignedValues(argv)) secrets.push(value);
  for (const value of Object.values(dotenv))
    if (value.length >= 4 && argv.some((word) => word.includes(value))) secrets.push(value);
  return secrets;
}

/** A value as written that is not (or not only) a `${VAR}` reference: a credential in it is in the file itself. */
const literal = (value: string): boolean => value !== "" && !value.includes("${");

/**
 * Where an entry as written (before `${VAR}` is rendered) holds a credential inside a URL or an argument:
 * the url's password or a credential-named query value (`?api_key=`), the password of a URL in an argument
 * or an `env` value (`postgresql://user:pw@host/db`, as the Postgres server takes it), or the value of a
 * credential-named option (`--api-key <key>`). Named by where it is, never by its value; a file holding one
 * must not stay readable by other users.
 */
export function writtenInlineCredentials(entry: {
  url?: string;
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
}): string[] {
  const places: string[] = [];
  if (entry.url !== undefined) {
    try {
      const url = new URL(entry.url);
      if (literal(urlPasswords(entry.url)[0] ?? "")) places.push("url (its password)");
      for (const [name, value] of url.searchParams)
        if (CREDENTIAL_QUERY_NAME.test(name) && literal(value)) places.push(`url (its ?${name}=)`);
    } catch {
      // Not a URL: the schema refuses it first.
    }
  }
  for (const [index, arg] of (entry.args ?? []).entries())
    if (urlPasswords(arg).some(literal)) places.push(`args[${index}] (a URL's password)`);
  for (const { index, value } of optionValues(entry.args ?? []))
    if (literal(value)) places.push(`args[${index}] (an option's credential)`);
  for (const { index, value } of assignedValues(entry.args ?? []))
    if (literal(value)) places.push(`args[${index}] (a NAME=value credential)`);
  // A whole command line written as `command` (as some clients' configs have it): its words are arguments too.
  const words = commandWords(entry.command);
  if (words.some((word) => urlPasswords(word).some(literal))) places.push("command (a URL's password)");
  if (optionValues(words).some(({ value }) => literal(value)))
    places.push("command (an option's credential)");
  if (assignedValues(words).some(({ value }) => literal(value)))
    places.push("command (a NAME=value credential)");
  for (const [name, value] of Object.entries(entry.env ?? {}))
    if (!CREDENTIAL_NAME.test(name) && urlPasswords(value).some(literal))
      places.push(`env.${name} (a URL's password)`);
  return places;
}

const REFERENCE = /\$\{(?:env:)?([^}]*)\}/g;

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) strings(item, out);
  return out;
}

/**
 * The values an entry as written takes from `${VAR}` that are secrets wherever they end up (an argument,
 * an `env` value of any name): every variable of the profile's `.env` (where secrets may be), and
 * credential-named variables of the process environment (`${GITHUB_TOKEN}`).
 */
export function referencedSecrets(entry: McpServerEntry, scope: InterpolationScope): string[] {
  const secrets: string[] = [];
  for (const text of strings(entry)) {
    for (const match of text.matchAll(REFERENCE)) {
      const name = match[1] as string;
      const fromFile = scope.secrets[name];
      if (fromFile !== undefined) secrets.push(fromFile);
      else if (CREDENTIAL_NAME.test(name) && scope.env[name] !== undefined)
        secrets.push(scope.env[name] as string);
    }
  }
  return secrets;
}

/**
 * An error svc words from the entry's names and paths alone (a TLS file it cannot use), quoting no credential:
 * kept as it is, since a short key password redacted as a substring cut pieces out of the server's name and
 * the paths (`mcp_servers.corp-[redacted]`), and the path shown so told the password.
 */
export class OwnWordsError extends SvcError {}

/**
 * An error whose text quotes one of the entry's credentials (a server echoing what it refused): its text
 * with them redacted, and no cause (error descriptions append causes' messages, which quote the same text).
 */
export function withoutSecrets(err: unknown, secrets: readonly string[]): unknown {
  if (!(err instanceof Error) || err instanceof OwnWordsError) return err;
  const text = describeError(err);
  const message = scrub(text, secrets);
  if (message === text) return err;
  return new SvcError(err instanceof SvcError ? err.code : "mcp_connect", message);
}

/**
 * A tool's error result (`isError`) with the entry's credentials redacted from its text, as a thrown
 * error's are (`withoutSecrets`): a server refusing a call often quotes the token it was given.
 */
export function resultWithoutSecrets(result: CallToolResult, secrets: readonly string[]): CallToolResult {
  if (result.isError !== true) return result;
  const content = result.content.map((block) =>
    block.type === "text" ? { ...block, text: scrub(block.text, secrets) } : block,
  );
  return { ...result, content };
}
