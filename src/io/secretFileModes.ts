import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
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
