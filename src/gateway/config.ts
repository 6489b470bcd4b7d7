import { ConfigInvalidError, type LoadedConfig, loadConfig } from "../config/load.js";
import type { HostSource } from "../config/validate.js";
import { SvcError } from "../errors.js";
import { startupProblems } from "./startupProblems.js";
import type { GatewayOptions } from "./types.js";

/**
 * The config, refused (startup_refused) with every problem that keeps the gateway from starting, judged for
 * `options.host` when given (named as `hostSource` says: `--host` unless told otherwise).
 */
export function checkedConfig(
  options: GatewayOptions,
  runningFromFile = false,
  hostSource?: HostSource,
): LoadedConfig {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({
      ...(options.home === undefined ? {} : { home: options.home }),
      ...(options.env === undefined ? {} : { env: options.env }),
      runningFromFile,
    });
  } catch (err) {
    throw withStartupProblems(err, options.host, hostSource);
  }
  const problems = startupProblems(loaded.config, loaded.paths.config, options.host, hostSource);
  if (problems.length > 0) throw new SvcError("startup_refused", problems.join("\n"));
  return loaded;
}

/**
 * A config.yaml the schema refused, its message followed by the startup rules' problems with what of it
 * could still be checked (other routes and sections), so one pass names them all; any other error as it is.
 */
export function withStartupProblems(err: unknown, host?: string, hostSource?: HostSource): unknown {
  if (!(err instanceof ConfigInvalidError) || err.checkable === undefined) return err;
  const problems = startupProblems(err.checkable, err.file, host, hostSource);
  return problems.length === 0
    ? err
    : new ConfigInvalidError([err.message, ...problems].join("\n"), err.file, undefined);
}

/** Past this many routes, a log line names the first of them and counts the rest. */
export const ROUTES_NAMED = 50;

/**
 * The route names of a log line: every one up to ROUTES_NAMED, else the first of them and how many more (a
 * setup of thousands of subscriptions made one line of tens of thousands of characters at each start).
 */
export function describeRoutes(names: readonly string[]): string {
  if (names.length === 0) return "(none)";
  if (names.length <= ROUTES_NAMED) return names.join(", ");
  return `${names.slice(0, ROUTES_NAMED).join(", ")} and ${names.length - ROUTES_NAMED} more (${names.length} in all: svc webhook list names them)`;
}
