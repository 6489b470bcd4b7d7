import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { svcPaths } from "../config/paths.js";
import { writtenInlineCredentials } from "./mcp/entrySecrets.js";
import { profilesOnDisk } from "./profiles.js";
import { redisUrlHoldsCredential } from "./state/redis/connection.js";

/**
 * The files under `$SVC_HOME` that hold secrets: every profile's `.env` and `mcp-tokens/` (tokens and
 * client registrations; the cached discovery metadata holds none), and the subscription store.
 */
export function secretFiles(home: string): string[] {
  const files: string[] = [];
  for (const profile of profilesOnDisk(home)) {
    const paths = svcPaths(home, profile);
    files.push(paths.env);
    let names: string[];
    try {
      names = readdirSync(paths.mcpTokens);
    } catch {
      names = []; // no login in this profile
    }
    for (const name of names.sort())
      if (name.endsWith(".json") && !name.endsWith(".meta.json")) files.push(join(paths.mcpTokens, name));
  }
  files.push(svcPaths(home).subscriptions);
  return files;
}

/**
 * svc writes its secret files 0600, but one created by hand (or copied, or restored from a backup) may
 * be readable by every user of the machine. One warning per such file, with the command that fixes it;
 * `svc config check` prints them and the gateway logs them at start.
 */
export function secretFilesReadableByOthers(files: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const file of files) {
    let mode: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) continue;
      mode = stat.mode & 0o777;
    } catch {
      continue; // absent: nothing to expose
    }
    if ((mode & 0o077) === 0) continue;
    // Write bits alone (0620, 0602) let others change the secrets, not read them: said as it is.
    const exposed = (mode & 0o044) !== 0 ? "readable" : "writable";
    warnings.push(
      `${file} holds secrets but is ${exposed} by other users (mode ${mode.toString(8).padStart(4, "0")}) — chmod 600 ${file}`,
    );
  }
  return warnings;
}

/** Key names that hold a credential (as config messages hide their values). */
const CREDENTIAL_KEY = /(?:^|_)(?:secret|token|password)$|^(?:api_key|authorization)$/i;

/** An `mcp_servers` entry's `env`/`headers` name that holds a credential (as svc mcp add and the redaction read them). */
const MCP_CREDENTIAL_NAME = /key|token|secret|pass|auth|cred|session|cookie/i;

/** A value written out, not (or not only) a `${VAR}` reference. */
const writtenOut = (value: unknown): value is string =>
  typeof value === "string" && value.trim() !== "" && !value.includes("${");

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const stringsOf = (value: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));

/**
 * The places of one `mcp_servers` entry that hold a credential written out, by the rules svc mcp add and
 * the redaction use: a credential-named `env` or `headers` value (`OPENAI_API_KEY`, `X-Api-Key`,
 * `X-Auth-Token`), the url's password or `?api_key=`, a URL's password or a credential option's value
 * in `args`; then the entry's other keys (`oauth.client_secret`) as any config key.
 */
function mcpEntryPaths(entry: unknown, at: string): string[] {
  if (!isMapping(entry)) return writtenSecretPaths(entry, at);
  const { env, headers, ...rest } = entry;
  const paths: string[] = [];
  // A number (`X-Api-Key: 123456`, read as the text it is written as) is a credential written out too.
  for (const [section, values] of [
    ["env", env],
    ["headers", headers],
  ] as const) {
    if (!isMapping(values)) continue;
    for (const [name, value] of Object.entries(values))
      if (MCP_CREDENTIAL_NAME.test(name) && (writtenOut(value) || typeof value === "number"))
        paths.push(`${at}.${section}.${name}`);
  }
  const inline = writtenInlineCredentials({
    ...(typeof entry.url === "string" ? { url: entry.url } : {}),
    ...(typeof entry.command === "string" ? { command: entry.command } : {}),
    ...(Array.isArray(entry.args)
      ? { args: entry.args.filter((a): a is string => typeof a === "string") }
      : {}),
    ...(isMapping(env) ? { env: stringsOf(env) } : {}),
  });
  paths.push(...inline.map((place) => `${at}.${place}`));
  paths.push(...writtenSecretPaths(rest, at));
  return paths;
}

/**
 * The key paths of a parsed config.yaml that hold a credential written out: not a `${VAR}` (kept in
 * `.env`), not `INSECURE_NO_AUTH`, not a `whpk_` public key. `mcp_servers` entries are read as svc mcp
 * add reads them, and a `state.redis_url` with a password (`user:password@`, `?password=`) counts.
 */
export function writtenSecretPaths(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => writtenSecretPaths(item, `${at}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  const paths: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const path = at === "" ? key : `${at}.${key}`;
    if (path === "mcp_servers" && isMapping(item)) {
      for (const [name, entry] of Object.entries(item))
        paths.push(...mcpEntryPaths(entry, `${path}.${name}`));
    } else if (path === "state.redis_url" && writtenOut(item)) {
      if (redisUrlHoldsCredential(item)) paths.push(path);
    } else if (typeof item === "string" && CREDENTIAL_KEY.test(key)) {
      if (
        item.trim() !== "" &&
        !item.includes("${") &&
        item !== "INSECURE_NO_AUTH" &&
        !item.startsWith("whpk_")
      )
        paths.push(path);
    } else paths.push(...writtenSecretPaths(item, path));
  }
  return paths;
}

/**
 * A config.yaml with a credential written in it (a route's `secret: s3cret`, a platform's token) and a
 * mode every user can read (0644, as an editor creates it): named at start and by `svc config check`, as
 * a readable `.env` is. One whose credentials are all `${VAR}` holds none.
 */
export function configSecretsReadableByOthers(file: string): string | undefined {
  let text: string;
  let mode: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile() || (stat.mode & 0o077) === 0) return undefined;
    mode = stat.mode & 0o777;
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  let paths: string[];
  try {
    paths = writtenSecretPaths(parse(text));
  } catch {
    return undefined; // the loader names a file it cannot parse
  }
  if (paths.length === 0) return undefined;
  const named = paths.length === 1 ? paths[0] : `${paths[0]} and ${paths.length - 1} more`;
  return `${file} holds secrets (${named}) but is readable by other users (mode ${mode.toString(8).padStart(4, "0")}) — chmod 600 ${file}, or keep them in .env and write \${NAME} in their place`;
}
