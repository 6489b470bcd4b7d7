import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ActorOptions, type AnyActorLogic, createActor, fromPromise, waitFor } from "xstate";
import type { InterpolationScope } from "../../config/interpolate.js";
import { isTrusted, type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { describeError, SvcError } from "../../errors.js";
import type { Logger } from "../../io/log.js";
import { type ConnectOptions, connectServer, type OAuthProviderFor } from "../../io/mcp/connect.js";
import { fingerprint, readSchemaCache, writeSchemaCache } from "../../io/mcp/schemaCache.js";
import type { McpSession } from "../../io/mcp/session.js";
import {
  type Connected,
  connectionState,
  type McpConnectionActor,
  type McpConnectionInput,
  mcpConnectionMachine,
  type StartIn,
} from "../../machines/mcpConnection.js";
import type { ApprovalSurface } from "./approvals.js";
import { isRequestTimeout, isSessionExpired } from "./callErrors.js";
import { CallQueue } from "./callQueue.js";
import { type SamplingRunner, serverRequestHandlers } from "./serverRequests.js";
import type { ServerStatus } from "./status.js";
import { buildToolset, mergeToolsets, type RegisteredTool, type Toolset } from "./toolNames.js";
import { runUtilityTool } from "./utilityTools.js";

export interface HubOptions {
  readonly servers: Readonly<Record<string, McpServerEntry>>;
  /** `<profile root>/mcp-cache`. */
  readonly cacheDir: string;
  /** Re-read at every connect (the profile's `.env`, then the environment). */
  readonly scope: () => InterpolationScope;
  readonly logger: Logger;
  readonly approvals: ApprovalSurface;
  readonly runner?: SamplingRunner;
  readonly oauthProviderFor?: OAuthProviderFor;
  /** True only for a login started from a terminal; background (re)connects are never interactive. */
  readonly interactive?: boolean;
  readonly clock?: ActorOptions<AnyActorLogic>["clock"];
  /** The Stately inspector (`svc gateway run --inspect`). */
  readonly inspect?: ActorOptions<AnyActorLogic>["inspect"];
  readonly now?: () => number;
  readonly parentEnv?: NodeJS.ProcessEnv;
  /** Called after every status change (the gateway persists it for `svc mcp list`). */
  readonly onStatus?: (statuses: ServerStatus[]) => void;
}

export interface ReloadSummary {
  readonly added: string[];
  readonly removed: string[];
  readonly changed: string[];
  readonly unchanged: string[];
}

interface Runtime {
  readonly name: string;
  readonly entry: McpServerEntry;
  readonly print: string;
  readonly actor: McpConnectionActor;
  readonly queue: CallQueue;
  toolset: Toolset;
  cachedToolCount: number | undefined;
  era: string | undefined;
}

/** Machine input from an entry: keepalive (HTTP default 180 s, stdio only when set, floor 5 s), recycling, timeouts. */
export function connectionInput(
  name: string,
  entry: McpServerEntry,
  startIn: StartIn,
  cachedToolCount?: number,
): McpConnectionInput {
  const kind = transportKind(entry);
  const keepalive = entry.keepalive_interval ?? (kind === "stdio" ? 0 : 180);
  return {
    name,
    kind,
    startIn,
    connectTimeoutMs: entry.connect_timeout * 1000,
    keepaliveMs: keepalive === 0 ? 0 : Math.max(5, keepalive) * 1000,
    idleMs: entry.idle_timeout_seconds * 1000,
    maxLifetimeMs: entry.max_lifetime_seconds * 1000,
    ...(cachedToolCount === undefined ? {} : { cachedToolCount }),
  };
}

const SETTLED = new Set(["connected", "failed", "disabled", "stopped"]);

/** Owns one `mcpConnection` actor per configured server and the merged tool registry (DESIGN.md 4). */
export class McpHub {
  private readonly runtimes = new Map<string, Runtime>();
  private registry: Toolset = { tools: [], collisions: [] };
  private servers: Readonly<Record<string, McpServerEntry>>;

  constructor(private readonly options: HubOptions) {
    this.servers = options.servers;
  }

  start(): void {
    for (const [name, entry] of Object.entries(this.servers)) this.add(name, entry);
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

  collisions(): string[] {
    return [...this.registry.collisions];
  }

  status(): ServerStatus[] {
    return [...this.runtimes.values()].map((rt) => {
      const snapshot = rt.actor.getSnapshot();
      const state = connectionState(snapshot);
      return {
        name: rt.name,
        transport: transportKind(rt.entry),
        state,
        toolCount: state === "lazy" ? (rt.cachedToolCount ?? 0) : rt.toolset.tools.length,
        lazy: rt.entry.lazy,
        cached: rt.cachedToolCount !== undefined,
        ...(rt.era === undefined ? {} : { era: rt.era }),
        ...(snapshot.context.lastError === undefined ? {} : { lastError: snapshot.context.lastError }),
        collisions: rt.toolset.collisions,
      };
    });
  }

  /**
   * Waits until a server is connected, failed or disabled (eager connects run in the background).
   * `connect: true` first wakes a lazy or recycled server (the CLI's `svc mcp tools`).
   */
  async settled(server: string, options: { connect?: boolean } = {}): Promise<ServerStatus> {
    const rt = this.runtime(server);
    const state = connectionState(rt.actor.getSnapshot());
    if (options.connect === true && (state === "lazy" || state === "recycled"))
      rt.actor.send({ type: "CONNECT" });
    await waitFor(rt.actor, (s) => SETTLED.has(connectionState(s)));
    return this.status().find((s) => s.name === server) as ServerStatus;
  }

  /** Calls a tool by its registered `mcp__...` name. */
  callRegistered(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const tool = this.registry.tools.find((t) => t.name === name);
    if (tool === undefined) throw new SvcError("mcp_call", `no MCP tool is registered as ${name}`);
    return this.call(tool.server, tool.original, args, signal);
  }

  /** Calls a tool by the server's own name: approval, per-server queue, connect on demand, timeout, replay rules. */
  call(
    server: string,
    toolName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const rt = this.runtime(server);
    return rt.queue.run(async () => {
      rt.actor.send({ type: "CALL_START" });
      try {
        let session: McpSession | undefined;
        let tool = rt.toolset.tools.find((t) => t.original === toolName);
        if (tool === undefined) {
          session = await this.ensureConnected(rt);
          tool = rt.toolset.tools.find((t) => t.original === toolName);
        }
        if (tool === undefined) {
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${server}: no tool "${toolName}" is registered — run svc mcp tools ${server} (tools.include/exclude match the server's own names)`,
          );
        }
        await this.approve(rt, tool, args, signal);
        session ??= await this.ensureConnected(rt);
        return await this.invoke(rt, session, tool, args, signal);
      } finally {
        rt.actor.send({ type: "CALL_END" });
      }
    });
  }

  /** Applies a new `mcp_servers` mapping: only added, removed or changed entries are touched. */
  async reload(servers: Readonly<Record<string, McpServerEntry>>): Promise<ReloadSummary> {
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: [] };
    for (const [name, rt] of [...this.runtimes]) {
      if (servers[name] !== undefined) continue;
      await this.remove(rt);
      summary.removed.push(name);
    }
    const previous = new Map(this.runtimes);
    this.runtimes.clear();
    for (const [name, entry] of Object.entries(servers)) {
      const rt = previous.get(name);
      if (rt !== undefined && rt.print === fingerprint(name, entry)) {
        this.runtimes.set(name, rt);
        summary.unchanged.push(name);
        continue;
      }
      if (rt !== undefined) await this.remove(rt);
      (rt === undefined ? summary.added : summary.changed).push(name);
      this.add(name, entry);
    }
    this.servers = servers;
    this.rebuild();
    this.options.logger.info({ ...summary }, "[mcp] configuration reloaded");
    return summary;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((rt) => this.remove(rt)));
    this.runtimes.clear();
    this.rebuild();
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

  private add(name: string, entry: McpServerEntry): void {
    const cache =
      entry.enabled && entry.lazy ? readSchemaCache(this.options.cacheDir, name, entry) : undefined;
    const startIn: StartIn = !entry.enabled ? "disabled" : cache !== undefined ? "lazy" : "connecting";
    const holder: { rt?: Runtime } = {};
    const machine = mcpConnectionMachine.provide({
      actors: {
        connect: fromPromise<Connected, { name: string; attempt: number }>(({ signal }) =>
          this.connect(holder.rt as Runtime, signal),
        ),
        ping: fromPromise<void, { session: unknown }>(({ input }) =>
          (input.session as McpSession).ping(entry.connect_timeout * 1000),
        ),
        close: fromPromise<void, { session: unknown }>(async ({ input }) => {
          await (input.session as McpSession | undefined)?.close();
        }),
      },
    });
    const toolset =
      cache === undefined
        ? { tools: [], collisions: [] }
        : buildToolset(name, cache.tools, cache.capabilities, entry.tools);
    const actor = createActor(machine, {
      id: `mcp:${name}`,
      input: connectionInput(name, entry, startIn, cache === undefined ? undefined : toolset.tools.length),
      ...(this.options.inspect === undefined ? {} : { inspect: this.options.inspect }),
      ...(this.options.clock === undefined ? {} : { clock: this.options.clock }),
    });
    const rt: Runtime = {
      name,
      entry,
      print: fingerprint(name, entry),
      actor,
      queue: new CallQueue(entry.supports_parallel_tool_calls),
      toolset,
      cachedToolCount: cache === undefined ? undefined : toolset.tools.length,
      era: undefined,
    };
    holder.rt = rt;
    this.runtimes.set(name, rt);
    let last = "";
    actor.subscribe({
      next: (snapshot) => {
        const key = `${connectionState(snapshot)}|${snapshot.context.lastError ?? ""}|${rt.toolset.tools.length}`;
        if (key === last) return;
        last = key;
        if (snapshot.context.lastError !== undefined && connectionState(snapshot) === "failed") {
          this.options.logger.warn({ server: name }, `[mcp] ${name}: ${snapshot.context.lastError}`);
        }
        this.options.onStatus?.(this.status());
      },
      error: (err) =>
        this.options.logger.error(
          { server: name, err: describeError(err) },
          `[mcp] ${name}: connection actor failed`,
        ),
    });
    actor.start();
  }

  private async remove(rt: Runtime): Promise<void> {
    if (rt.actor.getSnapshot().status === "active") {
      rt.actor.send({ type: "STOP" });
      await waitFor(rt.actor, (s) => s.status === "done").catch(() => undefined);
    }
    rt.actor.stop();
  }

  private async connect(rt: Runtime, signal: AbortSignal): Promise<Connected> {
    const { logger } = this.options;
    const options: ConnectOptions = {
      scope: this.options.scope,
      interactive: this.options.interactive ?? false,
      handlers: serverRequestHandlers({
        server: rt.name,
        entry: rt.entry,
        approvals: this.options.approvals,
        logger,
        ...(this.options.runner === undefined ? {} : { runner: this.options.runner }),
        ...(this.options.now === undefined ? {} : { now: this.options.now }),
      }),
      onStderr: (line) => logger.debug({ server: rt.name }, `[mcp:${rt.name}] ${line}`),
      onLost: (reason) => rt.actor.send({ type: "SESSION_LOST", reason }),
      signal,
      ...(this.options.oauthProviderFor === undefined
        ? {}
        : { oauthProviderFor: this.options.oauthProviderFor }),
      ...(this.options.parentEnv === undefined ? {} : { parentEnv: this.options.parentEnv }),
    };
    const session = await connectServer(rt.name, rt.entry, options);
    try {
      const tools =
        session.capabilities.tools === undefined && session.era === "legacy"
          ? []
          : await session.listTools(rt.entry.connect_timeout * 1000);
      if (signal.aborted) throw new Error("connect was cancelled");
      const capabilities = {
        resources: session.capabilities.resources !== undefined,
        prompts: session.capabilities.prompts !== undefined,
      };
      rt.toolset = buildToolset(rt.name, tools, capabilities, rt.entry.tools);
      rt.era = session.era;
      try {
        writeSchemaCache(this.options.cacheDir, rt.name, rt.entry, tools, capabilities);
        rt.cachedToolCount = rt.toolset.tools.length;
      } catch (err) {
        logger.warn(
          { server: rt.name, err: describeError(err) },
          `[mcp] ${rt.name}: could not write the schema cache`,
        );
      }
      for (const collision of rt.toolset.collisions)
        logger.warn({ server: rt.name }, `[mcp] tool name collision: ${collision}`);
      if (rt.toolset.tools.length === 0)
        logger.info(
          { server: rt.name },
          `[mcp] ${rt.name}: no tools left after filtering; no toolset registered`,
        );
      this.rebuild();
      logger.info(
        { server: rt.name, era: session.era, tools: rt.toolset.tools.length },
        `[mcp] ${rt.name}: connected`,
      );
      return { session, toolCount: rt.toolset.tools.length };
    } catch (err) {
      await session.close().catch(() => undefined);
      throw err;
    }
  }

  private rebuild(): void {
    this.registry = mergeToolsets([...this.runtimes.values()].map((rt) => [rt.name, rt.toolset] as const));
  }

  private async ensureConnected(rt: Runtime): Promise<McpSession> {
    const state = connectionState(rt.actor.getSnapshot());
    if (state === "disabled") {
      throw new SvcError(
        "mcp_connect",
        `mcp_servers.${rt.name} is disabled (enabled: false) — set enabled: true to use it`,
      );
    }
    if (state !== "connected" && state !== "connecting") rt.actor.send({ type: "CONNECT" });
    const snapshot = await waitFor(rt.actor, (s) => {
      if (s.matches("backoff")) queueMicrotask(() => rt.actor.send({ type: "CONNECT" }));
      return SETTLED.has(connectionState(s));
    });
    if (connectionState(snapshot) === "connected") return snapshot.context.session as McpSession;
    const reason = snapshot.context.lastError ?? connectionState(snapshot);
    throw new SvcError(
      "mcp_connect",
      reason.startsWith("mcp_servers.") ? reason : `mcp_servers.${rt.name}: ${reason}`,
    );
  }

  private async approve(
    rt: Runtime,
    tool: RegisteredTool,
    args: Record<string, unknown>,
    outer?: AbortSignal,
  ): Promise<void> {
    if (isTrusted(rt.entry) || tool.readOnly) return;
    const signal = AbortSignal.any([AbortSignal.timeout(rt.entry.timeout * 1000), ...(outer ? [outer] : [])]);
    const approved = await this.options.approvals
      .approve({ server: rt.name, tool: tool.original, args }, signal)
      .catch(() => false);
    if (!approved || signal.aborted) {
      throw new SvcError(
        "approval_denied",
        `mcp_servers.${rt.name}: calling "${tool.original}" needs approval (trust: ${rt.entry.trust}) and it was ${signal.aborted ? "not given in time" : "denied"}`,
      );
    }
  }

  private async invoke(
    rt: Runtime,
    session: McpSession,
    tool: RegisteredTool,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const timeoutMs = rt.entry.timeout * 1000;
    const run = (s: McpSession) =>
      tool.kind === "utility"
        ? runUtilityTool(s, tool.original, args, timeoutMs)
        : s.callTool(tool.original, args, timeoutMs, signal);
    try {
      return await run(session);
    } catch (err) {
      if (isSessionExpired(err)) {
        rt.actor.send({
          type: "SESSION_LOST",
          reason: "the server ended the session (HTTP 404)",
          immediate: true,
        });
        if (!tool.readOnly) {
          throw new SvcError(
            "outcome_uncertain",
            `mcp_servers.${rt.name}: the session expired while "${tool.original}" was being called; it may or may not have run — verify its effect before calling it again`,
          );
        }
        this.options.logger.info(
          { server: rt.name, tool: tool.original },
          `[mcp] ${rt.name}: session expired; replaying read-only ${tool.original}`,
        );
        return run(await this.ensureConnected(rt));
      }
      if (isRequestTimeout(err)) {
        throw new SvcError(
          "mcp_timeout",
          `mcp_servers.${rt.name}: "${tool.original}" did not answer within ${rt.entry.timeout} s (timeout)`,
        );
      }
      throw new SvcError(
        "mcp_call",
        `mcp_servers.${rt.name}: "${tool.original}" failed: ${describeError(err)}`,
        { cause: err },
      );
    }
  }
}
