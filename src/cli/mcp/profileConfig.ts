import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { profileFlag, type SvcPaths, svcPaths } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { newProfileTypo, unusableProfileEntry } from "../../io/profiles.js";

/**
 * The paths of `profile` for an `svc mcp` command that reads or writes its files (tokens, tool cache). A
 * `profiles/<name>` that is a link to nothing or a file is refused (exit 2) in the words the start and `svc
 * cron` use, before any login or connect: its files could not be written there (a raw `ENOENT ... mkdir`
 * after the whole browser login), or would make the directory a moved link pointed to.
 */
export function profilePaths(home: string, profile: string | undefined): SvcPaths {
  const paths = svcPaths(home, profile);
  const unusable = unusableProfileEntry(home, paths.profile);
  if (unusable !== undefined) throw new SvcError("usage", unusable);
  return paths;
}

/**
 * The configuration as a connect of `profile` sees it, for `svc mcp call`, `tools` and `test --profile`:
 * the one config.yaml, with the profile's own `.env`, OAuth logins and tool cache, as the gateway's runs of
 * that profile connect. A name that is not a profile name is refused (exit 2); one that has no directory and
 * is one or two letters from a profile that has one is warned about on stderr, since its connect would use
 * (and an OAuth login would store) values of a profile no route or cron job is bound to.
 */
export function loadForProfile(profile: string | undefined, command: string): LoadedConfig {
  const loaded = loadConfig();
  const paths = profilePaths(loaded.paths.home, profile);
  if (paths.profile === undefined) return loaded;
  const meant = newProfileTypo(paths.home, paths.profile);
  if (meant !== undefined)
    process.stderr.write(
      `warning: profile ${paths.profile} has no directory (${paths.root}) — did you mean ${meant}? This connects with profile ${paths.profile}'s .env and logins; for ${meant}: ${command}${profileFlag(meant)}\n`,
    );
  return { ...loaded, paths };
}

/**
 * `svc mcp list --profile`: the list is the default profile's (the running gateway's status, or a check of
 * each server), so a named profile's servers are checked with `svc mcp test --all --profile <name>` instead.
 */
export function refuseListProfile(profile: string | undefined): void {
  if (profile === undefined) return;
  const named = svcPaths(undefined, profile).profile;
  if (named === undefined) return;
  throw new SvcError(
    "usage",
    `unknown option '--profile': svc mcp list shows the default profile's connections — for profile ${named}'s: svc mcp test --all --profile ${named}`,
  );
}
