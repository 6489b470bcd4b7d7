import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { svcPaths } from "../config/paths.js";
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

/**
 * The key paths of a parsed config.yaml that hold a credential written out: not a `${VAR}` (kept in
 * `.env`), not `INSECURE_NO_AUTH`, not a `whpk_` public key.
 */
export function writtenSecretPaths(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => writtenSecretPaths(item, `${at}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  const paths: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const path = at === "" ? key : `${at}.${key}`;
    if (typeof item === "string" && CREDENTIAL_KEY.test(key)) {
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
