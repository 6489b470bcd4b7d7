import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { readEnvFile } from "./envFile.js";
import { profileNameProblem, svcPaths } from "./paths.js";

/**
 * Said after an unset `${name}` of config.yaml's `agent` section: the named profiles' `.env` files that set it.
 * A user with profiles may put the model's key in one, which serves only that profile's MCP connections, and
 * would otherwise be told to set a variable they see set. Empty when none does.
 */
export function setInAProfileEnv(file: string, name: string): string {
  const home = dirname(file);
  let profiles: string[];
  try {
    profiles = readdirSync(join(home, "profiles")).sort();
  } catch {
    return "";
  }
  const setting = profiles
    .filter((profile) => profileNameProblem(profile) === undefined)
    .map((profile) => svcPaths(home, profile).env)
    .filter((env) => {
      try {
        return Object.hasOwn(readEnvFile(env), name);
      } catch {
        // An unreadable profile .env is named by the profile warnings.
        return false;
      }
    });
  if (setting.length === 0) return "";
  return ` (${setting.join(", ")} ${setting.length === 1 ? "sets" : "set"} it, but config.yaml reads its \${...} values from ${join(home, ".env")} only: a profile's .env serves only that profile's MCP connections)`;
}
