import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type SnapshotFrom, waitFor } from "xstate";
import { interpolateDeep } from "../../config/interpolate.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { MAX_TIMER_MS } from "../../config/timerSeconds.js";
import { SvcError } from "../../errors.js";
import { scrub } from "../../io/credentials.js";
import { entryCredentials } from "../../io/loadedCredentials.js";
import {
  type ConnectOptions,
  connectServer,
  NO_ENDPOINT_EVENT,
  withStderrSoFar,
} from "../../io/mcp/connect.js";
import type { ConnectStall } from "../../io/mcp/connectAttempts.js";
import { withoutSecrets } from "../../io/mcp/entrySecrets.js";
import type { EraOutcome } from "../../io/mcp/eraSequence.js";
import type { StreamRefusal } from "../../io/mcp/pacedStreams.js";
import { renderedFingerprint, renderToolsPolicy } from "../../io/mcp/render.js";
import { writeSchemaCache } from "../../io/mcp/schemaCache.js";
import type { McpSession } from "../../io/mcp/session.js";
import { shownName } from "../../io/mcp/shownName.js";
import { describeTransportError, refusedAfterInitialize } from "../../io/mcp/transportErrors.js";
import { BROWSER_LOGIN_TIMEOUT_MS } from "../../io/oauth/settings.js";
import { keepStderrLine, STDERR_TAIL_LINES } from "../../io/stderrTail.js";
import { storeProblem } from "../../io/stores/atomicFile.js";
import {
  type Connected,
  connectionState,
  type McpConnectionActor,
  type McpConnectionInput,
  type StartIn,
} from "../../machines/mcpConnection.js";
import { isConnectionClosed, isRequestTimeout, sessionRequestFailure } from "./callErrors.js";
import type { CallQueue, QueueWait } from "./callQueue.js";
import { type FailureStreak, logConnected } from "./failureStreak.js";
import type { HubOptions } from "./hubOptions.js";
import { ServerGoneError } from "./serverGone.js";
import { logServerMessage } from "./serverLog.js";
import { serverRequestHandlers } from "./serverRequests.js";
import { buildToolset, longNameWarning, type Toolset, unmatchedFilters } from "./toolNames.js";
import { noAnswer, noToolList } from "./unansweredConnect.js";

/** One configured server inside the hub: its entry, its connection actor and its current toolset. */
export interface Runtime {
  readonly name: string;
  readonly entry: McpServerEntry;
  readonly print: string;
  readonly actor: McpConnectionActor;
  readonly queue: CallQueue;
  toolset: Toolset;
  /** Problems of the last listing (filters matching nothing, names too long), shown by `svc mcp tools`/`test`. */
  warnings: string[];
  cachedToolCount: number | undefined;
  /**
   * A schema cache from an earlier connect was on disk when the server was added, though not read for a
   * lazy start (disabled, or eager): `svc mcp list` says it is cached before (or without) a connect.
   */
  readonly cachedOnDisk?: boolean;
  /** The server's own names of every tool of the last listing (or the cache), registered or not. */
  listed: ReadonlySet<string>;
  /** Why the last listing may lack tools (its paging stopped early), for a call of a tool it did not list. */
  listingCut?: string | undefined;
  era: string | undefined;
  /** The last stderr lines of a stdio server since its latest connect began (a connect timeout quotes them). */
  stderrSoFar: string[];
  /** Its stderr text after the last newline (a prompt waiting for input), quoted after those lines. */
  stderrUnfinished?: string;
  /** Its last stdout lines that were no MCP message since then (quoted when it wrote nothing on stderr). */
  stdoutSoFar: string[];
  /** The beginning of its stdout line not ended yet (a message written without its line break). */
  stdoutUnfinished?: string;
  /** An SSE server's stream opened at the latest connect and its `endpoint` event is still awaited. */
  awaitingEndpoint?: boolean;
  /** An SSE server's stream opened at the latest connect (its GET answered): a timeout before says it did not. */
  streamOpened?: boolean;
  /** The first answer of an id svc never sent at the latest connect (cut, redacted): a timeout quotes it. */
  strayAnswer?: string | undefined;
  /** Where the latest connect's connections to a url server stopped, when none was made (`TlsFetch.stall`). */
  connectStall?: (() => ConnectStall | undefined) | undefined;
  /** How the latest connect's messages name a url a `${VAR}` gave, and its host (`withUrlAsWritten`). */
  connectShownAsWritten?: ((text: string) => string) | undefined;
  /** The latest connect sent its handshake (past an HTTP url's preflight): a timeout then says it is unanswered. */
  handshakeSent?: boolean;
  /**
   * What became of the latest connect's era requests before the one it sent last (`auto`'s refused
   * initialize, `stateless`'s failed server/discover): a timeout names them with the one unanswered.
   */
  fellBack?: readonly EraOutcome[];
  /** How long the latest connect's request sent last has waited (ms, on `HubOptions.now`'s clock). */
  handshakeWaited?: (() => number) | undefined;
  /** The latest connect got past the handshake and lists the tools: a timeout then says where it stopped. */
  listingTools?: boolean;
  /** The credentials of the last connect's rendered entry. */
  entrySecrets: readonly string[];
  /**
   * What is redacted from the server's text (call errors, lost reasons, log messages, stderr): the entry's
   * credentials and the gateway's own (`HubOptions.hiddenValues`). Set: the entry's.
   */
  secrets: readonly string[];
  /**
   * What the entry as the last connect rendered it sends as credentials (`entryCredentials`): its connection
   * sends them while it lives, whatever the `.env` says since (none before the first connect).
   */
  renderedCredentials?: readonly string[];
  /** `renderedFingerprint` of the entry as the last connect rendered it (none before the first connect). */
  rendered?: string;
  /** The latest connect (settled once a given-up connect has closed its process): a stop waits for it. */
  connecting?: Promise<unknown>;
  /** Collisions among its own tools already logged: each is reported once, not at every listing or reconnect. */
  readonly loggedCollisions: Set<string>;
  /**
   * Failed connects and lost connections since its connection last stayed up 30 s, and how they were logged:
   * the same failure again (a missing command at every backoff retry, a process that crashes after each
   * handshake) is logged at DEBUG, and a connect says how many there were.
   */
  readonly streak: FailureStreak;
  /** Its sampling requests of the last minute (`sampling.max_requests_per_minute`), across its connects. */
  readonly samplingTimes: number[];
}

/**
 * Machine input from an entry: keepalive (HTTP default 180 s, stdio only when set, floor 5 s), recycling,
 * timeouts. An interactive connect of an OAuth server may include a browser login (up to five minutes),
 * which is the person's time, not the server's: it is added to the connect budget.
 */
export function connectionInput(
  name: string,
  entry: McpServerEntry,
  startIn: StartIn,
  cachedToolCount?: number,
  options: { interactive?: boolean } = {},
): McpConnectionInput {
  const kind = transportKind(entry);
  // Spec 2.1: floored at 5; stdio pings only when a value is set — any value, 0 included.
  const keepalive = entry.keepalive_interval ?? (kind === "stdio" ? undefined : 180);
  const loginMs = options.interactive === true && entry.auth === "oauth" ? BROWSER_LOGIN_TIMEOUT_MS : 0;
  return {
    name,
    kind,
    startIn,
    connectTimeoutMs: Math.min(entry.connect_timeout * 1000 + loginMs, MAX_TIMER_MS),
    keepaliveMs: keepalive === undefined ? 0 : Math.max(5, keepalive) * 1000,
    idleMs: entry.idle_timeout_seconds * 1000,
    maxLifetimeMs: entry.max_lifetime_seconds * 1000,
    ...(cachedToolCount === undefined ? {} : { cachedToolCount }),
  };
}

export const SETTLED = new Set(["connected", "failed", "skipped", "stopped"]);

export type ConnectDeps = Omit<HubOptions, "servers" | "onStatus" | "clock" | "inspect"> & {
  /** The toolset changed: rebuild the merged registry. */
  readonly onToolsChanged: () => void;
  /** Where the server's refusal of its event stream at a url is kept (`ConnectOptions.streamRefusal`). */
  readonly streamRefusal?: (server: string, url: string) => StreamRefusal;
};

/** Opens a session for a runtime, lists and registers its tools and caches their schemas. */
export async function connectRuntime(
  rt: Runtime,
  deps: ConnectDeps,
  signal: AbortSignal,
): Promise<Connected> {
  const { logger } = deps;
  const now = deps.now ?? (() => performance.now());
  // This connect's own lines: the process of a connect given up before it (a connect timeout, a retry)
  // may still be writing while it is stopped, and what it writes is not this process's "so far".
  const stderr: string[] = [];
  const stdout: string[] = [];
  rt.stderrSoFar = stderr;
  rt.stderrUnfinished = "";
  rt.stdoutSoFar = stdout;
  rt.stdoutUnfinished = "";
  rt.awaitingEndpoint = false;
  rt.streamOpened = false;
  rt.strayAnswer = undefined;
  rt.handshakeSent = false;
  const fellBack: EraOutcome[] = [];
  rt.fellBack = fellBack;
  rt.handshakeWaited = undefined;
  rt.connectStall = undefined;
  rt.connectShownAsWritten = undefined;
  rt.listingTools = false;
  let current: McpSession | undefined;
  // A burst of list_changed notifications (a server registering tools one by one) costs at most one
  // listing in flight plus one after it, not one listing each, and the last listing is the newest.
  let refreshing = false;
  let again = false;
  // A notification that arrives while the connect lists the tools (sent before the server answered that
  // listing, which may miss the change) would be lost: the connect lists them once more before it is done
  // (so `svc mcp call` and `tools` see the change too). One that arrives before the listing is asked for
  // (a server registering its tools as it starts) needs none.
  let listingAtConnect = false;
  let changedWhileListing = false;
  const refresh = () => {
    const session = current;
    if (session === undefined) {
      if (listingAtConnect) changedWhileListing = true;
      return;
    }
    if (session.isClosing) return;
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    const busyAtStart = rt.actor.getSnapshot().context.inFlight > 0;
    listAndRegister(rt, deps, session)
      .catch((err: unknown) => {
        // A listing cut off by svc closing the session (a stop, a reload, `svc mcp call` ending) failed
        // for nothing the server did: the next connect lists the tools anew.
        if (session.isClosing) return;
        // A server busy with a call (one handling a message at a time) may answer the listing only once the
        // call is done, after its wait ran out: it is listed again once no call is in flight, rather than the
        // tools it said had changed being kept as they were until the next reconnect.
        if (isRequestTimeout(err) && (busyAtStart || rt.actor.getSnapshot().context.inFlight > 0))
          listAgainWhenIdle(session);
        // (The SDK's own "MCP error -32001: Request timed out" names neither the wait nor its key.)
        logger.warn(
          { server: rt.name, err: sessionRequestFailure(err, rt.secrets, rt.entry.connect_timeout) },
          `[mcp] ${rt.name}: tool list refresh failed`,
        );
      })
      .finally(() => {
        refreshing = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  };
  const listAgainWhenIdle = (session: McpSession) => {
    if (rt.actor.getSnapshot().context.inFlight === 0) {
      again = true;
      return;
    }
    const subscription = rt.actor.subscribe((snapshot) => {
      if (snapshot.context.inFlight > 0) return;
      subscription.unsubscribe();
      if (current === session) refresh();
    });
  };
  const { streamRefusal } = deps;
  const options: ConnectOptions = {
    scope: deps.scope,
    interactive: deps.interactive ?? false,
    handlers: {
      ...serverRequestHandlers({
        server: rt.name,
        // `sampling.model: ${MODEL}`: rendered like every string of the entry.
        entry: { ...rt.entry, sampling: interpolateDeep(rt.entry.sampling, deps.scope()) },
        approvals: deps.approvals,
        logger,
        ...(deps.logName === undefined ? {} : { logName: deps.logName }),
        samplingTimes: rt.samplingTimes,
        ...(deps.runner === undefined ? {} : { runner: deps.runner }),
        ...(deps.now === undefined ? {} : { now: deps.now }),
        stopping: deps.stopping,
      }),
      onToolsChanged: refresh,
      onLog: (params) => logServerMessage(logger, rt.name, params, rt.secrets),
    },
    onStderr: (written) => {
      const line = scrub(written, rt.secrets);
      keepStderrLine(stderr, line);
      if (rt.stderrSoFar === stderr) rt.stderrUnfinished = "";
      logger.debug({ server: rt.name }, `[mcp:${rt.name}] ${line}`);
    },
    onStderrUnfinished: (text) => {
      if (rt.stderrSoFar === stderr) rt.stderrUnfinished = scrub(text, rt.secrets);
    },
    onOtherOutput: (line) => {
      stdout.push(line);
      if (stdout.length > STDERR_TAIL_LINES) stdout.shift();
    },
    onStdoutUnfinished: (start) => {
      if (rt.stdoutSoFar === stdout) rt.stdoutUnfinished = start;
    },
    onAwaitingEndpoint: (awaiting) => {
      if (rt.stdoutSoFar !== stdout) return;
      rt.awaitingEndpoint = awaiting;
      if (awaiting) rt.streamOpened = true;
    },
    onStrayAnswer: (answer) => {
      // Quoted by this connect's timeout only: once connected, a late answer to a request given up is one too.
      if (rt.stdoutSoFar !== stdout || rt.strayAnswer !== undefined || current !== undefined) return;
      // Redacted before it is cut: a cut through a credential would leave its start, which scrub no longer knows.
      const shown = scrub(answer, rt.secrets);
      rt.strayAnswer = shown.length > STRAY_ANSWER_CHARS ? `${shown.slice(0, STRAY_ANSWER_CHARS)}…` : shown;
    },
    onHandshake: () => {
      if (rt.stdoutSoFar !== stdout) return;
      rt.handshakeSent = true;
      // Each request of the era sequence has a transport of its own, and so on SSE a stream of its own to open.
      rt.streamOpened = false;
      const sent = now();
      rt.handshakeWaited = () => now() - sent;
    },
    onEraFallback: (outcome) => {
      if (rt.stdoutSoFar === stdout) fellBack.push(outcome);
    },
    onConnections: (stall, shownAsWritten) => {
      if (rt.stdoutSoFar !== stdout) return;
      rt.connectStall = stall;
      rt.connectShownAsWritten = shownAsWritten;
    },
    onSecrets: (secrets) => {
      rt.secrets = secrets;
    },
    ...(deps.hiddenValues === undefined ? {} : { hiddenValues: deps.hiddenValues }),
    onLost: (reason) => rt.actor.send({ type: "SESSION_LOST", reason: scrub(reason, rt.secrets) }),
    signal,
    ...(deps.oauthProviderFor === undefined ? {} : { oauthProviderFor: deps.oauthProviderFor }),
    ...(deps.parentEnv === undefined ? {} : { parentEnv: deps.parentEnv }),
    ...(deps.serverGroup === undefined ? {} : { group: deps.serverGroup(rt.name) }),
    ...(deps.transportFor === undefined ? {} : { transportFor: deps.transportFor }),
    ...(deps.killGivenUp === true ? { killGivenUp: true } : {}),
    ...(deps.handshakeTimeoutMs === undefined ? {} : { handshakeTimeoutMs: deps.handshakeTimeoutMs }),
    ...(streamRefusal === undefined ? {} : { streamRefusal: (url: string) => streamRefusal(rt.name, url) }),
  };
  const scope = deps.scope();
  rt.rendered = renderedFingerprint(rt.name, rt.entry, scope);
  rt.renderedCredentials = entryCredentials(rt.name, rt.entry, scope);
  // Its failure (the status, the log line) may quote the server's stderr: the gateway's own secrets are
  // redacted from it as the entry's are.
  const session = await connectServer(rt.name, rt.entry, options).catch((err: unknown) => {
    throw err instanceof SvcError ? withoutSecrets(err, rt.secrets) : err;
  });
  rt.secrets = session.secrets;
  // Given up while its tools are listed (the connect timed out, a stop): the session closes at once, so its
  // process goes now rather than once the listing's own wait has passed, beside the retry's.
  const giveUp = () => void session.close().catch(() => undefined);
  signal.addEventListener("abort", giveUp, { once: true });
  try {
    listingAtConnect = true;
    if (rt.stdoutSoFar === stdout) rt.listingTools = true;
    await listAndRegister(rt, deps, session, signal);
    if (changedWhileListing) {
      changedWhileListing = false;
      await listAndRegister(rt, deps, session, signal);
    }
    current = session;
    // Changed again meanwhile: listed after the connect, as any later notification is.
    if (changedWhileListing) refresh();
    rt.era = session.era;
    // The streak goes on until the connection has stayed up 30 s (the hub ends it): one lost sooner (a
    // server crashing after each handshake) is no new failure to warn about, nor this a recovery at each crash.
    logConnected(rt.streak, logger, rt.name, { era: session.era, tools: rt.toolset.tools.length });
    return { session, toolCount: rt.toolset.tools.length };
  } catch (err) {
    await session.close().catch(() => undefined);
    if (signal.aborted) throw new Error("connect was cancelled", { cause: err });
    // A process that dies right after the handshake (at its first tools/list): say how, not only
    // "Connection closed".
    const exit = isConnectionClosed(err)
      ? session.exitReport?.("while its tools were being listed")
      : undefined;
    if (exit !== undefined)
      throw new SvcError("mcp_connect", `mcp_servers.${rt.name}: ${exit}`, { cause: err });
    if (err instanceof SvcError) throw withoutSecrets(err, rt.secrets);
    // A refused tools/list (an API gateway's 403 quoting the key it was sent): worded and redacted as a
    // refused handshake is, since it becomes the status, the log line and svc mcp list's detail. One refused
    // as a request for a session is (404, or a 400 naming the session) says, as the handshake's own refusal
    // does, that the server forgot the session its initialize opened, or that the initialize gave none
    // (a proxy that drops Mcp-Session-Id). The stateless era has no initialize, nor sessions.
    // A url a `${VAR}` gave, and its host, are named as written before the entry's secrets are hidden.
    const refusal =
      (session.era === "legacy"
        ? refusedAfterInitialize(
            err,
            session.transport.sessionId,
            "first tools/list",
            rt.secrets,
            session.shownAsWritten,
          )
        : undefined) ?? err;
    throw new SvcError(
      "mcp_connect",
      `mcp_servers.${rt.name}: ${scrub(describeTransportError(refusal, rt.secrets, session.shownAsWritten), rt.secrets)}`,
      { cause: refusal },
    );
  } finally {
    signal.removeEventListener("abort", giveUp);
  }
}

/** Lists the server's tools, builds the toolset, caches the schemas; on connect and on `tools/list_changed`. */
async function listAndRegister(
  rt: Runtime,
  deps: ConnectDeps,
  session: McpSession,
  signal?: AbortSignal,
): Promise<void> {
  const { logger } = deps;
  const noTools = session.capabilities.tools === undefined && session.era === "legacy";
  const {
    tools,
    incomplete,
    skipped = [],
    unanswered,
  } = noTools ? { tools: [] } : await session.listTools(rt.entry.connect_timeout * 1000, rt.secrets);
  if (signal?.aborted === true) throw new Error("connect was cancelled");
  const capabilities = {
    resources: session.capabilities.resources !== undefined,
    prompts: session.capabilities.prompts !== undefined,
    ...(noTools ? { tools: false as const } : unanswered ? { tools: "unanswered" as const } : {}),
  };
  const policy = renderToolsPolicy(rt.entry, deps.scope());
  rt.toolset = buildToolset(rt.name, tools, capabilities, policy, skipped.length);
  rt.listed = new Set(tools.map((t) => t.name));
  rt.listingCut = incomplete;
  const warnings = unmatchedFilters(tools, policy)
    .map((problem) => `mcp_servers.${rt.name}.${problem}`)
    .concat((rt.toolset.invalid ?? []).map((i) => i.report))
    .concat(skipped.map((report) => `mcp_servers.${rt.name}: ${report}`))
    .concat(incomplete === undefined ? [] : [`mcp_servers.${rt.name}: ${incomplete}`]);
  try {
    // Not where the profile's directory is gone (removed while the gateway runs, or a profile named only by a
    // command's --profile): the write would make it again, which only a run of the profile is to do.
    if (existsSync(dirname(deps.cacheDir)))
      writeSchemaCache(deps.cacheDir, rt.name, rt.entry, tools, capabilities);
    rt.cachedToolCount = rt.toolset.tools.length;
  } catch (err) {
    logger.warn(
      { server: rt.name, err: storeProblem(err) },
      `[mcp] ${rt.name}: could not write the schema cache (${storeProblem(err)}); it is written again when the server's tools are next listed`,
    );
  }
  for (const collision of rt.toolset.collisions) {
    if (rt.loggedCollisions.has(collision)) continue;
    rt.loggedCollisions.add(collision);
    logger.warn({ server: rt.name }, `[mcp] tool name collision: ${collision}`);
  }
  const long = longNameWarning(rt.name, rt.toolset.tools);
  if (long !== undefined) warnings.push(long);
  rt.warnings = warnings;
  for (const warning of warnings) logger.warn({ server: rt.name }, `[mcp] ${warning}`);
  // Rule 5, with the true reason: a server that lists no tools is not one whose filters left none.
  if (rt.toolset.tools.length === 0) {
    logger.info(
      { server: rt.name },
      `[mcp] ${rt.name}: no toolset registered — ${rt.toolset.empty ?? "no tools left after filtering"}`,
    );
  }
  deps.onToolsChanged();
}

/**
 * The runtime was stopped (a gateway stop, or a reload that removed or replaced its entry) before or while
 * a call waited for its connect: the call was never sent, and no connect of this runtime will come.
 */
export class RuntimeStoppedError extends SvcError {
  constructor(server: string) {
    super("mcp_call", `mcp_servers.${server}: the server was stopped or reloaded`);
  }
}

/** The runtime's live session: waits for (or starts) a connect; throws the connect error. */
export async function ensureConnected(
  rt: Runtime,
  wait?: QueueWait,
  /**
   * `connectsFailed` when the call came: a connect that failed since, while the call waited for its turn,
   * is its answer too (its caller would otherwise start one more connect, and each call queued behind it
   * one more in turn: a burst of N calls to a server that is down spawning N processes).
   */
  failedSince?: number,
): Promise<McpSession> {
  const current = rt.actor.getSnapshot();
  const state = connectionState(current);
  if (state === "stopped") throw new RuntimeStoppedError(rt.name);
  if (state === "skipped") {
    throw new ServerGoneError(
      "mcp_connect",
      `mcp_servers.${rt.name} is disabled (enabled: false) — set enabled: true to use it`,
    );
  }
  if (wait?.signal.aborted === true) throw wait.giveUp();
  if (state === "failed" && failedSince !== undefined && current.context.connectsFailed > failedSince)
    throw connectFailure(rt, current);
  if (state !== "connected" && state !== "connecting") rt.actor.send({ type: "CONNECT" });
  let snapshot: SnapshotFrom<typeof rt.actor>;
  try {
    // A caller whose run ends stops waiting at once; the connect goes on for the next call.
    snapshot = await waitFor(
      rt.actor,
      (s) => {
        if (s.matches("backoff")) queueMicrotask(() => rt.actor.send({ type: "CONNECT" }));
        return SETTLED.has(connectionState(s));
      },
      wait === undefined ? undefined : { signal: wait.signal },
    );
  } catch (err) {
    // (Read again: the run may have ended while the connect ran.)
    if (wait !== undefined && (wait.signal.aborted as boolean)) throw wait.giveUp();
    throw err;
  }
  if (connectionState(snapshot) === "connected") return snapshot.context.session as McpSession;
  // (Its lastError, if any, is an earlier connect's: not why this call got no session.)
  if (connectionState(snapshot) === "stopped") throw new RuntimeStoppedError(rt.name);
  throw connectFailure(rt, snapshot);
}

/** Why a call got no session: the connect that settled without one. */
function connectFailure(rt: Runtime, snapshot: SnapshotFrom<Runtime["actor"]>): SvcError {
  return new SvcError(
    "mcp_connect",
    serverScoped(rt.name, snapshot.context.lastError ?? connectionState(snapshot)),
  );
}

/**
 * A connection's error as the CLI shows it: naming the server once (the machine's own texts do not name
 * it; OAuth errors start with `<server>: `, which becomes `mcp_servers.<server>: `).
 */
export function serverScoped(server: string, reason: string): string {
  // A name with a control or invisible character is shown in JSON quotes, those escaped (shownName), also
  // where the reason names it already (a command not found).
  const shown = `mcp_servers.${shownName(server)}: `;
  for (const named of [`mcp_servers.${server}: `, `${server}: `])
    if (reason.startsWith(named)) return `${shown}${reason.slice(named.length)}`;
  if (reason.startsWith("mcp_servers.")) return reason;
  return `${shown}${reason}`;
}

/** A runtime's last stderr lines, with the text after the last newline (a prompt waiting for input). */
/**
 * `message` (a connect given up: connect_timeout, --timeout) with what the server showed meanwhile: a
 * stdio server's stderr (or stdout) so far, an SSE stream that never named its endpoint.
 */
export function withConnectSoFar(rt: Runtime, given: string): string {
  if (rt.awaitingEndpoint === true) return `${given} — ${NO_ENDPOINT_EVENT}`;
  // A server that answered the handshake is running and speaks MCP: what it did not answer is its tool list
  // (unless it did answer it, under another id: that is said below, and is why).
  const message =
    rt.listingTools === true && rt.strayAnswer === undefined ? `${given} — ${noToolList(given)}` : given;
  // The server did answer, under an id no request had: said first, since it is why nothing was answered.
  const stray =
    rt.strayAnswer === undefined
      ? ""
      : ` — the server answered with an id svc never sent, so its answer matched no request: ${rt.strayAnswer} (each answer must carry the id of the request it answers)`;
  const said = withStderrSoFar(`${message}${stray}`, stderrSoFar(rt), rt.stdoutSoFar, rt.stdoutUnfinished);
  if (said !== given) return said;
  // Nothing the server did to quote: it answered nothing svc could read. Say what to check, naming a url a
  // `${VAR}` gave, and its host (a stalled connect's `host:port`), as config.yaml writes it.
  const check = noAnswer(rt.entry, given, {
    handshakeSent: rt.handshakeSent === true,
    streamOpened: rt.streamOpened === true,
    stall: rt.connectStall?.(),
    fellBack: rt.fellBack ?? [],
    waitedMs: rt.handshakeWaited?.(),
  });
  return `${given} — ${rt.connectShownAsWritten?.(check) ?? check}`;
}

/** How much of an answer of an unknown id a connect timeout quotes. */
const STRAY_ANSWER_CHARS = 200;

export function stderrSoFar(rt: Pick<Runtime, "stderrSoFar" | "stderrUnfinished">): string[] {
  const unfinished = rt.stderrUnfinished?.trim() ?? "";
  return unfinished === "" ? [...rt.stderrSoFar] : [...rt.stderrSoFar, unfinished];
}
