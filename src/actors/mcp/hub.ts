import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assign, createActor, fromPromise, waitFor } from "xstate";
import { type InterpolationScope, interpolate } from "../../config/interpolate.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { serverEntries, serverNames } from "../../config/serverOrder.js";
import { describeError, SvcError } from "../../errors.js";
import { combinedSecrets } from "../../io/credentials.js";
import { fingerprint } from "../../io/mcp/entryFingerprint.js";
import { resultWithoutSecrets, withoutSecrets } from "../../io/mcp/entrySecrets.js";
import type { StreamRefusal } from "../../io/mcp/pacedStreams.js";
import { renderedFingerprint, renderToolsPolicy } from "../../io/mcp/render.js";
import { readSchemaCache } from "../../io/mcp/schemaCache.js";
import type { McpSession } from "../../io/mcp/session.js";
import { shownName } from "../../io/mcp/shownName.js";
import type { ReloadConnectOutcome, ReloadSummary, ServerStatus } from "../../io/mcp/statusFile.js";
import { EXIT_GRACE_MS } from "../../io/mcp/stdioTransport.js";
import { pastedWord } from "../../io/shellWord.js";
import {
  type Connected,
  type ConnectionState,
  connectionState,
  connectTimeoutMessage,
  gaugeState,
  mcpConnectionMachine,
  type StartIn,
} from "../../machines/mcpConnection.js";
import { sessionRequestFailure } from "./callErrors.js";
import { CallQueue, type QueueWait } from "./callQueue.js";
import { endStreak, logFailure, noStreak } from "./failureStreak.js";
import type { HubOptions } from "./hubOptions.js";
import { findTool, liveTool, noLongerOffered } from "./liveTool.js";
import {
  connectionInput,
  connectRuntime,
  ensureConnected,
  type Runtime,
  RuntimeStoppedError,
  SETTLED,
  serverScoped,
  stderrSoFar,
  withConnectSoFar,
} from "./runtime.js";
import { ServerGoneError } from "./serverGone.js";
import { approveCall, invokeTool } from "./toolCall.js";
import {
  buildToolset,
  type MergedToolset,
  mergeToolsets,
  type RegisteredTool,
  registeredName,
  unregisteredListedReason,
  unregisteredUtilityReason,
} from "./toolNames.js";

export type { ReloadSummary } from "../../io/mcp/statusFile.js";

export type { HubOptions } from "./hubOptions.js";
export { connectionInput } from "./runtime.js";

/**
 * A call's wait for its server's connect (a lazy server's first call, a recycled process respawning): given
 * up when the call's run ends, so the run ends on time; the connect goes on for the next call.
 */
function connectWait(server: string, tool: string, signal: AbortSignal | undefined): QueueWait | undefined {
  if (signal === undefined) return undefined;
  return {
    signal,
    giveUp: () =>
      new SvcError(
        "mcp_call",
        `mcp_servers.${server}: "${tool}" was not called: the run ended while the server was connecting`,
      ),
  };
}

/**
 * A call's connect that failed (its own, or the one it waited for): the connect's error, which is the call's
 * too, says that the tool was never sent.
 */
function notRunFor(tool: string): (err: unknown) => never {
  return (err) => {
    if (err instanceof SvcError && err.code === "mcp_connect")
      throw new SvcError("mcp_connect", `${err.message}; "${tool}" was not run`, { cause: err });
    throw err;
  };
}

/**
 * Waits while the server's process is past `max_lifetime_seconds` with calls still in flight (its recycle
 * waits for them): until it is recycled (or lost, stopped), so the call goes to the next process. Given up,
 * never sent, when the call's run ends meanwhile.
 */
async function agedOut(
  rt: Runtime,
  server: string,
  tool: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const aged = (s: ReturnType<Runtime["actor"]["getSnapshot"]>) =>
    s.matches("connected") && s.context.recyclePending;
  if (!aged(rt.actor.getSnapshot())) return;
  try {
    await waitFor(rt.actor, (s) => !aged(s), signal === undefined ? undefined : { signal });
  } catch (err) {
    if (signal?.aborted === true)
      throw new SvcError(
        "mcp_call",
        `mcp_servers.${server}: "${tool}" was not called: the run ended while it waited for the server's process to be recycled (max_lifetime_seconds)`,
      );
    // The actor ended (a stop): the call's turn goes on, and finds the server stopped.
    if (rt.actor.getSnapshot().status === "active") throw err;
  }
}

/**
 * A call made while the server listed `offered`, whose turn came after a `tools/list_changed` took it away:
 * it is not sent, nor does the server tool that took over its registered name (one that had lost the name to
 * it in a collision) run on arguments meant for it.
 */
function changedWhileWaiting(
  rt: Runtime,
  offered: RegisteredTool,
  now: RegisteredTool | undefined,
): SvcError {
  const other = now === undefined ? "" : `; ${offered.name} is now its tool ${JSON.stringify(now.original)}`;
  return new SvcError(
    "mcp_call",
    `mcp_servers.${rt.name} no longer offers ${JSON.stringify(offered.original)} (its tools changed while the call waited for its turn${other}); the tool was not run`,
  );
}

/** Owns one `mcpConnection` actor per configured server and the merged tool registry. */
export class McpHub {
  private readonly runtimes = new Map<string, Runtime>();
  private registry: MergedToolset = { tools: [], collisions: [], lostBy: new Map() };
  /** Runtimes whose first connect has ended (listed tools or failed): they no longer hold names back. */
  private readonly settledOnce = new WeakSet<Runtime>();
  /** Cross-server collisions already logged: each is reported once, not at every rebuild. */
  private readonly reported = new Set<string>();
  /**
   * The url each server refused its event stream at (405 to the `GET`: it offers none), by server: not asked
   * again at a reconnect or a recycle, for the hub's life; a reload that changes the server's url forgets it.
   */
  private readonly refusedStreams = new Map<string, string>();
  private servers: Readonly<Record<string, McpServerEntry>>;
  /** The reload in progress, if any: the next one (or a stop) starts after it. */
  private reloading: Promise<unknown> = Promise.resolve();
  /** Reloads started or waiting (`reload`), and the one waiting behind them, which a later reload replaces. */
  private reloadsInFlight = 0;
  private waitingReload:
    | {
        readonly request: { servers: Readonly<Record<string, McpServerEntry>> };
        readonly done: Promise<ReloadSummary>;
      }
    | undefined;
  /**
   * Runtimes a reload connected, reconnected or tried again whose connect is still under way (removed once
   * they connect, fail or leave `connecting`): one the stop ends is said, as its reload's report waits for it.
   */
  private readonly reloadConnects = new Map<Runtime, ReloadConnect>();
  /** The servers of `reloadConnects` that the stop ended before they connected. */
  private endedByStop: readonly string[] = [];
  /**
   * How the connect each server's latest reload waited for first ended, by server (`connecting` while under
   * way): the report says it, however the server fares after (one crashing right after its handshake).
   */
  private readonly reloadOutcomes = new Map<string, ReloadConnectOutcome>();
  /** Told at each change of a server's status, as `onStatus` is (`watchStatus`: a run waiting for connects). */
  private readonly statusWatchers = new Set<() => void>();

  constructor(private readonly options: HubOptions) {
    this.servers = options.servers;
  }

  start(): void {
    for (const [name, entry] of serverEntries(this.servers)) this.add(name, entry);
    this.rebuild();
  }

  /** Registered tools of every server, collisions removed. */
  tools(): RegisteredTool[] {
    return [...this.registry.tools];
  }

  /** One server's own toolset (before cross-server collisions). */
  toolsOf(server: string): RegisteredTool[] {
    return [...this.runtime(server).toolset.tools];
  }

  /** Why a server's last listing registered no tool (undefined when it registered some, or never listed). */
  noToolsReason(server: string): string | undefined {
    return this.runtime(server).toolset.empty;
  }

  /** The last lines a stdio server wrote on stderr since its latest connect began. */
  stderrSoFar(server: string): readonly string[] {
    return stderrSoFar(this.runtime(server));
  }

  /** `message` (its connect given up) with what the server showed meanwhile (stderr so far, an SSE stream with no endpoint). */
  connectSoFar(server: string, message: string): string {
    return withConnectSoFar(this.runtime(server), message);
  }

  /** Its stdout lines that were no MCP message since then, and the beginning of one not ended yet. */
  stdoutSoFar(server: string): readonly string[] {
    const rt = this.runtime(server);
    return rt.stdoutUnfinished ? [...rt.stdoutSoFar, rt.stdoutUnfinished] : [...rt.stdoutSoFar];
  }

  /**
   * What each server's entry, as its latest connect rendered it, sends as credentials: what its connection
   * sends while it lives, whatever its `.env` says now.
   */
  sentCredentials(): string[] {
    return [...this.runtimes.values()].flatMap((rt) => rt.renderedCredentials ?? []);
  }

  collisions(): string[] {
    return [...this.registry.collisions];
  }

  /** Each server's state as `svc_mcp_servers` counts it (a retry of a server that is down counts as down). */
  gaugeStates(): ConnectionState[] {
    return [...this.runtimes.values()].map((rt) => gaugeState(rt.actor.getSnapshot()));
  }

  status(): ServerStatus[] {
    return [...this.runtimes.values()].map((rt) => {
      // Its tools another server listed earlier in mcp_servers registered first: counted out, shown.
      const lost = this.registry.lostBy.get(rt.name) ?? [];
      const snapshot = rt.actor.getSnapshot();
      const state = connectionState(snapshot);
      return {
        name: rt.name,
        transport: transportKind(rt.entry),
        state,
        // A lazy server's tools are registered from its cache, so a name lost there is counted out too.
        toolCount: (state === "lazy" ? (rt.cachedToolCount ?? 0) : rt.toolset.tools.length) - lost.length,
        lazy: rt.entry.lazy,
        cached: rt.cachedToolCount !== undefined || rt.cachedOnDisk === true,
        ...(rt.era === undefined ? {} : { era: rt.era }),
        ...(snapshot.context.lastError === undefined ? {} : { lastError: snapshot.context.lastError }),
        collisions: lost.length === 0 ? rt.toolset.collisions : [...rt.toolset.collisions, ...lost],
        ...(rt.warnings.length === 0 ? {} : { warnings: rt.warnings }),
      };
    });
  }

  /**
   * Waits until a server is connected, failed or skipped (eager connects run in the background).
   * `connect: true` first wakes a lazy or recycled server (the CLI's `svc mcp tools`). A reload that changes
   * the server's entry stops the runtime waited on and makes a new one: the wait goes on with the new one's
   * connect (a run waiting for the server's first connect must not go on without its tools because of it).
   */
  async settled(server: string, options: { connect?: boolean } = {}): Promise<ServerStatus> {
    const rt = this.runtime(server);
    const state = connectionState(rt.actor.getSnapshot());
    if (options.connect === true && (state === "lazy" || state === "recycled"))
      rt.actor.send({ type: "CONNECT" });
    await waitFor(rt.actor, (s) => SETTLED.has(connectionState(s)));
    if (connectionState(rt.actor.getSnapshot()) === "stopped") {
      await this.reloading;
      const next = this.runtimes.get(server);
      // (A lazy replacement connects at its first call: only `connect: true` waits for it.)
      if (
        next !== undefined &&
        next !== rt &&
        (options.connect === true || connectionState(next.actor.getSnapshot()) !== "lazy")
      )
        return this.settled(server, options);
    }
    return this.status().find((s) => s.name === server) as ServerStatus;
  }

  /**
   * Calls `watcher` at each change of a server's status (its connection's state, error or tools), as
   * `onStatus` is told, each state a connection passes through included; the function returned stops it.
   */
  watchStatus(watcher: () => void): () => void {
    this.statusWatchers.add(watcher);
    return () => {
      this.statusWatchers.delete(watcher);
    };
  }

  /** Calls a tool by its registered `mcp__...` name. */
  callRegistered(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onSent?: () => void,
  ): Promise<CallToolResult> {
    const tool = this.registry.tools.find((t) => t.name === name);
    if (tool === undefined) throw new SvcError("mcp_call", `no MCP tool is registered as ${name}`);
    return this.call(tool.server, tool.original, args, signal, onSent);
  }

  /**
   * Calls a tool by the server's own name: approval, per-server queue, connect on demand, timeout, replay
   * rules. `onSent` is told when the request goes to the server, after those waits (again for a replay).
   */
  call(
    server: string,
    toolName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onSent?: () => void,
  ): Promise<CallToolResult> {
    const rt = this.runtime(server);
    // A call that waits for the server's earlier one (one at a time, maybe another run's) is given up as
    // soon as its own run ends, and never sent.
    const waited = () =>
      new SvcError(
        "mcp_call",
        `mcp_servers.${server}: "${toolName}" was not called: the run ended while it waited for the server's earlier call`,
      );
    const wait = signal === undefined ? undefined : { signal, giveUp: waited };
    const offered = findTool(rt, toolName);
    // Not connected when the call came (lazy, recycled): its tool is from an earlier listing, which a
    // connect made for a call ahead of it in the queue may have replaced.
    const connectedWhenCalled = connectionState(rt.actor.getSnapshot()) === "connected";
    const failedSince = rt.actor.getSnapshot().context.connectsFailed;
    return rt.queue.run(async () => {
      // A process past max_lifetime_seconds that still runs calls (supports_parallel_tool_calls) takes no
      // new one: the call waits for the recycle the last of them starts, then goes to the new process.
      // Sent to the old one, calls that keep overlapping would keep it running however old it is.
      await agedOut(rt, server, toolName, signal);
      // Its turn came after a reload replaced the server (or a stop ended it): the call was never sent, so
      // it goes to the server's new connection, if there is one.
      const state = connectionState(rt.actor.getSnapshot());
      if (state === "stopped") return this.afterStop(rt, server, toolName, args, signal, onSent);
      rt.actor.send({ type: "CALL_START" });
      try {
        let session: McpSession | undefined;
        // A server not connected when the call comes (lazy, recycled, reconnecting) has its tools from an
        // earlier listing (the schema cache, its last process): it is connected first, so the live
        // listing decides whether the tool is still there and whether the call needs approval.
        const registered = findTool(rt, toolName);
        if (offered !== undefined && registered?.original !== offered.original)
          throw connectedWhenCalled
            ? changedWhileWaiting(rt, offered, registered)
            : noLongerOffered(rt, offered, registered);
        if (registered === undefined || state !== "connected")
          session = await ensureConnected(rt, connectWait(server, toolName, signal), failedSince).catch(
            notRunFor(toolName),
          );
        let tool = findTool(rt, toolName);
        // (By its registered name, the live listing may give another tool: one that had lost the name to it.)
        if (registered !== undefined && tool?.original !== registered.original)
          throw noLongerOffered(rt, registered, tool);
        const invalid = rt.toolset.invalid?.find((i) => i.tool === toolName);
        if (tool === undefined && invalid !== undefined)
          throw new SvcError("mcp_call", `mcp_servers.${invalid.report}`);
        if (tool === undefined) {
          const utility =
            session === undefined
              ? undefined
              : unregisteredUtilityReason(
                  toolName.startsWith(registeredName(server, ""))
                    ? toolName.slice(registeredName(server, "").length)
                    : toolName,
                  rt.entry.tools,
                  session.capabilities,
                  rt.toolset.collisions,
                );
          const listed = rt.listed.has(toolName)
            ? unregisteredListedReason(
                toolName,
                renderToolsPolicy(rt.entry, this.options.scope()),
                rt.toolset.collisions,
              )
            : undefined;
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${shownName(server)}: no tool "${toolName}" is registered — ${utility ?? listed ?? (rt.listingCut === undefined ? `run svc mcp tools ${pastedWord(server)} (tools.include/exclude match the server's own names)` : `it may be on a page svc did not read: ${rt.listingCut}`)}`,
          );
        }
        const trust = interpolate(rt.entry.trust, this.options.scope()).value;
        await approveCall(rt, this.options.approvals, tool, args, trust, signal);
        // The approval may have waited minutes for a person: a session found before it that was lost
        // meanwhile (a crashed process, a dropped stream) is replaced by the live one; the call was never sent.
        if (session !== undefined && (session.isClosing || session.lostUnexpectedly)) session = undefined;
        session ??= await ensureConnected(rt, connectWait(server, toolName, signal)).catch(
          notRunFor(toolName),
        );
        // Reconnected while the approval waited: the new listing decides again, so a tool no longer
        // read-only asks, and one the server no longer lists is not sent.
        const live = liveTool(rt, tool, toolName);
        if (tool.readOnly && !live.readOnly)
          await approveCall(rt, this.options.approvals, live, args, trust, signal);
        tool = live;
        const onToolCall = this.options.onToolCall;
        if (onToolCall === undefined)
          return resultWithoutSecrets(
            await invokeTool(rt, this.options.logger, session, tool, args, signal, onSent),
            rt.secrets,
          );
        // Timed on the clock that is never set: a step of the wall clock is no call's duration.
        const now = this.options.now ?? (() => performance.now());
        const started = now();
        let outcome: "ok" | "error" = "error";
        try {
          const result = await invokeTool(rt, this.options.logger, session, tool, args, signal, onSent);
          if (result.isError !== true) outcome = "ok";
          return resultWithoutSecrets(result, rt.secrets);
        } finally {
          onToolCall(server, outcome, (now() - started) / 1000);
        }
      } catch (err) {
        if (err instanceof RuntimeStoppedError) {
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${server}: "${toolName}" was not called: the server was stopped or reloaded before the call was sent`,
          );
        }
        // A server that quotes a credential of the entry in its refusal (`token sk-… lacks scope`).
        throw withoutSecrets(err, rt.secrets);
      } finally {
        // (A runtime a stop or reload ended is done: XState warns of an event sent to a stopped actor.)
        if (rt.actor.getSnapshot().status === "active") rt.actor.send({ type: "CALL_END" });
      }
    }, wait);
  }

  /**
   * A call whose turn in a stopped runtime's queue came: once the reload in progress is done, it runs on
   * the server's new runtime; with none (a stop, or the entry removed) it fails, never sent.
   */
  private async afterStop(
    stopped: Runtime,
    server: string,
    toolName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onSent?: () => void,
  ): Promise<CallToolResult> {
    await this.reloading;
    const current = this.runtimes.get(server);
    if (current !== undefined && current !== stopped)
      return this.call(server, toolName, args, signal, onSent);
    // (A reload that removed the server, or the hub's stop, which leaves it configured.)
    throw new (Object.hasOwn(this.servers, server) ? SvcError : ServerGoneError)(
      "mcp_call",
      `mcp_servers.${server}: "${toolName}" was not called: the server was stopped or removed from mcp_servers before the call's turn came`,
    );
  }

  /**
   * Applies a new `mcp_servers` mapping: only added, removed or changed entries are touched. Reloads run
   * one after the other: two quick SIGHUPs must not both replace a server mid-stop (the later config is
   * the one that stays). One waiting behind another is replaced by the next that comes: after ten quick
   * SIGHUPs only the last mapping is applied, rather than each superseded one starting and stopping its
   * servers in turn; the replaced reloads answer with its summary.
   */
  reload(servers: Readonly<Record<string, McpServerEntry>>): Promise<ReloadSummary> {
    const waiting = this.waitingReload;
    if (waiting !== undefined) {
      waiting.request.servers = servers;
      return waiting.done;
    }
    const request = { servers };
    const done = this.reloading
      .then(() => {
        if (this.waitingReload?.request === request) this.waitingReload = undefined;
        return this.applyServers(request.servers);
      })
      .finally(() => {
        this.reloadsInFlight--;
      });
    // The first of a series goes as it is; one that comes while a reload runs waits, and may be replaced.
    if (this.reloadsInFlight > 0) this.waitingReload = { request, done };
    this.reloadsInFlight++;
    this.reloading = done.catch(() => undefined);
    return done;
  }

  private async applyServers(servers: Readonly<Record<string, McpServerEntry>>): Promise<ReloadSummary> {
    const summary: { [K in keyof Required<Omit<ReloadSummary, "endedByStop" | "outcomes">>]: string[] } = {
      added: [],
      removed: [],
      changed: [],
      disabled: [],
      enabled: [],
      unchanged: [],
      retried: [],
      started: [],
    };
    // The servers removed, and below the changed ones, are stopped side by side: one after another, 40
    // changed stdio servers took ~6 s, and servers slow to stop seconds each.
    const gone = [...this.runtimes].filter(([name]) => !Object.hasOwn(servers, name));
    // A server whose url the new file changes (or that it removes) may offer the stream there.
    for (const name of [...this.refusedStreams.keys()]) {
      const url = Object.hasOwn(servers, name) ? servers[name]?.url : undefined;
      if (url === undefined || url !== this.runtimes.get(name)?.entry.url) this.refusedStreams.delete(name);
    }
    const stopping = gone.map(([, rt]) => this.remove(rt));
    for (const [name] of gone) summary.removed.push(name);
    // Every server stays callable while the reload runs (stopping a changed server takes seconds): an
    // unchanged one as it is, a changed one through its old runtime, whose calls go to the new one once
    // it is added (see afterStop). The map is put in the new configuration's order at the end.
    const previous = new Map(this.runtimes);
    const replaced: Promise<void>[] = [];
    for (const [name, entry] of serverEntries(servers)) {
      const rt = previous.get(name);
      const sameEntry = rt !== undefined && rt.print === fingerprint(name, entry);
      if (sameEntry && !renderedAnew(rt, this.options.scope())) {
        summary.unchanged.push(name);
        // A reload is also "try again now" for a server waiting out its backoff (a secret added to
        // .env, a login just done): it does not wait up to five minutes for the next attempt.
        // (Also one still closing its lost session: it connects as soon as that is done.)
        const state = connectionState(rt.actor.getSnapshot());
        const notConnected = state === "failed" || state === "reconnecting";
        if (notConnected) rt.actor.send({ type: "CONNECT" });
        // One whose backoff retry is under way already renders what the reload read: that try is its
        // retry (it is not started twice), and the report waits for its outcome as for any retry.
        if (notConnected || retrying(rt)) {
          // The user acted (and wants to know whether it helped): the same failure is warned about again.
          rt.streak.warnedFailure = undefined;
          summary.retried.push(name);
          this.awaitConnect(rt, "retry");
        }
        continue;
      }
      // A retry under way that rendered `.env` as it was before (a line added since) would only fail
      // again: it is given up and the server connects anew with the new values, as a retry of a server
      // that was not connected, not as a change of its entry.
      if (sameEntry && retrying(rt)) {
        summary.unchanged.push(name);
        summary.retried.push(name);
        replaced.push(
          this.remove(rt).then(() => this.awaitConnect(this.add(name, entry, rt.samplingTimes), "retry")),
        );
        continue;
      }
      // A server that was `enabled: false` had no connection: it is started, not reconnected; one that
      // stays `enabled: false` is changed, not stopped (nothing ran).
      const list =
        rt === undefined
          ? summary.added
          : !entry.enabled
            ? rt.entry.enabled
              ? summary.disabled
              : summary.changed
            : rt.entry.enabled
              ? summary.changed
              : summary.enabled;
      list.push(name);
      // A lazy server not called yet had no connection to restart: the reload starts it (unless it stays lazy).
      if (
        rt !== undefined &&
        list === summary.changed &&
        entry.enabled &&
        connectionState(rt.actor.getSnapshot()) === "lazy"
      )
        summary.started.push(name);
      // A changed server that had a connection (or was making one) is reconnected; an added or enabled one,
      // and a lazy one not called yet, is connected.
      const how = list === summary.changed && !summary.started.includes(name) ? "reconnect" : "connect";
      if (rt === undefined) this.awaitConnect(this.add(name, entry), how);
      else
        replaced.push(
          this.remove(rt).then(() => this.awaitConnect(this.add(name, entry, rt.samplingTimes), how)),
        );
    }
    await Promise.all([...stopping, ...replaced]);
    const current = new Map(this.runtimes);
    this.runtimes.clear();
    for (const name of serverNames(servers)) this.runtimes.set(name, current.get(name) as Runtime);
    this.servers = servers;
    this.rebuild();
    this.options.logger.info({ ...summary }, "[mcp] configuration reloaded");
    return summary;
  }

  async stop(): Promise<void> {
    // After a reload in progress, which could otherwise start a server once this stop has passed.
    await this.reloading;
    // A connect a reload started that this stop ends is said: the reload's report (`svc mcp reload`) and
    // its log line came before it, and the server is not connected until the next start.
    const ended: string[] = [];
    for (const [rt, how] of this.reloadConnects) {
      if (this.runtimes.get(rt.name) !== rt || !stillConnecting(rt)) continue;
      ended.push(rt.name);
      this.options.logger.info(
        { server: rt.name },
        `[mcp] ${rt.name}: the reload's ${how} was ended by the gateway's stop before it connected — the next start connects it`,
      );
    }
    this.reloadConnects.clear();
    this.endedByStop = ended;
    await Promise.all([...this.runtimes.values()].map((rt) => this.remove(rt)));
    this.runtimes.clear();
    this.rebuild();
  }

  /**
   * The servers a reload connected, reconnected or tried again whose connect the stop ended before they
   * connected (empty until the stop).
   */
  reloadConnectsEndedByStop(): readonly string[] {
    return this.endedByStop;
  }

  /**
   * Of `servers` (a reload's), how the connect their reload waited for first ended, or that it is under way;
   * for one it started no connect for, lazy or skipped (enabled: false), as it was then.
   */
  reloadConnectOutcomes(servers: readonly string[]): Record<string, ReloadConnectOutcome> {
    const outcomes: Record<string, ReloadConnectOutcome> = {};
    for (const name of servers) {
      const outcome = this.reloadOutcomes.get(name);
      if (outcome !== undefined) outcomes[name] = outcome;
    }
    return outcomes;
  }

  /** `rt`'s connect, started or tried again by a reload, is followed until it connects or fails. */
  private awaitConnect(rt: Runtime, how: ReloadConnect): void {
    if (stillConnecting(rt)) {
      this.reloadConnects.set(rt, how);
      this.reloadOutcomes.set(rt.name, { state: "connecting" });
      return;
    }
    const snapshot = rt.actor.getSnapshot();
    const state = connectionState(snapshot);
    // None started (lazy, enabled: false): said as it is now, since the gateway's stop makes it stopped.
    const outcome = state === "lazy" || state === "skipped" ? { state } : settledOutcome(snapshot);
    if (outcome === undefined) this.reloadOutcomes.delete(rt.name);
    else this.reloadOutcomes.set(rt.name, outcome);
  }

  private runtime(server: string): Runtime {
    const rt = this.runtimes.get(server);
    if (rt === undefined) {
      throw new SvcError(
        "usage",
        `no MCP server named "${server}" in mcp_servers (known: ${[...this.runtimes.keys()].join(", ") || "none"})`,
      );
    }
    return rt;
  }

  /** The server's refusal of its event stream at `url`, kept by the hub (`refusedStreams`). */
  private streamRefusal(server: string, url: string): StreamRefusal {
    return {
      refused: () => this.refusedStreams.get(server) === url,
      refuse: () => {
        this.refusedStreams.set(server, url);
      },
    };
  }

  /**
   * `samplingTimes`: those of the runtime this one replaces (a reload that changed the entry or retries
   * it), so the server keeps the sampling requests of its minute counted, as across a reconnect.
   */
  private add(name: string, entry: McpServerEntry, samplingTimes: number[] = []): Runtime {
    const cache =
      entry.enabled && entry.lazy ? readSchemaCache(this.options.cacheDir, name, entry) : undefined;
    const startIn: StartIn = !entry.enabled ? "skipped" : cache !== undefined ? "lazy" : "connecting";
    const holder: { rt?: Runtime } = {};
    const machine = mcpConnectionMachine.provide({
      actions: {
        // A stdio server that never answers often says why on stderr (a login URL it waits on, a prompt).
        connectTimedOut: assign({
          lastError: ({ context }) =>
            holder.rt === undefined
              ? connectTimeoutMessage(context.connectTimeoutMs)
              : withConnectSoFar(holder.rt, connectTimeoutMessage(context.connectTimeoutMs)),
        }),
      },
      actors: {
        connect: fromPromise<Connected, { name: string; attempt: number }>(({ signal }) => {
          const rt = holder.rt as Runtime;
          const connecting = connectRuntime(
            rt,
            {
              ...this.options,
              onToolsChanged: () => this.toolsChanged(),
              streamRefusal: (server, url) => this.streamRefusal(server, url),
            },
            signal,
          );
          rt.connecting = connecting;
          return connecting;
        }),
        ping: fromPromise<void, { session: unknown }>(({ input }) =>
          (input.session as McpSession).ping(entry.connect_timeout * 1000).catch((err: unknown) => {
            throw new Error(sessionRequestFailure(err, holder.rt?.secrets ?? [], entry.connect_timeout), {
              cause: err,
            });
          }),
        ),
        close: fromPromise<void, { session: unknown }>(async ({ input }) => {
          await (input.session as McpSession | undefined)?.close();
        }),
      },
    });
    const toolset =
      cache === undefined
        ? { tools: [], collisions: [] }
        : buildToolset(name, cache.tools, cache.capabilities, renderToolsPolicy(entry, this.options.scope()));
    const input = connectionInput(
      name,
      entry,
      startIn,
      cache === undefined ? undefined : toolset.tools.length,
      { interactive: this.options.interactive === true },
    );
    // The runtime exists before its actor: an actor spawned into the gateway's system starts at once,
    // and its first connect reads the runtime.
    const { hiddenValues } = this.options;
    const withHidden = combinedSecrets(() => rt.entrySecrets, hiddenValues);
    const rt = {
      name,
      entry,
      print: fingerprint(name, entry),
      queue: new CallQueue(entry.supports_parallel_tool_calls),
      toolset,
      warnings: [],
      cachedToolCount: cache === undefined ? undefined : toolset.tools.length,
      // A disabled server, or one that connects eagerly (and may fail to), with a cache from an earlier
      // connect: the cache is there, as the offline `svc mcp list` shows; its tools are not registered.
      ...(cache === undefined
        ? { cachedOnDisk: readSchemaCache(this.options.cacheDir, name, entry) !== undefined }
        : {}),
      listed: new Set(cache?.tools.map((t) => t.name)),
      era: undefined,
      entrySecrets: [],
      // The entry's credentials and the gateway's own, read when a server's text is shown: the same list
      // while neither changed (each stderr line, log message and progress message is redacted with it).
      get secrets(): readonly string[] {
        return withHidden();
      },
      set secrets(secrets: readonly string[]) {
        this.entrySecrets = secrets;
      },
      stderrSoFar: [],
      stdoutSoFar: [],
      loggedCollisions: new Set(),
      streak: noStreak(),
      samplingTimes,
    } as Omit<Runtime, "actor"> as Runtime;
    holder.rt = rt;
    const system = this.options.system;
    const actor =
      system === undefined
        ? createActor(machine, {
            id: this.actorName(name),
            input,
            ...(this.options.inspect === undefined ? {} : { inspect: this.options.inspect }),
            ...(this.options.clock === undefined ? {} : { clock: this.options.clock }),
          })
        : system.spawn(this.actorName(name), machine, input);
    (rt as { actor: Runtime["actor"] }).actor = actor;
    this.runtimes.set(name, rt);
    let last = "";
    let recycling = false;
    actor.subscribe({
      next: (snapshot) => {
        // The process stopped by svc's own policy, not a failure: said once, with the key that did it, so
        // the "connected" line of its respawn at the next call is not left unexplained.
        const recycles = snapshot.matches("recycling");
        if (recycles && !recycling)
          this.options.logger.info({ server: name }, recycledLine(name, entry, snapshot.context.recycledBy));
        recycling = recycles;
        // Its connection stayed up STABLE_CONNECTION_MS (the backoff starts over) or was recycled: the
        // failures before it are one streak, ended now (a context change only, so before the key's check).
        const state = connectionState(snapshot);
        // (A connection failing at a call — a refused token refresh — has no downAs yet: that is no end.)
        if (
          rt.streak.failures > 0 &&
          snapshot.context.downAs === undefined &&
          (state === "connected" || state === "recycled")
        )
          endStreak(rt.streak, this.options.logger, name, state === "connected");
        const key = `${state}|${snapshot.context.lastError ?? ""}|${rt.toolset.tools.length}`;
        if (key === last) return;
        last = key;
        // A lost connection is worth a line too, not only a failed reconnect (a server restart that
        // succeeds at once would otherwise leave no trace).
        // The first outcome of a connect a reload waited for: its report says it (a server that crashes right
        // after its handshake is out of connecting a moment only at each retry).
        if (state !== "connecting" && state !== "reconnecting" && this.reloadConnects.delete(rt)) {
          const outcome = settledOutcome(snapshot);
          if (outcome !== undefined && this.runtimes.get(name) === rt) this.reloadOutcomes.set(name, outcome);
        }
        if (state !== "connecting" && !this.settledOnce.has(rt)) {
          this.settledOnce.add(rt);
          this.rebuild();
        }
        if (snapshot.context.lastError !== undefined && (state === "failed" || state === "reconnecting")) {
          const line = `[mcp] ${serverScoped(name, snapshot.context.lastError)}${state === "reconnecting" ? " — reconnecting" : ""}`;
          // Once per failure streak: a server that fails the same way at each backoff retry (a command not
          // found, a process crashing after each handshake) would otherwise repeat it all day; a different
          // failure is said at once.
          logFailure(rt.streak, this.options.logger, name, line);
        }
        this.statusChanged();
      },
      error: (err) =>
        this.options.logger.error(
          { server: name, err: describeError(err) },
          `[mcp] ${name}: connection actor failed`,
        ),
    });
    actor.start();
    return rt;
  }

  private async remove(rt: Runtime): Promise<void> {
    if (rt.actor.getSnapshot().status === "active") {
      rt.actor.send({ type: "STOP" });
      await waitFor(rt.actor, (s) => s.status === "done").catch(() => undefined);
    }
    // A connect given up by the stop (a server still starting, one waiting on a login) settles only once
    // its process is gone (stdin closed, then SIGTERM and SIGKILL to its group): wait for it, or the
    // gateway could exit first and leave a server that ignores SIGTERM running as an orphan.
    if (rt.connecting !== undefined) await settledWithin(rt.connecting, ABANDONED_CONNECT_WAIT_MS);
    if (this.options.system === undefined) rt.actor.stop();
    else this.options.system.stopChild(this.actorName(rt.name));
  }

  private actorName(server: string): string {
    return `${this.options.actorPrefix ?? "mcp:"}${server}`;
  }

  /**
   * A listing changed a server's toolset (its connect, or `tools/list_changed`): the registry is rebuilt
   * and the status published, since a listing while connected makes no snapshot of the actor.
   */
  private toolsChanged(): void {
    this.rebuild();
    this.statusChanged();
  }

  private statusChanged(): void {
    this.options.onStatus?.(this.status());
    for (const watcher of [...this.statusWatchers]) watcher();
  }

  private rebuild(): void {
    this.registry = mergeToolsets(
      [...this.runtimes.values()].map((rt) => [rt.name, rt.toolset, !this.settledOnce.has(rt)] as const),
    );
    const own = new Set([...this.runtimes.values()].flatMap((rt) => rt.toolset.collisions));
    for (const collision of this.registry.collisions) {
      if (own.has(collision) || this.reported.has(collision)) continue;
      this.reported.add(collision);
      this.options.logger.warn({}, `[mcp] tool name collision: ${collision}`);
    }
  }
}

/**
 * The log line of a stdio process recycled (`idle_timeout_seconds`, `max_lifetime_seconds`): why, and that
 * this is no failure, since its next call starts it again.
 */
export function recycledLine(name: string, entry: McpServerEntry, by: "idle" | "age" | undefined): string {
  const why =
    by === "age"
      ? `it reached max_lifetime_seconds (${entry.max_lifetime_seconds} s)`
      : `idle for idle_timeout_seconds (${entry.idle_timeout_seconds} s)`;
  return `[mcp] ${name}: recycled, its process stopped: ${why}; the next call starts it again`;
}

/**
 * A live (or connecting) server whose `${VAR}` values in `.env` changed since its connect: a rotated token
 * counts as a change of the entry, so the reload reconnects it instead of keeping the old credential. A
 * server that failed, waits out a backoff, was recycled or is lazy connects anew by itself, rendering
 * the new values then.
 */
function renderedAnew(rt: Runtime, scope: InterpolationScope): boolean {
  const state = connectionState(rt.actor.getSnapshot());
  if (rt.rendered === undefined || (state !== "connected" && state !== "connecting")) return false;
  return rt.rendered !== renderedFingerprint(rt.name, rt.entry, scope);
}

/** What a reload did to a server whose connect it waits for: connected it, reconnected it or tried it again. */
type ReloadConnect = "connect" | "reconnect" | "retry";

/** A connect's outcome a reload's report gives: connected, or failed with why (none for another state). */
function settledOutcome(
  snapshot: ReturnType<Runtime["actor"]["getSnapshot"]>,
): ReloadConnectOutcome | undefined {
  const state = connectionState(snapshot);
  if (state === "connected") return { state };
  if (state !== "failed") return undefined;
  const { lastError } = snapshot.context;
  return lastError === undefined ? { state } : { state, lastError };
}

/** A connect under way, or one a server that lost its connection waits to make (closing it, a backoff). */
function stillConnecting(rt: Runtime): boolean {
  const state = connectionState(rt.actor.getSnapshot());
  return state === "connecting" || state === "reconnecting";
}

/**
 * A connect under way after the server failed or lost its connection (a backoff retry, a call's connect),
 * not connected since: a server that was not connected, being tried again.
 */
function retrying(rt: Runtime): boolean {
  return connectionState(rt.actor.getSnapshot()) === "connecting" && rt.streak.failures > 0;
}

/**
 * How long a stop waits for a given-up connect: a stdio process's two grace periods (stdin closed, then
 * SIGTERM) and a little more; a connect held by something else (a browser login) does not hold the stop.
 */
const ABANDONED_CONNECT_WAIT_MS = 2 * EXIT_GRACE_MS + 1000;

async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([promise.then(noop, noop), bound]);
  clearTimeout(timer);
}

function noop(): void {}
