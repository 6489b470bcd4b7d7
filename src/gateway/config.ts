import { type LoadedConfig, loadConfig } from "../config/load.js";
import { SvcError } from "../errors.js";
import { startupProblems } from "./startupProblems.js";
import type { GatewayOptions } from "./types.js";

/** The config, refused (startup_refused) with every problem that keeps the gateway from starting. */
export function checkedConfig(options: GatewayOptions, runningFromFile = false): LoadedConfig {
  const loaded = loadConfig({
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.env === undefined ? {} : { env: options.env }),
    runningFromFile,
  });
  const problems = startupProblems(loaded.config, loaded.paths.config, options.host);
  if (problems.length > 0) throw new SvcError("startup_refused", problems.join("\n"));
  return loaded;
}

/** The route names of a log line. */
export function describeRoutes(names: readonly string[]): string {
  return names.length === 0 ? "(none)" : names.join(", ");
}
