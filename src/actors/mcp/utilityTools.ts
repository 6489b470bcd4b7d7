import {
  type CallToolResult,
  ErrorCode,
  type GetPromptResult,
  GetPromptResultSchema,
  McpError,
  type ReadResourceResult,
  ReadResourceResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { SvcError } from "../../errors.js";
import { LooseCursorSchema, MAX_LIST_PAGES, nextPage, nullsLeftOut } from "../../io/mcp/listPages.js";
import { refuseTooDeep } from "../../io/mcp/resultDepth.js";
import type { McpSession } from "../../io/mcp/session.js";
import { answeredWithError } from "../../io/mcp/transportErrors.js";
import { isStreamDropped } from "./callErrors.js";

/**
 * An answer as it came, once it is known to nest no deeper than `MAX_RESULT_DEPTH` (what walks it next —
 * `nullsLeftOut`, the JSON text the model gets — is recursive); a deeper one fails the call
 * (`ResultTooDeepError`), as a tool's result does.
 */
function notTooDeep(value: unknown): unknown {
  refuseTooDeep(value);
  return value;
}

/**
 * The list results read as `tools/list` is: `nextCursor: null` ends the list, `null` for the list is an
 * empty one, and an item needs only the key it is known by — an optional field the server sends as `null`
 * (a Python server's None: `description`, `mimeType`, a prompt's `arguments`) is passed on as sent, where
 * the SDK's schemas failed the whole list. The model gets the items as JSON text, so nothing else reads
 * their fields; an item without its key is left out and named (`usable`), not the whole list failed.
 */
const looseList = <K extends string>(key: K) =>
  z.preprocess(
    notTooDeep,
    z.looseObject({
      [key]: z
        .array(z.unknown())
        .nullable()
        .transform((items) => items ?? []),
      nextCursor: LooseCursorSchema,
    } as { [P in K]: z.ZodType<unknown[]> } & { nextCursor: typeof LooseCursorSchema }),
  );
const ResourceListSchema = looseList("resources");
const ResourceTemplateListSchema = looseList("resourceTemplates");
const PromptListSchema = looseList("prompts");

/** The items of `list` that carry their key as text; each other one named in `skipped` by its place. */
function usable(list: string, id: string, items: readonly unknown[], skipped: string[]): unknown[] {
  return items.filter((item, index) => {
    if (typeof (item as Record<string, unknown> | null)?.[id] === "string") return true;
    skipped.push(`${list}[${index}] (no ${id})`);
    return false;
  });
}

/**
 * The list as JSON text, and after it a line naming the items left out for want of their key, and one for
 * each list read only in part (`cuts`: its paging looped, or passed MAX_LIST_PAGES).
 */
function listText(
  value: Record<string, unknown>,
  skipped: readonly string[],
  cuts: ReadonlyArray<string | undefined> = [],
): CallToolResult {
  const notes = cuts.filter((cut): cut is string => cut !== undefined);
  if (skipped.length > 0)
    notes.unshift(
      `The server also listed ${skipped.length === 1 ? "an item" : `${skipped.length} items`} without the key it is known by, left out: ${skipped.join(", ")}`,
    );
  if (notes.length === 0) return asText(value);
  return { content: [...asText(value).content, ...notes.map((text) => ({ type: "text" as const, text }))] };
}

/**
 * `resources/read` and `prompts/get` answers with an optional field sent as `null` (a Python server's None:
 * a content's `mimeType`, the prompt's `description`) read as if it were left out; the SDK's schemas failed
 * the call on it.
 */
const ReadResourceSchema = z.preprocess((value) => nullsLeftOut(notTooDeep(value)), ReadResourceResultSchema);
const GetPromptSchema = z.preprocess((value) => nullsLeftOut(notTooDeep(value)), GetPromptResultSchema);

/**
 * An error raised on our side (no answer in time, the connection closed, the answer's stream dropped), never
 * a server's error answer, whose code may be the same (-32000, -32001: codes servers use for their own errors).
 */
function localError(err: unknown): boolean {
  return err instanceof McpError && (!answeredWithError(err) || isStreamDropped(err));
}

function asText(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

/**
 * A `resources/read` answer as a tool result: the server's JSON, where each binary content (`blob`, base64)
 * is left out and comes as an embedded resource block of its own. An agent run's model gets an image among
 * them as an image where its API takes one, and a line naming any other (its size and type) instead of
 * base64 it cannot read; `svc mcp call` prints a line for each (`--json` keeps the data).
 */
export function readResourceResult(result: ReadResourceResult): CallToolResult {
  const blobs = result.contents.filter((c) => "blob" in c && typeof c.blob === "string");
  if (blobs.length === 0) return asText(result);
  const contents = result.contents.map((c) => {
    if (!blobs.includes(c)) return c;
    const { blob: _blob, ...rest } = c as typeof c & { blob: string };
    return rest;
  });
  return {
    content: [
      ...asText({ ...result, contents }).content,
      ...blobs.map((resource) => ({ type: "resource" as const, resource })),
    ],
  };
}

type PromptContent = GetPromptResult["messages"][number]["content"];

/** A prompt message's block without its base64 (`data` of an image or audio, `blob` of a resource). */
function withoutData(block: PromptContent): PromptContent | undefined {
  if ((block.type === "image" || block.type === "audio") && typeof block.data === "string") {
    const { data: _data, ...rest } = block;
    return rest as PromptContent;
  }
  if (block.type === "resource" && "blob" in block.resource && typeof block.resource.blob === "string") {
    const { blob: _blob, ...resource } = block.resource;
    return { ...block, resource } as PromptContent;
  }
  return undefined;
}

/**
 * A `prompts/get` answer as a tool result: the server's JSON, where each image, audio or binary resource
 * of its messages is left out of the JSON and follows as a content block of its own (server-everything's
 * `complex_prompt` carries a PNG): an agent run's model gets an image as an image where its API takes one,
 * and a line naming the rest, never their base64 as text (docs/agent.md).
 */
export function getPromptResult(result: GetPromptResult): CallToolResult {
  const moved: PromptContent[] = [];
  const messages = result.messages.map((m) => {
    const stripped = withoutData(m.content);
    if (stripped === undefined) return m;
    moved.push(m.content);
    return { ...m, content: stripped };
  });
  if (moved.length === 0) return asText(result);
  return {
    content: [...asText({ ...result, messages }).content, ...(moved as CallToolResult["content"])],
  };
}

function page(cursor: string | undefined): { cursor?: string } {
  return cursor === undefined ? {} : { cursor };
}

/**
 * Every page of a paginated list (bounded, so a server that always returns a cursor cannot loop us), and
 * `cut`, the note saying why it was read only in part (a cursor sent again, or a next page after
 * MAX_LIST_PAGES), as tools/list's listing says it: `list` is the method, `noun` what it lists.
 */
async function allPages<R extends { nextCursor?: string | null | undefined }, T>(
  list: { method: string; noun: string },
  fetchPage: (cursor: string | undefined) => Promise<R>,
  items: (result: R) => T[],
): Promise<{ items: T[]; cut?: string }> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let n = 1; n <= MAX_LIST_PAGES; n++) {
    const result = await fetchPage(cursor);
    out.push(...items(result));
    const next = result.nextCursor;
    cursor = nextPage(next, seen);
    if (cursor === undefined && typeof next === "string" && next !== "")
      return {
        items: out,
        cut: `${list.method} stopped after ${n} page${n === 1 ? "" : "s"}: the server sent cursor ${JSON.stringify(next.slice(0, 40))} again (a loop in its paging), so any ${list.noun} of later pages are not listed`,
      };
    if (cursor === undefined) return { items: out };
  }
  return {
    items: out,
    cut: `${list.method} stopped after ${MAX_LIST_PAGES} pages (svc's limit) with more to come, so the ${list.noun} of later pages are not listed`,
  };
}

/**
 * MCP prompt arguments are strings; a model often writes `{"count": 2}`. Other values are sent as their
 * JSON text (`"2"`) rather than refused by the server's validation. A `null` is an argument not given (a
 * model writes `{"state": null}` for an optional one it leaves out): it is left out, never sent as "null".
 */
function promptArguments(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new SvcError(
      "mcp_call",
      `get_prompt: arguments must be an object of strings, like {"city": "Paris"} — got ${JSON.stringify(value)}`,
    );
  }
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([key, v]) => [key, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/**
 * `list_resources`, `read_resource`, `list_prompts`, `get_prompt` answered from the session. `timeoutMs`
 * bounds the whole call, every page of a list included (each request gets what is left of it); `signal`
 * (the run ended, Ctrl-C) cancels the request at the server, as for a tool call.
 */
export async function runUtilityTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
  signal?: AbortSignal,
  /** The clock that is never set by default: a step of the system clock neither spends nor stretches the timeout. */
  now: () => number = () => performance.now(),
): Promise<CallToolResult> {
  const deadline = now() + timeoutMs;
  // Reported as the SDK reports a request's own timeout, so the call fails with the `timeout` message.
  const options = () => {
    const left = deadline - now();
    if (left <= 0) throw new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs });
    return { timeout: left, ...(signal === undefined ? {} : { signal }) };
  };
  switch (name) {
    case "list_resources": {
      const [resources, resourceTemplates] = await Promise.all([
        allPages(
          { method: "resources/list", noun: "resources" },
          (cursor) =>
            session.client.request(
              { method: "resources/list", params: page(cursor) },
              ResourceListSchema,
              options(),
            ),
          (r) => r.resources,
        ),
        allPages(
          { method: "resources/templates/list", noun: "resource templates" },
          (cursor) =>
            session.client.request(
              { method: "resources/templates/list", params: page(cursor) },
              ResourceTemplateListSchema,
              options(),
            ),
          (r) => r.resourceTemplates,
        ).catch((err: unknown): { items: unknown[]; cut?: string } => {
          // A server without templates answers with an error (-32601): none. The call's own end is no
          // answer: its `timeout` spent, the run ended or the connection closed fail the call as for any list.
          if (signal?.aborted === true || localError(err)) throw err;
          return { items: [] };
        }),
      ]);
      const skipped: string[] = [];
      return listText(
        {
          resources: usable("resources", "uri", resources.items, skipped),
          resourceTemplates: usable("resourceTemplates", "uriTemplate", resourceTemplates.items, skipped),
        },
        skipped,
        [resources.cut, resourceTemplates.cut],
      );
    }
    case "read_resource":
      if (typeof args.uri !== "string") throw new SvcError("mcp_call", "read_resource needs a string uri");
      return readResourceResult(
        await session.client.request(
          { method: "resources/read", params: { uri: args.uri } },
          ReadResourceSchema,
          options(),
        ),
      );
    case "list_prompts": {
      const prompts = await allPages(
        { method: "prompts/list", noun: "prompts" },
        (cursor) =>
          session.client.request(
            { method: "prompts/list", params: page(cursor) },
            PromptListSchema,
            options(),
          ),
        (r) => r.prompts,
      );
      const skipped: string[] = [];
      return listText({ prompts: usable("prompts", "name", prompts.items, skipped) }, skipped, [prompts.cut]);
    }
    case "get_prompt": {
      if (typeof args.name !== "string") throw new SvcError("mcp_call", "get_prompt needs a string name");
      return getPromptResult(
        await session.client.request(
          { method: "prompts/get", params: { name: args.name, arguments: promptArguments(args.arguments) } },
          GetPromptSchema,
          options(),
        ),
      );
    }
    default:
      throw new SvcError("mcp_call", `unknown utility tool ${name}`);
  }
}
