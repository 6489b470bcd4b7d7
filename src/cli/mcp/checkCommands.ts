import type { LoadedConfig } from "../../config/load.js";
import { serverNames } from "../../config/serverOrder.js";
import { SvcError } from "../../errors.js";
import { homeProblem } from "../../io/homeWritable.js";
import { formatTable } from "../format.js";
import { parseSecondsOption } from "../options.js";
import { checkServers, describeCheck } from "./check.js";
import { assertConfigInSight } from "./configOutOfSight.js";
import { loadForProfile } from "./profileConfig.js";

/** `--timeout` of the checks: per server, all at once. */
export const DEFAULT_CHECK_SECONDS = 10;

/**
 * What `svc mcp list` (either view) and `svc mcp test --all` print with no server configured: where they
 * looked (a config.yaml that is not there is named so, not as a file without servers) and how to add one; thrown,
 * SVC_HOME's problem alone when this user may not look for the file.
 */
export function noServersLine(loaded: LoadedConfig): string {
  if (loaded.fromFile)
    return `No MCP servers in ${loaded.paths.config} (add one: svc mcp add <name> -- <command>).\n`;
  // One this user may not look into: whether the file is there is unknown, so only that is said.
  assertConfigInSight(loaded.paths.config, loaded.paths.home);
  // An SVC_HOME that cannot hold the file: `svc mcp add` would fail too, so that is what to fix first.
  const home = homeProblem(loaded.paths.home);
  return home !== undefined
    ? `No MCP servers: there is no ${loaded.paths.config}, and ${home}\n`
    : `No MCP servers: there is no ${loaded.paths.config} (svc mcp add <name> -- <command> creates it with the server).\n`;
}

/** Checks the servers and prints `NAME TRANSPORT STATUS`; the number that failed. */
export async function printChecks(
  names: readonly string[] | undefined,
  timeout?: string,
  options: { readonly wakeLazy?: boolean; readonly profile?: string } = {},
): Promise<number> {
  const seconds = timeout === undefined ? DEFAULT_CHECK_SECONDS : parseSecondsOption(timeout);
  const loaded = loadForProfile(options.profile, "svc mcp test --all");
  const all = serverNames(loaded.config.mcp_servers);
  if (all.length === 0) {
    process.stdout.write(noServersLine(loaded));
    return 0;
  }
  const checks = await checkServers(loaded, names ?? all, seconds * 1000, options);
  process.stdout.write(
    `${formatTable([["NAME", "TRANSPORT", "STATUS"], ...checks.map((c) => [c.name, c.transport, describeCheck(c)])])}\n`,
  );
  return checks.filter((c) => c.outcome === "failed").length;
}

/** `svc mcp test --all`: every configured server checked at once; exit 1 when one fails. */
export async function testAll(
  server: string | undefined,
  options: { all?: boolean; timeout?: string; profile?: string },
) {
  if (server !== undefined && options.all === true)
    throw new SvcError(
      "usage",
      `a server name and --all exclude each other: svc mcp test ${server} checks that server, svc mcp test --all every configured one`,
    );
  if (server === undefined && options.all !== true)
    throw new SvcError("usage", "give a server name, or --all to check every configured server");
  const failed = await printChecks(
    undefined,
    options.timeout,
    options.profile === undefined ? {} : { profile: options.profile },
  );
  if (failed > 0) process.exitCode = 1;
}
