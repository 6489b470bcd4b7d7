import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { serverGone } from "../actors/mcp/serverGone.js";
import type { RegisteredTool } from "../actors/mcp/toolNames.js";
import { describeError, isSvcError } from "../errors.js";
import { imageLine } from "./imageLine.js";
import { resourceImageType } from "./modelImageTypes.js";
import { downWithoutTools, type ServerWithoutTools } from "./serversWithoutTools.js";
import { FAILED_WITHOUT_WHY } from "./tools/outcome.js";
import type { AgentTool, JsonSchema, ToolContent, ToolOutcome } from "./tools/tool.js";

/** The part of the MCP hub a run uses (src/actors/mcp/hub.ts). */
export interface McpToolSource {
  tools(): RegisteredTool[];
  status(): ReadonlyArray<{ readonly name: string; readonly state: string; readonly lastError?: string }>;
  settled(server: string): Promise<unknown>;
  /** Calls `watcher` at each change of a server's status; the function returned stops it. */
  watchStatus?(watcher: () => void): () => void;
  /** `onSent`: told when the call's request goes to the server (again for a replay). */
  callRegistered(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onSent?: () => void,
  ): Promise<CallToolResult>;
}

/** How long a run waits for a server's first connect before it goes on without that server's tools. */
export const FIRST_CONNECT_WAIT_MS = 30_000;

/**
 * A line naming base64 content no model API takes in a tool result (audio, a binary resource that is no
 * image).
 */
const notShown = (what: string, mimeType: string | undefined, base64: string) =>
  `[${what}: ${mimeType ?? "unknown type"}, ${Buffer.byteLength(base64, "base64")} bytes — not shown: tool results reach the model as text and images only]`;

function contentOf(result: CallToolResult): ToolContent[] {
  const parts: ToolContent[] = [];
  for (const block of result.content ?? []) {
    if (block.type === "text") parts.push({ type: "text", text: block.text });
    else if (block.type === "image")
      parts.push({ type: "image", data: block.data, mimeType: block.mimeType });
    // Their base64 as JSON text would fill the model's context with nothing it can read.
    else if (block.type === "audio")
      parts.push({ type: "text", text: notShown("audio", block.mimeType, block.data) });
    else if (block.type === "resource" && "blob" in block.resource) {
      const { uri, mimeType, blob } = block.resource;
      // An image held in a resource (read_resource of a screenshot) is an image, as an image block is.
      const image = resourceImageType(mimeType, blob);
      parts.push(
        image === undefined
          ? { type: "text", text: notShown(`resource ${uri}`, mimeType, blob) }
          : { type: "image", data: blob, mimeType: image },
      );
    } else parts.push({ type: "text", text: JSON.stringify(block) });
  }
  // No content to read (none, or only blank text a server adds for older clients): the structured content.
  if (result.structuredContent !== undefined && parts.every((p) => p.type === "text" && p.text.trim() === ""))
    return [{ type: "text", text: JSON.stringify(result.structuredContent) }];
  return parts;
}

/** A tool's answer as the model gets it: `isError` results become tool errors with the server's text. */
export function outcomeOf(result: CallToolResult): ToolOutcome {
  const content = contentOf(result);
  if (result.isError === true) {
    const text = content
      .map((c) =>
        c.type === "text"
          ? c.text
          : imageLine(c.mimeType, c.data, undefined, "a failed call's result reaches the model as text"),
      )
      .join("\n");
    return { ok: false, error: text.trim() === "" ? FAILED_WITHOUT_WHY : text };
  }
  return { ok: true, content };
}

/** Why a call failed, for the model; a refusal says why and what the operator can change. */
function callError(err: unknown, context: { unattended: boolean }): string {
  const message = describeError(err);
  if (isSvcError(err, "approval_denied") && context.unattended)
    return `refused: ${message}. No one is present to approve calls in a webhook or cron run (the operator can set trust: full on the server, or gateway.approvals: allow); the tool was not run`;
  // The session or connection was lost under a call that is not read-only: the model must not take the
  // failure for "it did not run" and call again; the error's name says so before the message explains.
  if (isSvcError(err, "outcome_uncertain")) return `outcome_uncertain: ${message}`;
  return message;
}

/**
 * Why a tool the run was offered can no longer be called, when a reload removed or disabled its server or
 * its server's tools changed since the run began (tools/list_changed): the server no longer lists it, or its
 * registered name now belongs to another of the server's tools (one that lost the name to it in a
 * collision), which must not run on arguments meant for this one. Undefined while the name is still this tool's.
 */
function noLongerListed(hub: McpToolSource, tool: RegisteredTool): string | undefined {
  const live = hub.tools().find((t) => t.name === tool.name);
  if (live !== undefined && live.server === tool.server && live.original === tool.original) return undefined;
  const server = hub.status().find((s) => s.name === tool.server);
  if (server === undefined)
    return `mcp_servers.${tool.server} is no longer configured (a reload during this run removed it); ${JSON.stringify(tool.original)} was not run`;
  if (server.state === "skipped")
    return `mcp_servers.${tool.server} is disabled (a reload during this run set enabled: false); ${JSON.stringify(tool.original)} was not run`;
  // Reconnected by a reload that changed its entry (its tools are registered again once it has listed them),
  // and that connect failed: the server's tools did not change, it cannot be reached.
  if (live === undefined && server.state === "failed")
    return `${server.lastError ?? `mcp_servers.${tool.server}: the connect failed`} — a reload during this run changed the server's entry and it could not be connected again; ${JSON.stringify(tool.original)} was not run`;
  const other =
    live === undefined
      ? ""
      : `; ${tool.name} is now ${live.server === tool.server ? "its" : `mcp_servers.${live.server}'s`} tool ${JSON.stringify(live.original)}, which this run was not offered`;
  return `mcp_servers.${tool.server} no longer offers ${JSON.stringify(tool.original)} (its tools changed during this run${other}); the tool was not run`;
}

/** Whether `tool`'s server is connecting with none of its tools registered (a reload's reconnect of a changed entry). */
function reconnecting(hub: McpToolSource, tool: RegisteredTool): boolean {
  return (
    hub.status().some((s) => s.name === tool.server && s.state === "connecting") &&
    !hub.tools().some((t) => t.server === tool.server)
  );
}

/** Waits for `server`'s connect to end; false when `signal` (the run) ended first. */
async function settledOrEnded(hub: McpToolSource, server: string, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    // It rejects for a server a later reload removed: the check after the wait names that.
    return await Promise.race([
      hub.settled(server).then(
        () => true,
        () => true,
      ),
      ended,
    ]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
  }
}

/** One registered MCP tool as an agent tool: the call goes through the hub (trust, queue, lazy connect, timeout). */
export function mcpAgentTool(hub: McpToolSource, tool: RegisteredTool): AgentTool {
  const schema = tool.inputSchema as Record<string, unknown>;
  return {
    name: tool.name,
    // An empty or blank description (a server's zero value) tells the model no more than none.
    description:
      tool.description !== undefined && tool.description.trim() !== ""
        ? tool.description
        : `${tool.original} (MCP server ${tool.server})`,
    inputSchema: (schema.type === "object" ? schema : { ...schema, type: "object" }) as JsonSchema,
    // A command agent's own MCP client sees the tool as it would on the server itself (read-only tools
    // told apart, structured results checked against the output schema).
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    timedFromSend: true,
    async execute(args, context) {
      // MCP arguments are an object: JSON of another kind (`[]`, `"x"`, `null`) is refused rather than
      // sent as `{}`, which would run a tool that needs no arguments on input the model never meant.
      // (Empty arguments, which some servers send for a tool without parameters, reach here as `{}`.)
      if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args)))
        return { ok: false, error: "arguments must be a JSON object; the tool was not run" };
      const input = (args ?? {}) as Record<string, unknown>;
      let changed = noLongerListed(hub, tool);
      // A reload that changed the server's entry reconnects it, and its tools are registered again once it
      // has listed them: the call waits for that connect, as one to a recycled process waits for its
      // respawn, and the new listing decides. The run ending gives the wait up, the connect goes on.
      if (changed !== undefined && reconnecting(hub, tool)) {
        if (!(await settledOrEnded(hub, tool.server, context.signal)))
          return {
            ok: false,
            error: `mcp_servers.${tool.server}: ${JSON.stringify(tool.original)} was not called: the run ended while the server was connecting`,
          };
        changed = noLongerListed(hub, tool);
      }
      if (changed !== undefined) return { ok: false, error: changed };
      try {
        const result = await hub.callRegistered(tool.name, input, context.signal, context.sent);
        return { ...outcomeOf(result), mcpResult: result };
      } catch (err) {
        // Its turn (behind the server's earlier call) came after a reload disabled or removed the server: the
        // run is told so as of a call made after that reload.
        const gone = serverGone(err) ? noLongerListed(hub, tool) : undefined;
        return { ok: false, error: gone ?? callError(err, context) };
      }
    },
  };
}

/** What a run is told of the MCP servers it selected that it waits for or goes on without. */
export interface McpWaitReports {
  /**
   * Which servers the run waits for, before it waits (a run that times out meanwhile names them): told again
   * when, those connects over, it waits for others a reload during the wait is connecting again.
   */
  readonly onWait?: (servers: readonly string[]) => void;
  /**
   * Which of them were still connecting when the wait ended (the run goes on without their tools), and how
   * long the run waited: up to `waitMs`, less when a reload that changed a server's entry was still
   * replacing its connection when the wait ended otherwise.
   */
  readonly onGaveUp?: (servers: readonly string[], waitedMs: number) => void;
  /**
   * Which are down with none of their tools registered once any wait is over (failed, or reconnecting after
   * a lost connection): the run goes on without their tools.
   */
  readonly onDown?: (servers: readonly ServerWithoutTools[]) => void;
}

/**
 * Whether a server with no tools registered is making a connect the run can wait for: its first, or the one
 * a reload that changed its entry makes (`stopped`: the reload is replacing the runtime that had it).
 */
const comingUp = (state: string): boolean => state === "connecting" || state === "stopped";

/**
 * The registered tools of `servers` as agent tools. A server still making its first connect is waited
 * for (bounded), so a run that starts with the gateway is offered its tools — through a reload that changes
 * its entry meanwhile, whose new connect is waited for in what is left of the wait, as is that of any other
 * selected server (connected when the run began) whose entry that reload changed; lazy servers are offered
 * their cached tools and connect on the first call, and a server reconnecting with its tools registered
 * (a recycled process respawning) holds no run up.
 */
export async function mcpAgentTools(
  hub: McpToolSource,
  servers: readonly string[],
  signal: AbortSignal,
  waitMs = FIRST_CONNECT_WAIT_MS,
  reports: McpWaitReports = {},
): Promise<AgentTool[]> {
  if (servers.length === 0) return [];
  const wanted = new Set(servers);
  // Only a first connect is waited for: a server whose tools are registered already (a lazy one from its
  // cache, a recycled process respawning) is offered them at once, and its call waits for the connect.
  const withoutTools = () => {
    const known = new Set(hub.tools().map((tool) => tool.server));
    return hub.status().filter((s) => wanted.has(s.name) && comingUp(s.state) && !known.has(s.name));
  };
  const connecting = withoutTools();
  if (connecting.length > 0) {
    // The servers a later round may wait for: those making their first connect as the run began, and those
    // connected then, whatever their tools (a filter may register none), which come up again without tools
    // only under a reload that changed their entry. One failed (waiting out its backoff) or reconnecting as the
    // run began is not waited for, its retry during the wait neither; nor is one seen failed or reconnecting
    // at any moment of the wait (a reload's new connect failing, a connection lost) while its own retry is
    // under way, which is no first connect: once seen connected again, it is waited for as at the run's start
    // (a reload then changing its entry connects it again).
    const startedWith = new Set([
      ...connecting.map((s) => s.name),
      ...hub
        .status()
        .filter((s) => wanted.has(s.name) && s.state === "connected")
        .map((s) => s.name),
    ]);
    const down = new Set<string>();
    const waitable = (server: string) => startedWith.has(server) && !down.has(server);
    // One reading of the hub's status for every server looked at (a status change tells each waiting run).
    const look = (servers: Iterable<string>) => {
      const states = new Map(hub.status().map((s) => [s.name, s.state] as const));
      for (const server of servers) {
        const state = states.get(server);
        if (state === "failed" || state === "reconnecting") down.add(server);
        else if (state === "connected") down.delete(server);
      }
    };
    // Any of them seen down while the run waits for others is set aside then, not only those of the round
    // under way: a connect a reload made failing and retrying, a connection lost and its reconnect trying
    // again, are out of connecting a moment only, and would be in it again when their round came.
    const unwatch = hub.watchStatus?.(() => look(startedWith));
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let over = false;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      signal.addEventListener("abort", () => resolve(), { once: true });
    }).then(() => {
      over = true;
    });
    // Each round waits for the servers coming up with no tools registered: first those still making their
    // first connect, then any other selected server a reload during the wait is connecting again (one that
    // was connected when the run began, whose entry it changed), until none is left or the wait is over.
    // (hub.settled goes on with the connect of a runtime a reload put in place of the one it waited on.)
    let round = connecting;
    while (round.length > 0 && !over) {
      reports.onWait?.(round.map((s) => s.name));
      // A server whose wait settles failed is dropped as it settles: its retry may be connecting again (no
      // tools) by the time the others' waits are over.
      await Promise.race([
        Promise.allSettled(round.map((s) => hub.settled(s.name).then(() => look([s.name])))),
        giveUp,
      ]);
      look(round.map((s) => s.name));
      const next = withoutTools().filter((s) => waitable(s.name));
      // The same servers in the same states after their wait settled: nothing came of it (one still stopped is
      // replaced by nothing, the hub's stop; one that failed and is retrying is not waited for again), and
      // waiting on them once more would settle at once, a loop that never lets the wait's timer fire.
      const same =
        next.length === round.length &&
        next.every((s, i) => s.name === round[i]?.name && s.state === round[i]?.state);
      round = same ? [] : next;
    }
    clearTimeout(timer);
    unwatch?.();
    // Any selected server still coming up with no tools registered, whether the run waited for it or a
    // reload during the wait changed its entry: the run goes on without its tools, and says so.
    const still = withoutTools();
    if (still.length > 0 && !signal.aborted)
      reports.onGaveUp?.(
        still.map((s) => s.name),
        Math.min(waitMs, performance.now() - started),
      );
  }
  const registered = hub.tools();
  // A server that is down has no tools to offer: the run is told, as it is of one still connecting.
  const down = downWithoutTools(hub.status(), registered, servers);
  if (down.length > 0 && !signal.aborted) reports.onDown?.(down);
  return registered.filter((tool) => wanted.has(tool.server)).map((tool) => mcpAgentTool(hub, tool));
}
