import { unnamedEnvLineWarnings } from "../config/envFile.js";
import type { SvcPaths } from "../config/paths.js";
import {
  profileEnvFileWarnings,
  profileSharedFileWarnings,
  unreadVariableWarnings,
} from "../config/profileEnv.js";
import { profilesOnDisk, unusableProfileEntries } from "../io/profiles.js";
import {
  configSecretsReadableByOthers,
  secretFiles,
  secretFilesReadableByOthers,
} from "../io/secretFileModes.js";
import { placesWritableByOthers } from "../io/writableByOthers.js";

/**
 * What the start logs about the files under SVC_HOME, and each reload again, since a reload reads
 * config.yaml and `.env` anew (a config.yaml created 0644 with a secret in it while the gateway ran): a
 * named profile's `.env` that sets nothing or a `config.yaml` under a profile, which are never read, and
 * secret files (and a config.yaml holding a credential) that other users can read, places that decide what
 * the gateway runs (config.yaml, `.env`, scripts) that other users can write; `WEBHOOK_*` names of `.env`
 * and the environment (`env`) that set nothing, and `.env` lines whose name is no variable's (`1BAD=x`).
 */
export function homeFileWarnings(
  paths: SvcPaths,
  fromFile: boolean,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  const onDisk = profilesOnDisk(paths.home);
  const configSecrets = fromFile ? configSecretsReadableByOthers(paths.config) : undefined;
  return [
    ...unnamedEnvLineWarnings(paths.env),
    ...unreadVariableWarnings(paths.env, paths.config, env),
    ...profileEnvFileWarnings(paths.home, onDisk),
    ...profileSharedFileWarnings(paths.home, onDisk),
    ...unusableProfileEntries(paths.home),
    ...secretFilesReadableByOthers(secretFiles(paths.home)),
    ...(configSecrets === undefined ? [] : [configSecrets]),
    ...placesWritableByOthers(paths.home),
  ].map((warning) => `[gateway] ${warning}`);
}
