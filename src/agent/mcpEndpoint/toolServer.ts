import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { InvalidParamsError } from "../../io/mcp/invalidParams.js";
import { summarizeZodError } from "../../io/mcp/transportErrors.js";
import { INEXACT_NUMBER_META } from "../../io/mcpEndpoint/httpHost.js";
import { inexactArguments } from "../../streams/jsonNumbers/inexact.js";
import { argumentsNestTooDeep, TOO_DEEP } from "../toolCallInputs.js";
import { FAILED_WITHOUT_WHY } from "../tools/outcome.js";
import type { AgentTool, ToolContext, ToolOutcome } from "../tools/tool.js";
import type { UnofferedTools } from "../unofferedTools.js";

/**
 * The call's answer: an MCP tool's result as its server gave it (every content block, `structuredContent`,
 * `isError`, `_meta`), a failure without a message said as such; a built-in tool's outcome as content.
 */
function asCallResult(outcome: ToolOutcome): CallToolResult {
  const result = outcome.mcpResult;
  if (result !== undefined)
    return !outcome.ok && outcome.error === FAILED_WITHOUT_WHY
      ? { ...result, content: [{ type: "text", text: FAILED_WITHOUT_WHY }], isError: true }
      : result;
  return outcome.ok
    ? { content: outcome.content.map((part) => ({ ...part })) }
    : { content: [{ type: "text", text: outcome.error }], isError: true };
}

/**
 * The schema the SDK's `Protocol` parses a `tools/call` with before anything else: loose, so a malformed
 * call (no `name`, `arguments` not an object) is answered with JSON-RPC's `-32602` Invalid params naming
 * what is wrong on one line (`Invalid tools/call request: params.name: expected string, received
 * undefined`) — parsed strictly there, it failed as `-32603` Internal error with the issues' JSON. The
 * handler parses the call strictly once it passed.
 */
const LooseCallToolRequestSchema = z.looseObject({
  method: z.literal("tools/call"),
  params: z.unknown().transform((params) => {
    const checked = CallToolRequestSchema.safeParse({ method: "tools/call", params });
    if (checked.success) return params;
    const problem = summarizeZodError(checked.error) ?? "it does not have the expected shape";
    throw new InvalidParamsError(`Invalid tools/call request: ${problem}`);
  }),
});

/** The run's context with a signal that also ends when the MCP client cancels the call or leaves. */
function callContext(context: ToolContext, signal: AbortSignal): ToolContext {
  const analyzeImage = context.analyzeImage?.bind(context);
  return {
    signal,
    route: context.route,
    deliveryId: context.deliveryId,
    profile: context.profile,
    unattended: context.unattended,
    workspace: () => context.workspace(),
    ...(analyzeImage === undefined ? {} : { analyzeImage }),
  };
}

/**
 * An MCP server (the SDK's low-level `Server`, so JSON Schemas pass unchanged) offering exactly `tools`
 * and running them with the run's `context`. `runSignal` ends every call when the run's endpoint closes;
 * `calls` (the run's, shared by the servers of all its POSTs) lets a `notifications/cancelled` end a call
 * another POST is running. A call naming a tool the run was not offered is answered with `unoffered`'s
 * reason when it has one (the tool's MCP server was not connected when the run began: which, why, what to
 * run), as a model run's call is; with "unknown tool" otherwise. Arguments nested deeper than a model run's
 * may be (`argumentsNestTooDeep`), or holding a number a double does not hold (`INEXACT_NUMBER_META`), are
 * refused with its message, and the tool is not run.
 */
export function toolServer(
  tools: readonly AgentTool[],
  context: ToolContext,
  runSignal: AbortSignal,
  calls: Map<string, AbortController> = new Map(),
  unoffered?: UnofferedTools,
): Server {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server({ name: "svc-run", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    })),
  }));
  server.setRequestHandler(LooseCallToolRequestSchema, async (loose, extra) => {
    const request = CallToolRequestSchema.parse(loose);
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return asCallResult({
        ok: false,
        error:
          unoffered?.(request.params.name) ??
          `unknown tool "${request.params.name}": this run does not offer it`,
      });
    }
    const args = request.params.arguments ?? {};
    // Refused as a model run's call is: a server (or a tool's own copy of them) may not take any depth.
    if (argumentsNestTooDeep(args)) return asCallResult({ ok: false, error: TOO_DEEP });
    // Nor a neighbouring number for the one the client wrote (an id past 2^53), which the body's reader marked.
    const inexact = request.params._meta?.[INEXACT_NUMBER_META];
    if (typeof inexact === "string") return asCallResult({ ok: false, error: inexactArguments(inexact) });
    const id = String(extra.requestId);
    const canceled = new AbortController();
    calls.set(id, canceled);
    const signal = AbortSignal.any([context.signal, runSignal, extra.signal, canceled.signal]);
    try {
      return asCallResult(await tool.execute(args, callContext(context, signal)));
    } catch (err) {
      return asCallResult({ ok: false, error: `${tool.name} failed: ${(err as Error).message}` });
    } finally {
      if (calls.get(id) === canceled) calls.delete(id);
    }
  });
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const { requestId, reason } = notification.params;
    if (requestId !== undefined) calls.get(String(requestId))?.abort(reason);
  });
  return server;
}
