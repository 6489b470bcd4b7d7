import { existsSync, lstatSync } from "node:fs";
import { dirname } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Command, Option } from "commander";
import { McpHub } from "../actors/mcp/hub.js";
import { serverScoped } from "../actors/mcp/runtime.js";
import { terminalApprovals } from "../actors/mcp/terminalApprovals.js";
import { buildToolset } from "../actors/mcp/toolNames.js";
import { oauthProviderFor } from "../actors/oauth/provider.js";
import { runsNote } from "../agent/routeTools.js";
import { secretScope } from "../config/envFile.js";
import { interpolate } from "../config/interpolate.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import { svcHome, svcPaths } from "../config/paths.js";
import {
  isTrusted,
  type McpServerEntry,
  transportKind,
  type UnattendedElicitation,
} from "../config/sections/mcp.js";
import { serverEntries, serverNames } from "../config/serverOrder.js";
import { unusedMcpKeys } from "../config/unusedSettings.js";
import { isConfigProblem, SvcError } from "../errors.js";
import { redactCredentials, scrub } from "../io/credentials.js";
import { gatewayStateFile, readGatewayState } from "../io/gatewayState.js";
import { leaveGoneDirectory } from "../io/goneDirectory.js";
import { unfinishedWork } from "../io/heldSignals.js";
import { entrySecrets } from "../io/mcp/entrySecrets.js";
import { renderToolsPolicy } from "../io/mcp/render.js";
import { readSchemaCache } from "../io/mcp/schemaCache.js";
import { shownName } from "../io/mcp/shownName.js";
import {
  readStatusFile,
  type ServerStatus,
  type StatusFile,
  statusFileIsDirectory,
  statusPath,
} from "../io/mcp/statusFile.js";
import { MOVE_FILE_AWAY, noDirectoryAt } from "../io/noDirectoryAt.js";
import { processStat } from "../io/processAlive.js";
import { fileInPlaceOf } from "../io/stores/atomicFile.js";
import { terminalText } from "../io/terminalText.js";
import { inexactArguments, inexactNumber } from "../streams/jsonNumbers/inexact.js";
import { cliLogger } from "./cliLogger.js";
import { refuseCurlFile } from "./curlFileArgument.js";
import { formatTable } from "./format.js";
import {
  cannotSignal,
  elsewhereSilence,
  findGateway,
  health,
  notRecordedYet,
  type RunningGateway,
  recordedState,
  runningGateway,
  stillStarting,
} from "./gatewayLookup.js";
import { assertHomeInSight } from "./homeInSight.js";
import { listenForInterrupt, raiseAgain } from "./interrupt.js";
import { listenAddress } from "./listenAddress.js";
import { callFailure } from "./mcp/callFailure.js";
import { literalVariablesWarning } from "./mcp/check.js";
import { noServersLine, printChecks, testAll } from "./mcp/checkCommands.js";
import { cliSampler } from "./mcp/cliSampler.js";
import { assertConfigInSight } from "./mcp/configOutOfSight.js";
import {
  allTakenReason,
  type CrossServerView,
  crossServerLines,
  crossServerView,
  hasEarlierServer,
  lostToCrossServer,
} from "./mcp/crossServer.js";
import { configDriftNote } from "./mcp/drift.js";
import {
  type AddOptions,
  addServer,
  collectHeader,
  importServers,
  refuseProfileOption,
  removeServerCommand,
} from "./mcp/edit.js";
import { collectEnv } from "./mcp/envOption.js";
import { loadForProfile, refuseListProfile } from "./mcp/profileConfig.js";
import {
  endedByStop,
  liveProfileHubs,
  outcomesSince,
  printProfileReloads,
  profileReports,
  refusalSince,
  refusedSince,
  stillConnecting,
} from "./mcp/profileReloads.js";
import { endedByLater, type ReadReload, reloadSummaryText } from "./mcp/reloadSummary.js";
import { servedRoutes } from "./mcp/servedRoutes.js";
import { detail } from "./mcp/statusDetail.js";
import { formatTools } from "./mcp/toolsOutput.js";
import { unknownServerMessage } from "./mcp/unknownServer.js";
import { registerMcpAuthCommands } from "./mcpAuth.js";
import { parseElicitationOption, parseSecondsOption } from "./options.js";
import { subscriptionSecrets } from "./subscriptionSecrets.js";

/** The entry named `name`; a name such as `constructor` must not find Object.prototype's member. */
function serverEntry(loaded: LoadedConfig, name: string) {
  return Object.hasOwn(loaded.config.mcp_servers, name) ? loaded.config.mcp_servers[name] : undefined;
}

/**
 * A hub for one CLI command: only the named servers, terminal approvals. The command is the user's own
 * first connect, so it may open a browser login with or without a terminal on stdin — the
 * URL is printed too; the device flow still needs `svc mcp login --flow device` at a terminal.
 */
function cliHub(
  loaded: LoadedConfig,
  names: readonly string[],
  // The stored subscriptions' secrets its sampling runs hide (subscriptionSecrets: Redis's with that backend).
  subscriptions: readonly string[],
  elicitation?: UnattendedElicitation,
  interrupted?: AbortSignal,
): McpHub {
  // Its stdio servers start where the gateway's would, also when the working directory is gone.
  leaveGoneDirectory(loaded.paths.home);
  const servers = Object.fromEntries(
    names.flatMap((n) => {
      const e = serverEntry(loaded, n);
      if (e === undefined) return [];
      // `--elicitation` replaces each server's `elicitation.unattended` for this command.
      return [
        [
          n,
          elicitation === undefined
            ? e
            : { ...e, elicitation: { ...e.elicitation, unattended: elicitation } },
        ],
      ];
    }),
  );
  const unknown = names.filter((n) => serverEntry(loaded, n) === undefined);
  if (unknown.length > 0) {
    if (!loaded.fromFile) assertConfigInSight(loaded.paths.config, loaded.paths.home);
    const known = serverNames(loaded.config.mcp_servers);
    throw new SvcError(
      "usage",
      unknownServerMessage(unknown[0] ?? "", loaded.paths.config, loaded.fromFile, known),
    );
  }
  const logger = cliLogger();
  const hub = new McpHub({
    servers,
    cacheDir: loaded.paths.mcpCache,
    scope: () => secretScope(loaded.paths),
    logger,
    // Its warnings go to stderr (a failed sampling run's reason among them): there is no gateway log.
    logName: "svc's log",
    approvals: terminalApprovals({
      input: process.stdin,
      output: process.stderr,
      ...(interrupted === undefined ? {} : { interrupted }),
    }),
    runner: cliSampler(loaded, subscriptions, logger),
    interactive: true,
    // A server given up (connect_timeout, --timeout, Ctrl-C) is killed at once: the command ends on time.
    killGivenUp: true,
    oauthProviderFor: (server, entry, { interactive }) =>
      oauthProviderFor(server, entry, {
        interactive,
        isTTY: process.stdin.isTTY === true,
        paths: loaded.paths,
        logger,
      }),
  });
  hub.start();
  return hub;
}

function offlineStatus(loaded: LoadedConfig): ServerStatus[] {
  const scope = secretScope(loaded.paths);
  return serverEntries(loaded.config.mcp_servers).map(([name, entry]) => {
    const cache = readSchemaCache(loaded.paths.mcpCache, name, entry);
    // What the gateway would register from it: the filters apply, utility tools count, a name a server
    // listed earlier takes does not; a disabled server registers nothing, whatever an earlier connect cached.
    const own =
      cache === undefined || !entry.enabled
        ? undefined
        : buildToolset(name, cache.tools, cache.capabilities, renderToolsPolicy(entry, scope));
    const view = own === undefined ? undefined : crossServerView(loaded, name, own.tools);
    return {
      name,
      transport: transportKind(entry),
      // A lazy server with a cache is lazy here too: a command registers it from the cache.
      state: !entry.enabled ? "skipped" : entry.lazy && cache !== undefined ? "lazy" : "stopped",
      toolCount: view?.kept.length ?? 0,
      lazy: entry.lazy,
      cached: cache !== undefined,
      // Its own tools that sanitize to one name (x-y, x_y), then those a server listed earlier takes: as the
      // gateway's status shows them.
      collisions: [...(own?.collisions ?? []), ...(view?.collisions ?? [])],
    };
  });
}

async function listServers(options: { check?: boolean; timeout?: string; profile?: string }): Promise<void> {
  refuseListProfile(options.profile);
  // A bad value is a usage error whether or not a check would use it (a gateway running, --no-check).
  if (options.timeout !== undefined) parseSecondsOption(options.timeout);
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig();
  } catch (err) {
    if (!isConfigProblem(err)) throw err;
    if (!(await printedDespiteConfig(err))) throw err;
    return;
  }
  // A gateway of another PID namespace that answers /health writes its status here as one of this one does.
  const gateway = await runningGateway(loaded.paths);
  const pid = gateway?.pid;
  const file = pid === undefined ? undefined : readStatusFile(loaded.paths.mcpCache);
  const live = file !== undefined && file.pid === pid;
  // A gateway that does not answer (suspended, hung) wrote these states last: they are not live.
  const stalled = live && gateway !== undefined ? await notAnswering(loaded, gateway, file) : undefined;
  if (stalled !== undefined) {
    process.stderr.write(`Note: ${stalled}\n`);
    process.exitCode = 1;
  }
  // A running gateway whose status this command cannot read: what follows is not its live status.
  if (pid !== undefined && !live && Object.keys(loaded.config.mcp_servers).length > 0)
    process.stderr.write(
      `Note: ${noLiveStatus(pid, file, statusPath(loaded.paths.mcpCache), options.check !== false)}\n`,
    );
  // No gateway: each enabled server is connected once to show whether it works (--no-check: config only).
  if (!live && options.check !== false) {
    // A lazy server with a schema cache stays unstarted until its first call: shown lazy, not woken.
    await printChecks(undefined, options.timeout, { wakeLazy: false });
    return;
  }
  const statuses = live ? file.servers : offlineStatus(loaded);
  const drift = live
    ? configDriftNote(
        Object.keys(loaded.config.mcp_servers),
        statuses.map((s) => s.name),
      )
    : undefined;
  if (statuses.length === 0) {
    process.stdout.write(
      drift === undefined ? noServersLine(loaded) : `The running gateway has no MCP servers.\n${drift}\n`,
    );
    return;
  }
  printStatusTable(statuses);
  if (drift !== undefined) process.stdout.write(`${drift}\n`);
  if (!live) {
    process.stdout.write(
      `(${pid === undefined ? "no gateway is running" : "not the running gateway's status"}: states are from the configuration, tool counts from the schema cache)\n`,
    );
  }
}

function printStatusTable(statuses: readonly ServerStatus[]): void {
  const rows = [["NAME", "TRANSPORT", "STATE", "TOOLS", "LAZY", "CACHED", "DETAIL"]];
  for (const s of statuses) {
    rows.push([
      s.name,
      s.transport,
      s.state,
      String(s.toolCount),
      s.lazy ? "yes" : "no",
      s.cached ? "yes" : "no",
      detail(s),
    ]);
  }
  process.stdout.write(`${formatTable(rows)}\n`);
}

/**
 * A config.yaml that cannot be loaded (a refused reload's, mid-edit) while a gateway runs: the gateway
 * keeps the config it loaded, and its live status is what the user asks for then. Shown, with the
 * problem (exit 1); false when there is no live status to show.
 */
async function printedDespiteConfig(err: SvcError): Promise<boolean> {
  const paths = svcPaths(svcHome());
  const pid = (await runningGateway(paths).catch(() => undefined))?.pid;
  const file = pid === undefined ? undefined : readStatusFile(paths.mcpCache);
  if (file === undefined || file.pid !== pid) return false;
  if (file.servers.length === 0) process.stdout.write("The running gateway has no MCP servers.\n");
  else printStatusTable(file.servers);
  process.stderr.write(
    `svc: ${terminalText(redactCredentials(err.message))}\nNote: the gateway (pid ${pid}) keeps the config it loaded — above is its live status; fix config.yaml before its next reload or start\n`,
  );
  process.exitCode = 1;
  return true;
}

/**
 * Why the running gateway's status file is not its live status, when it is not: its process is suspended
 * (state T: SIGSTOP, Ctrl-Z), or it does not answer /health at the address gateway.json records (as svc
 * gateway status asks it, within 1 s). A gateway of another PID namespace was asked already (it answered,
 * or began to stop); one that is stopping, or records no listener and is not suspended, is taken to write
 * its status still. Undefined when it answers.
 */
async function notAnswering(
  loaded: LoadedConfig,
  gateway: RunningGateway,
  file: StatusFile,
): Promise<string | undefined> {
  if (gateway.elsewhere !== undefined) return undefined;
  const { pid } = gateway;
  const suspended = processStat(pid)?.state === "T";
  const recorded = recordedState(loaded.paths, pid);
  const asked =
    suspended || recorded === undefined || recorded.port === 0 || recorded.stopping_since !== undefined
      ? undefined
      : await health(recorded.host, recorded.port, recorded.instance);
  if (!suspended && (asked === undefined || asked === "ok")) return undefined;
  const why = suspended
    ? `its process is suspended — kill -CONT ${pid}`
    : `no answer to GET /health at ${listenAddress(recorded?.host ?? "", recorded?.port ?? 0)}${asked === "other" ? " from this gateway (another program answers there)" : ""}: it is hung, or this command does not reach its address — svc gateway status says more`;
  return `the gateway (pid ${pid}) is not answering (${why}) — the states below are those it last wrote, at ${file.updatedAt}`;
}

/** Why `svc mcp list` shows no live status though gateway `pid` runs, and what writes its status again. */
function noLiveStatus(pid: number, file: StatusFile | undefined, path: string, check: boolean): string {
  const shown = check ? "each server checked as with no gateway running" : "the configuration-only view";
  const directory = statusFileIsDirectory(dirname(path));
  if (directory !== undefined)
    return `a gateway is running (pid ${pid}), but ${directory}, so its live status cannot be shown: below is ${shown} — once it is moved, the gateway writes the status file again by itself`;
  // Something other than a directory in mcp-cache's place: no reload writes the file there, the gateway's own tries
  // (every 5 s once a write failed) do once it is fixed.
  const inTheWay = file === undefined && !existsSync(path) ? fileInPlaceOf(dirname(path)) : undefined;
  if (inTheWay !== undefined)
    return `a gateway is running (pid ${pid}), but ${noStatusDirectory(inTheWay, path)}, so its live status cannot be shown: below is ${shown} — ${onceFixed(inTheWay)}, svc mcp reload writes the status file again (as the gateway does by itself within 5 s once a write of it has failed)`;
  const why =
    file !== undefined
      ? `${path} was written by pid ${file.pid}`
      : existsSync(path)
        ? `${path} cannot be read`
        : `${path} is missing`;
  return `a gateway is running (pid ${pid}), but ${why}, so its live status cannot be shown: below is ${shown} — svc mcp reload writes the status file again`;
}

/** When what `noStatusDirectory` names at `at` no longer stands in the way: a link changed, a file moved away. */
function onceFixed(at: string): string {
  if (noDirectoryAt(at).fix === MOVE_FILE_AWAY) return "once it is moved away";
  return isSymbolicLink(at) ? "once the link leads to a directory or is removed" : "once it is removed";
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * What stands in the place of the status file's directory, as the gateway's own log names it: a file to move away,
 * or a link to a device (`mcp-cache -> /dev/null`), whose link is what to change.
 */
function noStatusDirectory(dir: string, path: string): string {
  const { said, fix } = noDirectoryAt(dir);
  const todo = fix === MOVE_FILE_AWAY ? "move it away" : fix;
  return `${said} (${todo}: the gateway makes the directory and writes ${path} in it)`;
}

function printProblems(status: ServerStatus, entry: McpServerEntry | undefined): void {
  // Both quote the server's tool names.
  for (const collision of status.collisions) process.stderr.write(`collision: ${terminalText(collision)}\n`);
  for (const warning of status.warnings ?? []) process.stderr.write(`warning: ${terminalText(warning)}\n`);
  // What `svc config check` and the gateway's start say of keys this server's transport never reads.
  for (const problem of entry === undefined ? [] : unusedMcpKeys(entry))
    process.stderr.write(`warning: mcp_servers.${status.name}: ${problem}\n`);
}

/** A command that needs `server` connected, refused for `enabled: false`: the file and key to change. */
function disabledServer(loaded: LoadedConfig, server: string): SvcError {
  return new SvcError(
    "mcp_config",
    `${loaded.paths.config}: mcp_servers.${server}.enabled is false — set enabled: true to use it`,
  );
}

/**
 * Connects one server (waking a lazy one); a usage or connect error when it does not connect. A failed
 * connect is preceded by what `svc config check` says of the entry's keys: often why it failed (`Bearer
 * $TOKEN` sent as written, `docker run` without `-i`), and a connected server's problems are printed with
 * its tools (printProblems).
 */
async function connected(loaded: LoadedConfig, hub: McpHub, server: string): Promise<ServerStatus> {
  const status = await hub.settled(server, { connect: true });
  if (status.state === "skipped") throw disabledServer(loaded, server);
  if (status.state !== "connected") {
    const entry = serverEntry(loaded, server);
    for (const problem of entry === undefined ? [] : unusedMcpKeys(entry))
      process.stderr.write(`warning: mcp_servers.${shownName(server)}: ${problem}\n`);
    throw new SvcError("mcp_connect", serverScoped(server, status.lastError ?? status.state));
  }
  return status;
}

function noTools(hub: McpHub, server: string, view: CrossServerView): string {
  return terminalText(allTakenReason(view) ?? hub.noToolsReason(server) ?? "none listed");
}

async function listTools(
  server: string,
  options: { schema?: boolean; json?: boolean; profile?: string },
): Promise<void> {
  const loaded = loadForProfile(options.profile, `svc mcp tools ${server}`);
  const hub = cliHub(loaded, [server], await subscriptionSecrets(loaded));
  try {
    const status = await connected(loaded, hub, server);
    const view = crossServerView(loaded, server, hub.toolsOf(server));
    const tools = view.kept;
    if (tools.length === 0 && options.json !== true)
      process.stdout.write(`${shownName(server)}: no tools registered (${noTools(hub, server, view)})\n`);
    else process.stdout.write(formatTools(tools, options));
    if (options.json !== true)
      process.stdout.write(
        runsNote(server, tools, {
          provider: loaded.config.agent.provider,
          routes: await servedRoutes(loaded),
          servers: Object.keys(loaded.config.mcp_servers),
          trusted: isTrusted({
            trust: interpolate(
              String(serverEntry(loaded, server)?.trust ?? "full"),
              secretScope(loaded.paths),
            ).value,
          }),
          approvals: loaded.config.gateway.approvals,
        }),
      );
    printProblems(status, serverEntry(loaded, server));
    for (const line of crossServerLines(server, view)) process.stderr.write(`${terminalText(line)}\n`);
  } finally {
    await hub.stop();
  }
}

/** `svc mcp test <server>`: one connect, what it took and what it registered; exit 1 when it fails. */
async function testServer(
  server: string | undefined,
  options: { all?: boolean; timeout?: string; profile?: string },
): Promise<void> {
  if (server === undefined || options.all === true) return testAll(server, options);
  // `--timeout` bounds each check of `--all`; one server's test connects as the gateway would, bounded
  // by its connect_timeout (and a login by its own five minutes): an ignored value would mislead.
  if (options.timeout !== undefined)
    throw new SvcError(
      "usage",
      `--timeout applies to svc mcp test --all (how long each check may take); svc mcp test ${server} waits as long as the server's connect_timeout allows (mcp_servers.${server}.connect_timeout, default 60 s)`,
    );
  const loaded = loadForProfile(options.profile, `svc mcp test ${server}`);
  const entry = serverEntry(loaded, server);
  // Refused before the `Testing` line, as `svc mcp tools` and `call` refuse it: nothing is tested.
  if (loaded.config.mcp_servers[server]?.enabled === false) throw disabledServer(loaded, server);
  const hub = cliHub(loaded, [server], await subscriptionSecrets(loaded));
  try {
    // The entry as written: a url's `user:password@`, an `?api_key=`, a `Bearer` in an argument stay out of the output.
    const written = entry?.url ?? [entry?.command, ...(entry?.args ?? [])].join(" ");
    // No escape sequence reaches the terminal: an entry may come from an install link, an untrusted text.
    const where = terminalText(
      entry === undefined ? written : scrub(redactCredentials(written), entrySecrets(entry)),
    );
    process.stdout.write(
      `Testing ${shownName(server)} (${entry === undefined ? "?" : transportKind(entry)}: ${where})\n`,
    );
    const started = performance.now();
    const status = await connected(loaded, hub, server);
    const ms = Math.round(performance.now() - started);
    const view = crossServerView(loaded, server, hub.toolsOf(server));
    const tools = view.kept;
    process.stdout.write(
      `  connected in ${ms} ms (protocol era: ${status.era ?? "legacy"})\n  ${tools.length} tool${tools.length === 1 ? "" : "s"} registered${tools.length === 0 ? ` (${noTools(hub, server, view)})` : `: ${tools.map((t) => t.name).join(", ")}`}\n`,
    );
    printProblems(status, serverEntry(loaded, server));
    for (const line of crossServerLines(server, view)) process.stderr.write(`${terminalText(line)}\n`);
    const unset =
      entry === undefined
        ? undefined
        : literalVariablesWarning(entry, secretScope(loaded.paths), loaded.paths.env);
    if (unset !== undefined) process.stderr.write(`warning: ${unset}\n`);
  } finally {
    await hub.stop();
  }
}

type ContentBlock = NonNullable<CallToolResult["content"]>[number];

function base64Bytes(data: unknown): number {
  return typeof data === "string" ? Buffer.from(data, "base64").length : 0;
}

/**
 * One content block for a person. Text blocks and text resources are the server's text, which often quotes
 * what a tool fetched or read: shown as every remote party's text is (`terminalText`), their line breaks
 * (a CRLF as one) and tabs kept, so an escape sequence in them cannot set the clipboard, retitle the
 * window or erase a line and fake output (`--json` gives them as sent). Any other block is the one line
 * svc writes for it (media and resources without their base64), a line break in the server's uri, name or
 * media type shown as `\n`, so they cannot break the line either.
 */
function formatBlock(block: ContentBlock): string {
  if (block.type === "text") return terminalText(block.text.replace(/\r\n/g, "\n"));
  if (block.type === "resource" && "text" in block.resource && typeof block.resource.text === "string")
    return terminalText(block.resource.text.replace(/\r\n/g, "\n"));
  return terminalText(describeBlock(block)).replace(/\n/g, "\\n");
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes — --json prints the data]`;
    case "resource_link":
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ""}]`;
    case "resource": {
      const resource = block.resource as { uri: string; mimeType?: string; blob?: string };
      return `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ""}, ${base64Bytes(resource.blob)} bytes — --json prints the data]`;
    }
    default:
      return JSON.stringify(block);
  }
}

/** What `svc mcp call` prints: each content block on its own line, else (none, or blank text only) the structured content. */
export function formatResult(result: CallToolResult): string {
  const blocks = result.content ?? [];
  // No content to read (none, or only blank text a server adds for older clients): the structured content.
  const blank = blocks.every((block) => block.type === "text" && block.text.trim() === "");
  const lines =
    blank && result.structuredContent !== undefined
      ? [JSON.stringify(result.structuredContent, null, 2)]
      : blocks.map(formatBlock);
  return lines.map((line) => `${line}\n`).join("");
}

/** Parses `--args`: a JSON object, else a usage error naming the problem. */
export function parseToolArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  // `--args "$(cat args.json)"` with the file missing, or `--args "$ARGS"` unset: not a call with no arguments.
  if (text.trim() === "")
    throw new SvcError(
      "usage",
      `--args: empty — give a JSON object (--args '{}' calls the tool with no arguments), or leave --args out`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    refuseCurlFile("--args", text);
    throw new SvcError(
      "usage",
      `--args: not valid JSON (${(err as Error).message}) — pass an object like '{"text":"hi"}'`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SvcError(
      "usage",
      `--args: expected a JSON object like '{"text":"hi"}', got ${JSON.stringify(value)}`,
    );
  }
  // An id past 2^53 or 1e400 would reach the tool as a neighbouring number or null, as in a model run.
  const inexact = inexactNumber(text);
  if (inexact !== undefined) throw new SvcError("usage", `--args: ${inexactArguments(inexact)}`);
  return value as Record<string, unknown>;
}

/**
 * The call, unless the gateway skips the tool for a server listed earlier in `mcp_servers` that registers
 * the same name (`a.b` and `a_b`, both `mcp__a_b__*`): as `svc mcp tools` shows it, read from that server's
 * schema cache, so the command never runs a tool the gateway's runs cannot call, nor another server's
 * tool under a registered name that is the earlier server's.
 */
async function calledUnlessSkipped(
  loaded: LoadedConfig,
  hub: McpHub,
  server: string,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  if (hasEarlierServer(loaded, server)) {
    const status = await hub.settled(server, { connect: true });
    // A connect that failed is the call's error, as the hub would give it (not tried a second time).
    if (status.state !== "connected")
      throw new SvcError("mcp_connect", serverScoped(server, status.lastError ?? status.state));
    const own = hub.toolsOf(server);
    const lost = lostToCrossServer(server, tool, own, crossServerView(loaded, server, own));
    if (lost !== undefined) throw new SvcError("mcp_call", lost);
  }
  return hub.call(server, tool, args, signal);
}

/**
 * How long a call given up by Ctrl-C may take to end before its server is closed: a task's wait for the
 * answer of its tools/call (its id) and its tasks/cancel, each bounded at 2 s by the session.
 */
const INTERRUPTED_CALL_WAIT_MS = 4000;

/** Waits for `work` to settle (its failure ignored), at most `ms`. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

async function callTool(
  server: string,
  tool: string,
  options: { args?: string; json?: boolean; elicitation?: UnattendedElicitation; profile?: string },
): Promise<void> {
  const args = parseToolArgs(options.args);
  const loaded = loadForProfile(options.profile, `svc mcp call ${server} ${tool}`);
  // As `svc mcp tools` and `svc mcp test` say it (the hub's own refusal names no file).
  if (loaded.config.mcp_servers[server]?.enabled === false) throw disabledServer(loaded, server);
  // Ctrl-C cancels the call (notifications/cancelled) and closes the server before the command ends.
  const secrets = await subscriptionSecrets(loaded);
  const interrupt = listenForInterrupt(`the call of "${tool}"`);
  let hub: McpHub;
  try {
    hub = cliHub(loaded, [server], secrets, options.elicitation, interrupt.signal);
  } catch (err) {
    interrupt.dispose();
    throw err;
  }
  const call = calledUnlessSkipped(loaded, hub, server, tool, args, interrupt.signal);
  call.catch(() => undefined);
  try {
    const result = await Promise.race([call, interrupt.interrupted]);
    process.stdout.write(
      options.json === true ? `${JSON.stringify(result, null, 2)}\n` : formatResult(result),
    );
    if (result.isError === true) {
      process.stderr.write(`svc: ${shownName(server)}/${terminalText(tool)} returned an error result\n`);
      process.exitCode = 1;
    }
  } catch (err) {
    if (!interrupt.signal.aborted) throw callFailure(err, server, process.stdin.isTTY === true);
    process.stderr.write(`svc: ${(interrupt.signal.reason as Error).message}\n`);
  } finally {
    // The call given up still has its cancel to send: a task's tasks/cancel, once its tools/call has answered
    // with the task's id. Closing the server first would end the session under it, and the task run on.
    if (interrupt.signal.aborted) await settledWithin(call, INTERRUPTED_CALL_WAIT_MS);
    await hub.stop();
    // A token refresh still waiting for its answer is saved first (a second Ctrl-C ends the command at once).
    if (interrupt.signal.aborted) await unfinishedWork();
    const signal = interrupt.dispose();
    // Ends as the signal would have (exit status 130 for Ctrl-C in a shell).
    if (signal !== undefined) raiseAgain(signal);
  }
}

/**
 * The config the gateway would refuse is caught here, before any signal: with a gateway running, said as its
 * refusal of a reload is (it keeps the running config), else as any command names a broken config.
 */
async function reloadableConfig(): Promise<LoadedConfig> {
  try {
    return loadConfig();
  } catch (err) {
    if (!isConfigProblem(err)) throw err;
    const running = await findGateway(svcPaths(svcHome())).catch(() => undefined);
    if (running === undefined || "silent" in running) throw err;
    throw new SvcError(
      err.code,
      `nothing was reloaded: the gateway (pid ${running.pid}) would refuse this config.yaml and keeps the running config — fix what is named below and run svc mcp reload again:\n${asRunningRefuses(err).message}`,
    );
  }
}

/**
 * A config.yaml that is a link to nothing is said as the running gateway says it: a start would fall back
 * to the embedded default without it (remove the link), a gateway that runs never does.
 */
function asRunningRefuses(err: SvcError): SvcError {
  if (err.code !== "config_unreadable") return err;
  try {
    loadConfig({ runningFromFile: true });
    return err;
  } catch (running) {
    return running instanceof SvcError ? running : err;
  }
}

async function reloadGateway(options: { wait?: string }): Promise<void> {
  const waitMs = parseSecondsOption(options.wait ?? "10", "--wait") * 1000;
  // An SVC_HOME this user may not look into: no gateway is known not to run there.
  const home = svcHome();
  assertHomeInSight(svcPaths(home).pidFile, home);
  const loaded = await reloadableConfig();
  const running = await findGateway(loaded.paths);
  if (running !== undefined && "silent" in running) {
    // A gateway.pid of another PID namespace whose /health gives no answer: said as svc gateway status says it.
    process.stderr.write(
      `svc: nothing was reloaded: ${running.silent.message}\nHealth: ${elsewhereSilence(loaded.paths, running.found)}\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (running === undefined) {
    // A failure (exit 1), so on stderr like every other error (docs/cli.md).
    process.stderr.write(
      `svc: no gateway is running (no live pid in ${loaded.paths.pidFile}), so there is nothing to reload; the next start (svc gateway start) reads ${loaded.paths.config}\n`,
    );
    process.exitCode = 1;
    return;
  }
  const { pid } = running;
  // A gateway that is stopping ignores SIGHUP: waiting for its report would end in "see gateway.log".
  const stoppingSince = () => {
    const state = readGatewayState(gatewayStateFile(loaded.paths));
    return state?.pid === pid ? state.stopping_since : undefined;
  };
  const stoppingText = (since: string) =>
    `svc: the gateway (pid ${pid}) is stopping (since ${since}) and ignores a reload, so nothing was reloaded; the next start (svc gateway start) reads ${loaded.paths.config}\n`;
  const before = stoppingSince();
  if (before !== undefined) {
    process.stderr.write(stoppingText(before));
    process.exitCode = 1;
    return;
  }
  // A gateway of another PID namespace (a container and its host sharing SVC_HOME) cannot be sent SIGHUP
  // from here: where to run the reload is said instead.
  if (running.elsewhere !== undefined) throw cannotSignal(loaded.paths, running, "svc mcp reload", "HUP");
  // The gateway stamps its reports on the system clock (`sentAt` is compared with them); the wait itself
  // is timed on the clock that is never set, so a step of the system clock does not end or stretch it.
  const sentAt = Date.now();
  const waitFrom = performance.now();
  // Named profiles with connections of their own are reloaded too: their reports are waited for as well.
  const profiles = liveProfileHubs(loaded.paths.home, pid);
  // Each one's first report since the signal is kept as the default profile's is (read at each look here).
  const reports = profileReports(loaded.paths.home, sentAt);
  // Still starting (waiting for the state directory's lock, for Redis): it takes the SIGHUP and reloads once
  // its start is done, which no --wait can be sure to see; said so, as svc gateway status says it (exit 4).
  const starting = stillStarting(loaded.paths, pid);
  process.kill(pid, "SIGHUP");
  if (starting) {
    process.stderr.write(
      `svc: sent SIGHUP to the gateway (pid ${pid}), which is still starting: ${notRecordedYet(gatewayStateFile(loaded.paths), "the gateway")} — it applies the reload once its start is done (reading ${loaded.paths.config} as it is then), and its log says how it went (${loaded.paths.gatewayLog}); svc gateway status says when it has started, and svc mcp list then shows the servers it runs\n`,
    );
    process.exitCode = 4;
    return;
  }
  // The gateway reports the reload in its status file: where a directory stands, no report ever comes.
  const noReport = statusFileIsDirectory(loaded.paths.mcpCache);
  if (noReport !== undefined) {
    process.stderr.write(
      `svc: sent SIGHUP to the gateway (pid ${pid}), but it cannot report the reload: ${noReport} — its log says how the reload went (${loaded.paths.gatewayLog})\n`,
    );
    process.exitCode = 1;
    return;
  }
  // Nor where something other than a directory stands in mcp-cache's place (a file, a link to a device, to nothing
  // or into a loop of links): the gateway cannot make the directory, so no report comes however long it is waited for.
  const inTheWay = fileInPlaceOf(loaded.paths.mcpCache);
  if (inTheWay !== undefined) {
    process.stderr.write(
      `svc: sent SIGHUP to the gateway (pid ${pid}), but it cannot report the reload: ${noStatusDirectory(inTheWay, statusPath(loaded.paths.mcpCache))} — its log says whether the reload applied (${loaded.paths.gatewayLog})\n`,
    );
    process.exitCode = 1;
    return;
  }
  const refusedText = (why: string) => {
    process.stderr.write(
      `svc: the gateway (pid ${pid}) refused the reload and keeps the running config — fix what is named below and run svc mcp reload again:\n${why}\n`,
    );
    process.exitCode = 1;
  };
  while (performance.now() - waitFrom < waitMs) {
    const status = readStatusFile(loaded.paths.mcpCache);
    for (const profile of profiles) reports.look(profile);
    // Both are stamped by the gateway after this kill arrived: an older one answered an earlier reload. A
    // refusal with no report yet, made while a reload begun since the signal was still running (stopping
    // servers), is not taken for this reload's while the wait has time left: that reload's report, saying
    // when it began, decides.
    const lastReload = status?.lastReload;
    const reload = lastReload !== undefined && Date.parse(lastReload.at) >= sentAt ? lastReload : undefined;
    let refusal = refusalSince(
      refusedSince(status, sentAt),
      reload === undefined ? undefined : Date.parse(reload.at),
      false,
    );
    if (refusal !== undefined && "refused" in refusal) {
      refusedText(refusal.refused);
      return;
    }
    if (reload !== undefined) {
      // The servers it (re)started connect after the report: their outcome is waited for (within --wait),
      // so a connect that failed is not printed as a reconnect. So is that of a server it tried again (one
      // still closing its lost session connects once that is done). A stop of the gateway ends the wait:
      // the servers still connecting then (or whose connect the stop ended) are not connected.
      let report: ReadReload<typeof reload> = reload;
      let servers = status?.servers ?? [];
      let since = stoppingSince();
      while (
        since === undefined &&
        stillConnecting(report, servers) &&
        performance.now() - waitFrom < waitMs
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const now = readStatusFile(loaded.paths.mcpCache);
        servers = now?.servers ?? servers;
        // The same report, with its connects' outcomes and the servers whose connect the stop ended, once it
        // has; a later reload's report (another SIGHUP) gives the outcomes of the connects it waits for too.
        if (now?.lastReload?.at === report.at) report = now.lastReload;
        else if (now?.lastReload !== undefined) report = outcomesSince(report, now.lastReload);
        for (const profile of profiles) reports.look(profile);
        refusal ??= refusalSince(refusedSince(now, sentAt), Date.parse(reload.at), false);
        since = stoppingSince();
      }
      const stopped = endedByStop(report, servers, since !== undefined);
      process.stdout.write(reloadSummaryText(pid, { ...report, endedByStop: stopped }, servers));
      // Not the command's: the reload above was applied, and the gateway runs what it made.
      if (refusal !== undefined && "refusedLater" in refusal)
        process.stdout.write(
          `  a later reload was refused, and the gateway keeps what this one applied: ${refusal.refusedLater}\n`,
        );
      const inProfiles = await printProfileReloads(
        profiles,
        reports,
        Object.keys(loaded.config.mcp_servers).length,
        () => performance.now() - waitFrom < waitMs,
        () => {
          since ??= stoppingSince();
          return since !== undefined;
        },
      );
      // Removed by a later reload before it connected: what this reload added (or changed) is not running.
      const removedLater = [...(report.removedLater ?? []), ...inProfiles.removedLater];
      if (removedLater.length > 0) {
        const one = removedLater.length === 1;
        process.stderr.write(
          `svc: ${removedLater.join(", ")} never connected: a later reload removed ${one ? "it" : "them"} from mcp_servers first (svc mcp list shows the servers the gateway runs)\n`,
        );
        process.exitCode = 1;
      }
      // Ended by a later reload that had not reported when the wait ended: removed or connecting again, not
      // known; not connected either way.
      const endedLater = [
        ...endedByLater({ ...report, endedByStop: stopped }, servers),
        ...inProfiles.endedByLater,
      ];
      if (endedLater.length > 0) {
        const one = endedLater.length === 1;
        process.stderr.write(
          `svc: ${endedLater.join(", ")} did not connect: a later reload ended ${one ? "its connect" : "their connects"}, and had not reported within ${waitMs / 1000} s (--wait) — svc mcp list shows whether it connects ${one ? "it" : "them"} again\n`,
        );
        process.exitCode = 1;
      }
      const notConnected = [...stopped, ...inProfiles.endedByStop];
      if (notConnected.length > 0) {
        // The reload was applied, but what it started is not running: a script must not go on as if it were.
        const one = notConnected.length === 1;
        process.stderr.write(
          `svc: the gateway (pid ${pid}) began stopping${since === undefined ? "" : ` (since ${since})`} before ${notConnected.join(", ")} had connected: the reload was applied, and the next start (svc gateway start) connects ${one ? "it" : "them"} as ${loaded.paths.config} says\n`,
        );
        process.exitCode = 1;
      }
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // No report by the end of the wait: a refusal since the signal is this reload's, unless it came while a
  // reload begun since the signal (this one, stopping servers) was still running: a later SIGHUP's.
  const refused = refusalSince(refusedSince(readStatusFile(loaded.paths.mcpCache), sentAt), undefined, true);
  if (refused !== undefined && "refused" in refused) {
    refusedText(refused.refused);
    return;
  }

  const since = stoppingSince();
  if (since !== undefined) {
    process.stderr.write(stoppingText(since));
    process.exitCode = 1;
    return;
  }
  // Not confirmed: a script running `svc mcp reload && …` must not go on as if the servers were reloaded.
  process.stderr.write(
    `svc: sent SIGHUP to the gateway (pid ${pid}), but it has not reported the reload within ${waitMs / 1000} s (--wait): it may still be reloading, or be stuck — its log says which (${loaded.paths.gatewayLog}); svc mcp list shows the servers it runs, and svc mcp reload --wait <seconds> waits longer\n`,
  );
  // Not the command's: a later SIGHUP's, which leaves what this reload applies as it is.
  if (refused !== undefined && "refusedLaterUnreported" in refused)
    process.stderr.write(
      `svc: a later reload was refused while this one was still running, and does not change what this one applies:\n${refused.refusedLaterUnreported}\n`,
    );
  process.exitCode = 1;
}

/**
 * `svc mcp add files npx -y pkg`: the server's own option (`-y`) is taken for one of svc's and refused as
 * "unknown option '-y'". When it follows the server's command, the refusal says where that command goes
 * (after `--`), naming the command but no argument (one may be a credential).
 */
function withCommandAfterDashes(text: string, args: readonly string[]): string {
  const flag = /^error: unknown option '([^']*)'/.exec(text)?.[1];
  const [name, command] = args;
  // A near miss of svc's own option (`--forse`) keeps commander's "Did you mean --force?" alone.
  if (flag === undefined || text.includes("Did you mean")) return text;
  if (name === undefined || command === undefined || command.startsWith("-")) return text;
  if (args.indexOf(flag) < 2) return text;
  const plain = (word: string) => /^[\w.@/:+=-]+$/.test(word);
  const example =
    plain(name) && plain(command)
      ? `svc mcp add ${name} -- ${command} ...`
      : "svc mcp add <name> -- <command> [args...]";
  return text.replace(
    /\n?$/,
    ` — the server's command and its options go after --, so that svc does not read them as its own: ${example}\n`,
  );
}

/** `--profile` of the commands that connect: the values a named profile's runs connect with. */
const PROFILE_HELP =
  "connect with this profile's .env and logins, as its runs do (default: the default profile)";

export function registerMcpCommands(program: Command): void {
  const mcp = program
    .command("mcp")
    .description("MCP servers: list, test, tools, call, reload, log in, re-authorize, install");
  mcp
    .command("list")
    // The short name svc webhook and svc cron take: unknown, it was answered "Did you mean list?". And
    // `status`, what an operator asks for the servers' state: unknown, it got no pointer here.
    .aliases(["ls", "status"])
    .description(
      "configured servers; with no gateway running, each enabled one is checked (ok (N tools) or failed: why) (or: status)",
    )
    .option("--no-check", "configuration and cached tool counts only: connect to nothing")
    .option("--timeout <seconds>", "how long each check may take (default 10)")
    // The default profile's list: a named profile's servers are checked with svc mcp test --all --profile.
    .addOption(new Option("--profile <name>").hideHelp())
    .action(listServers);
  mcp
    .command("tools <server>")
    .description(
      "connect to a server and show each registered mcp__ name, the server's own name and description",
    )
    .option("--schema", "show each tool's input schema")
    .option("--json", "print the tools as JSON (names, description, input schema)")
    .option("--profile <name>", PROFILE_HELP)
    .action(listTools);
  mcp
    .command("test [server]")
    .description("connect to a server once and report how long it took and which tools it registers")
    .option("--all", "check every configured server at once (exit 1 when one fails)")
    .option("--timeout <seconds>", "with --all: how long each check may take (default 10)")
    .option("--profile <name>", PROFILE_HELP)
    .action(testServer);
  mcp
    .command("call <server> <tool>")
    .description("call a tool by the server's own name and print the result (exit 1 on any failure)")
    .option("--args <json>", "tool arguments as a JSON object (default {})")
    .option(
      "--json",
      "print the whole result as JSON (content blocks with their data, structuredContent, isError)",
    )
    .option(
      "--elicitation <policy>",
      "answer to a server's form when no terminal is attached: decline, or defaults (the form's defaults); overrides elicitation.unattended",
      parseElicitationOption,
    )
    .option("--profile <name>", PROFILE_HELP)
    .action(callTool);
  mcp
    .command("reload")
    .description("make the running gateway reload mcp_servers (reconnects only changed servers; /reload-mcp)")
    .option("--wait <seconds>", "how long to wait for the gateway's report (default 10)")
    .addOption(new Option("--profile <name>").hideHelp())
    .action((options: { wait?: string; profile?: string }) => {
      if (options.profile !== undefined)
        // Said, as for the other mcp commands a profile cannot narrow: a reload covers every profile.
        throw new SvcError(
          "usage",
          `unknown option '--profile': a reload covers every profile — each profile with open connections is reloaded with its own .env, in a "Profile <name>" section of the summary; run svc mcp reload without --profile`,
        );
      return reloadGateway(options);
    });
  const add = mcp
    .command("add <name> [target...]")
    .description("add a server to config.yaml: svc mcp add <name> -- <command> [args...] | <url>")
    .option("--transport <kind>", "stdio, http or sse (default: http for a URL, else stdio)")
    .option("--env <key=value>", "environment variable for a command server (repeatable)", collectEnv)
    .option("--header <name:value>", "HTTP header for a URL server (repeatable)", collectHeader)
    .option("--force", "replace a server of the same name")
    .addOption(new Option("--profile <name>").hideHelp())
    .action((name: string, target: string[], options: AddOptions & { profile?: string }) => {
      refuseProfileOption(options.profile);
      return addServer(name, target, options);
    });
  add.configureOutput({
    outputError: (text, write) => write(withCommandAfterDashes(text, add.args)),
  });
  mcp
    .command("remove <name>")
    // `uninstall`, the opposite of `install`: unknown, it was answered "Did you mean install?", the
    // command that adds a server.
    .aliases(["rm", "uninstall"])
    .description("remove a server from config.yaml, comments and layout kept (or: uninstall)")
    .addOption(new Option("--profile <name>").hideHelp())
    .action((name: string, options: { profile?: string }) => {
      refuseProfileOption(options.profile);
      return removeServerCommand(name);
    });
  mcp
    .command("import <file>")
    .description("add the servers of Claude Code's .mcp.json or VS Code's mcp.json to config.yaml")
    .option("--force", "replace servers of the same name")
    .addOption(new Option("--profile <name>").hideHelp())
    .action((file: string, options: { force?: boolean; profile?: string }) => {
      refuseProfileOption(options.profile);
      return importServers(file, options);
    });
  registerMcpAuthCommands(mcp);
}
