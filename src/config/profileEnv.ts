import { envFileProblem } from "./load.js";
import { DEFAULT_PROFILE, svcPaths } from "./paths.js";

/**
 * A named profile's `.env` with a line that sets nothing. Only its MCP connections read that file, at a
 * connect, which never refuses: the start and `svc config check` warn instead, as the default profile's
 * `.env` is refused.
 */
export function profileEnvFileWarnings(home: string, profiles: readonly string[]): string[] {
  return profiles
    .filter((profile) => profile !== DEFAULT_PROFILE)
    .flatMap((profile) => {
      const problem = envFileProblem(svcPaths(home, profile).env);
      return problem === undefined
        ? []
        : [`${problem} (profile ${profile}'s MCP connections read this file)`];
    });
}
