import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { svcPaths } from "../config/paths.js";
import { CREDENTIAL_NAME, writtenInlineCredentials } from "./mcp/entrySecrets.js";
import { profilesOnDisk } from "./profiles.js";

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
    if ((mode & 0o077) !== 0)
      warnings.push(
        `${file} holds secrets but is readable by other users (mode ${mode.toString(8).padStart(4, "0")}) — chmod 600 ${file}`,
      );
  }
  return warnings;
}

/** Key names that hold a credential (as config messages hide their values). */
const CREDENTIAL_KEY = /(?:^|_)(?:secret|token|password)$|^(?:api_key|authorization)$/i;

/** A credential written out: not a `${VAR}` (kept in `.env`), not `INSECURE_NO_AUTH`, not a `whpk_` public key. */
const writtenOut = (value: string): boolean =>
  value.trim() !== "" && !value.includes("${") && value !== "INSECURE_NO_AUTH" && !value.startsWith("whpk_");

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const stringsOnly = (value: unknown): Record<string, string> | undefined =>
  isRecord(value)
    ? Object.fromEntries(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
      )
    : undefined;

/**
 * Where an `mcp_servers` entry as written holds a credential: an `env` or `headers` value under a credential
 * name (`OPENAI_API_KEY`, `X-Api-Key`, `DB_PASS`: key, token, secret, pass, auth, cred, session, cookie, as
 * config messages hide them), and a credential inside its url or arguments (a URL's password, `?api_key=`,
 * `--api-key <key>`), which `svc mcp add` writes with mode 0600 for the same reason.
 */
function mcpEntrySecretPaths(entry: unknown, at: string): string[] {
  if (!isRecord(entry)) return writtenSecretPaths(entry, at);
  const paths: string[] = [];
  for (const [key, item] of Object.entries(entry)) {
    const path = `${at}.${key}`;
    const named = (key === "env" || key === "headers") && isRecord(item);
    if (!named) {
      paths.push(...writtenSecretPaths(item, path));
      continue;
    }
    for (const [name, value] of Object.entries(item)) {
      if (typeof value === "string" && CREDENTIAL_NAME.test(name)) {
        if (writtenOut(value)) paths.push(`${path}.${name}`);
      } else paths.push(...writtenSecretPaths(value, `${path}.${name}`));
    }
  }
  const env = stringsOnly(entry.env);
  const inline = writtenInlineCredentials({
    ...(typeof entry.url === "string" ? { url: entry.url } : {}),
    // A non-text argument counts as empty, so the indexes named are those of the list as written.
    ...(Array.isArray(entry.args) ? { args: entry.args.map((a) => (typeof a === "string" ? a : "")) } : {}),
    ...(env === undefined ? {} : { env }),
  });
  // `args[2] (a URL's password)` → `mcp_servers.pg.args[2]`.
  for (const place of inline) {
    const path = `${at}.${place.replace(/ \(.*\)$/, "")}`;
    if (!paths.includes(path)) paths.push(path);
  }
  return paths;
}

/**
 * The key paths of a parsed config.yaml that hold a credential written out: a credential-named key
 * (`secret`, `token`, `*_token`, `password`, `api_key`, `authorization`), an `mcp_servers` entry's
 * credentials (mcpEntrySecretPaths) and the password of `state.redis_url`.
 */
export function writtenSecretPaths(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => writtenSecretPaths(item, `${at}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  const paths: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const path = at === "" ? key : `${at}.${key}`;
    if (at === "mcp_servers") paths.push(...mcpEntrySecretPaths(item, path));
    else if (typeof item === "string" && CREDENTIAL_KEY.test(key)) {
      if (writtenOut(item)) paths.push(path);
    } else if (path === "state.redis_url" && typeof item === "string") {
      if (writtenInlineCredentials({ url: item }).length > 0) paths.push(path);
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
