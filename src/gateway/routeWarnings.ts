import { join } from "node:path";
import { KNOWN_TOOLSETS, runToolsets, WEBHOOK_TOOLSET } from "../actors/agent/index.js";
import { DEFAULT_WEBHOOK_TOOLSETS } from "../actors/agent/runner.js";
import { skillNameProblem } from "../actors/agent/skills.js";
import { sanitize } from "../actors/mcp/toolNames.js";
import {
  missingReferenceWarnings,
  type ReferenceDeps,
  referenceWarnings,
} from "../actors/routeReferences.js";
import type { RouteTable } from "../actors/routes.js";
import { BUILTIN_TOOLSETS } from "../agent/tools/index.js";
import { describe } from "../config/describe.js";
import { givenBy } from "../config/givenValues.js";
import { nearMiss } from "../config/nearMiss.js";
import { DEFAULT_PROFILE, type SvcPaths, svcPaths } from "../config/paths.js";
import { type ProfileBindingOptions, profileBindingWarnings } from "../config/profileWarnings.js";
import { secretCharacterWarnings } from "../config/secretWarnings.js";
import { type Route, routeKey } from "../config/sections/webhook.js";
import { profilesOnDisk } from "../io/profiles.js";
import { cronStore } from "../io/stores/cronStore.js";
import { unusableCronStore } from "../io/stores/unusableCronStore.js";
import { canonicalTarget } from "../io/targets/names.js";
import { idleRouteKeyWarnings, subscriptionWarnings } from "./idleRouteKeys.js";
import { shownNames } from "./webhookStartupWarnings.js";

/**
 * A route's `toolsets` name that is neither a built-in toolset nor a configured MCP server: a run drops
 * it; named here at startup and each reload, with the likely spelling (runs do not say it again).
 */
export function toolsetWarnings(table: RouteTable, mcpServers: readonly string[], file: string): string[] {
  return unknownToolsetWarnings(
    [...table.staticRoutes].map(([name, { route }]) => ({
      at: `${file}: ${routeKey(name, route)}`,
      toolsets: route.toolsets,
    })),
    mcpServers,
  ).map((warning) => `[webhook] ${warning}`);
}

/**
 * Adds to `warned` the `<route>\u0000<toolset>` of each unknown toolset name a load's warning named for
 * the route, so its runs do not say it again (`warnedToolsets` of the run executor): once per route.
 */
export function toolsetsWarnedAtLoad(
  warned: Set<string>,
  name: string,
  toolsets: readonly string[] | undefined,
  mcpServers: readonly string[],
): void {
  if (toolsets === undefined) return;
  runToolsets(
    toolsets,
    (toolset) => warned.add(`${name}\u0000${toolset}`),
    (server) => mcpServers.includes(server),
  );
}

/**
 * An MCP server named like a built-in toolset (`terminal`, `web`, `web_search`, ...): in a run's toolsets
 * a server's name picks that server, so the name no longer brings the built-in tool, and (naming a
 * server) leaves out every other server. A default-set name (`web_search`, `clarify`, ...) does that to
 * every route without `toolsets` and to every cron job. Said at start, since nothing else shows it.
 */
export function shadowedToolsetWarnings(mcpServers: readonly string[], file: string): string[] {
  const defaults: readonly string[] = DEFAULT_WEBHOOK_TOOLSETS;
  return mcpServers
    .filter((name) => BUILTIN_TOOLSETS.has(name))
    .map((name) => {
      const byDefault = defaults.includes(name)
        ? ` — the default set of routes without toolsets and of cron jobs names ${name} too, so they get this server alone`
        : "";
      return `[webhook] ${file}: mcp_servers.${name}: the name is also a built-in toolset: in a route's toolsets it picks this server instead of the built-in ${name} tool, and as a server name it leaves out every server the list does not name${byDefault}. Rename the server (e.g. ${name}_mcp) to keep both`;
    });
}

/** A route's `skills` entry that is a path, not a skill name: never loaded (said at each run's first event too). */
export function skillNameWarnings(table: RouteTable, file: string): string[] {
  return [...table.staticRoutes].flatMap(([name, { route }]) =>
    (route.skills ?? []).flatMap((skill, i) => {
      // One a `${VAR}` gave is quoted as the file writes it.
      const given = givenBy(route.skills, i);
      const problem = skillNameProblem(skill, given !== undefined);
      return problem === undefined
        ? []
        : [`[webhook] ${file}: ${routeKey(name, route)}.skills: ${describe(given ?? skill)} is ${problem}`];
    }),
  );
}

/**
 * What each load of the subscriptions logs at WARN about one served record: `subscriptionWarnings`, its
 * delivery target's problems (an unknown `deliver`, a platform not enabled: each delivery fails), then
 * the unknown names of its `toolsets` and the `skills` entries that are no skill name (a path), which a
 * config.yaml route gets named at start; otherwise only its first run would say it dropped them. A record
 * a config.yaml route of the same name shadows is named as such instead (static routes win).
 */
export function servedSubscriptionWarnings(
  route: Route,
  name: string,
  binding: () => ProfileBindingOptions,
  mcpServers: readonly string[],
  /** config.yaml's routes (and the file): one of the same name wins, so the record is never served. */
  config?: { readonly routes: Readonly<Record<string, Route>>; readonly file: string },
  /** Its toolsets' MCP servers with `enabled: false`, said as `disabledServerToolsets` says them. */
  disabledServers: (toolsets: readonly string[] | undefined) => readonly string[] = () => [],
  /** Its delivery target's problems (`deliver: unknown target ...`), as `routeTargetProblems` says them. */
  targetProblems: (route: Route) => readonly string[] = () => [],
): string[] {
  if (config !== undefined && Object.hasOwn(config.routes, name))
    return [
      `not served: ${config.file} has a route of the same name (${routeKey(name, config.routes[name] as Route)}), which wins — rename one of them, or svc webhook remove ${name}`,
    ];
  return [
    ...subscriptionWarnings(route, name, binding),
    ...targetProblems(route),
    ...toolWarnings(route, mcpServers, disabledServers),
  ];
}

/**
 * The unknown names of a subscription's `toolsets`, the MCP servers among them with `enabled: false`, and the
 * `skills` entries that are no skill name (a path): keys only a hand edit writes, which each load of the
 * subscriptions names and `svc webhook subscribe` names when it writes the record.
 */
export function toolWarnings(
  route: Route,
  mcpServers: readonly string[],
  disabledServers: (toolsets: readonly string[] | undefined) => readonly string[],
): string[] {
  return [
    ...unknownToolsetWarnings([{ at: "", toolsets: route.toolsets }], mcpServers),
    ...(route.deliver_only === true || route.cron_job !== undefined
      ? []
      : disabledServers(route.toolsets).map((problem) => `toolsets: ${problem}`)),
    ...(route.skills ?? []).flatMap((skill) => {
      const problem = skillNameProblem(skill);
      return problem === undefined ? [] : [`skills: "${skill}" is ${problem}`];
    }),
  ];
}

/**
 * The configured server and tool a registered tool name (`mcp__<server>__<tool>`, the server's name
 * sanitized) names; the longest server prefix decides, as `mcp__a__b__x` may be `a`'s `b__x` or `a__b`'s `x`.
 */
function registeredToolOf(
  name: string,
  mcpServers: readonly string[],
): { readonly server: string; readonly tool: string } | undefined {
  const [server] = mcpServers
    .filter((s) => name.startsWith(`mcp__${sanitize(s)}__`) && name.length > `mcp__${sanitize(s)}__`.length)
    .sort((a, b) => sanitize(b).length - sanitize(a).length);
  return server === undefined ? undefined : { server, tool: name.slice(`mcp__${sanitize(server)}__`.length) };
}

/**
 * `toolsetWarnings` for any routes (`at`: `<file>: <key path>`, or empty for the bare `toolsets` key),
 * such as hand-edited subscriptions.
 */
export function unknownToolsetWarnings(
  routes: Iterable<{ readonly at: string; readonly toolsets: readonly string[] | undefined }>,
  mcpServers: readonly string[],
): string[] {
  const known = [...KNOWN_TOOLSETS, WEBHOOK_TOOLSET, ...mcpServers];
  const warnings: string[] = [];
  for (const { at, toolsets } of routes) {
    // Dropped, a name meant for one server (`githb`) leaves a list that names none: every server is offered.
    const namesServer = (toolsets ?? []).some((t) => t === "no_mcp" || mcpServers.includes(t));
    const widens =
      mcpServers.length > 0 && !namesServer
        ? ", so its runs are offered every enabled MCP server, as a route that names none is"
        : "";
    for (const [i, toolset] of (toolsets ?? []).entries()) {
      if (known.includes(toolset)) continue;
      // A server's name as its tools' registered names write it (`a_b` for `a-b`), short ones included.
      const server = mcpServers.find((name) => sanitize(name) === toolset);
      // A tool's registered name (`mcp__notes__add`, as `svc mcp tools` prints it): its server is meant.
      const tool = server === undefined ? registeredToolOf(toolset, mcpServers) : undefined;
      const meant = server ?? tool?.server ?? nearMiss(toolset, known);
      const why =
        server !== undefined
          ? ` (toolsets name a server as mcp_servers writes it; ${toolset} is how its tools' registered names write it, mcp__${toolset}__<tool>)`
          : tool !== undefined
            ? ` (toolsets name MCP servers; to offer only this tool, list it in mcp_servers.${tool.server}.tools.include: [${tool.tool}])`
            : "";
      warnings.push(
        `${at === "" ? "" : `${at}.`}toolsets: unknown toolset ${describe(givenBy(toolsets, i) ?? toolset)}${meant === undefined ? "" : ` — did you mean ${meant}?${why}`}; runs of the route drop it${widens} (known: ${[WEBHOOK_TOOLSET, ...KNOWN_TOOLSETS].join(", ")}, or an mcp_servers name)`,
      );
    }
  }
  return warnings;
}

/**
 * What the gateway says about its static routes at start and at each reload, and `svc config check`
 * prints: `now`, from the configuration alone; `references`, once the scripts and cron jobs the routes
 * name were looked for. `adapterOn`: the webhook adapter serves subscriptions, which fall back to the
 * global secret, so it is judged even when every static route has a secret of its own.
 */
export function staticRouteWarnings(
  table: RouteTable,
  paths: SvcPaths,
  mcpServers: readonly string[],
  adapterOn = false,
): { readonly now: string[]; readonly references: Promise<string[]> } {
  return {
    now: [
      ...profileBindingWarnings(table.staticRoutes.values(), {
        file: paths.config,
        multiplex: table.multiplexProfiles,
        profiles: profilesOnDisk(paths.home),
        profilesDir: join(paths.home, "profiles"),
      }),
      ...secretCharacterWarnings(
        table.staticRoutes.values(),
        paths.config,
        table.globalSecretKey,
        adapterOn ? table.globalSecret : undefined,
        table.globalSecretWriting,
      ),
      ...toolsetWarnings(table, mcpServers, paths.config),
      ...shadowedToolsetWarnings(mcpServers, paths.config),
      ...skillNameWarnings(table, paths.config),
      ...idleRouteKeyWarnings(table, paths.config),
    ],
    references: routeReferenceWarnings(table, paths),
  };
}

/**
 * The `references` of staticRouteWarnings alone: what `svc config check` still says of the routes a
 * config.yaml with key or type errors leaves checkable, since they read nothing but the routes themselves.
 */
export function routeReferenceWarnings(table: RouteTable, paths: SvcPaths): Promise<string[]> {
  return missingReferenceWarnings(table, { configFile: paths.config, ...referenceDeps(paths) });
}

/** Where a profile's scripts, `in_file` lists and cron jobs are, for the reference checks. */
function referenceDeps(paths: SvcPaths): Omit<ReferenceDeps, "configFile"> {
  const profile = (name: string) => svcPaths(paths.home, name);
  return {
    scriptsDir: (name) => profile(name).scripts,
    profileRoot: (name) => profile(name).root,
    cronStore: (name) => ({ store: cronStore(profile(name).cronJobs), path: profile(name).cronJobs }),
    unusableCronStore: (name) => unusableCronStore(paths.home, name),
  };
}

/**
 * A served subscription's `script`, `cron_job` and `in_file` lists that are not there (or cannot be used),
 * said at each load of the store (`where`) as a config.yaml route's are at start: `<store>: <name>.script:
 * nope.py — script not found ...`, the lines `svc config check` prints for it.
 */
export function subscriptionReferenceWarnings(
  route: Route,
  name: string,
  where: string,
  paths: SvcPaths,
): Promise<string[]> {
  return referenceWarnings(
    [{ at: `${where}: ${name}`, route, profile: route.profile ?? DEFAULT_PROFILE }],
    referenceDeps(paths),
  );
}

/**
 * The `log` target writes each reply as an INFO line: under a log level above INFO (`SVC_LOG_LEVEL=warn`)
 * the replies of the routes that deliver there would be written nowhere, without a word.
 */
export function hiddenLogDeliveriesWarning(
  table: RouteTable,
  level: string,
  file: string,
): string | undefined {
  const names = [...table.staticRoutes.values()]
    .filter(({ route }) => route.cron_job === undefined && canonicalTarget(route.deliver) === "log")
    .map(({ name }) => name);
  if (names.length === 0) return undefined;
  return `[webhook] ${names.length} route(s) in ${file} (${shownNames(names)}) deliver to log, which writes each reply at INFO, but the log level is ${level}: their replies are written nowhere — set SVC_LOG_LEVEL=info, or give them another deliver target`;
}
