/**
 * What a server answers, read leniently: a hand-written server's `null` for none, a tool entry written wrong
 * or a log level MCP does not name costs that one entry or field, not the whole listing, call or message.
 */
import { CallToolResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { sniffedImageType } from "../../agent/modelImageTypes.js";
import { LooseCursorSchema, nullsLeftOut } from "./listPages.js";
import { refuseTooDeep } from "./resultDepth.js";
import { summarizeZodError } from "./transportErrors.js";

/**
 * One `tools/list` entry. Each is read on its own (`listedTools`): one a server writes wrong (no name, a
 * name that is not text or is empty, annotations that are not an object) is skipped and named, rather
 * than failing the listing and with it every other tool of the server.
 */
const LooseToolSchema = z.looseObject({
  // "" would register as `mcp__<server>__`, a name that says nothing of the tool.
  name: z.string().min(1),
  // Any value: a tool whose schema is not an object is left out on its own (toolNames.ts), not the list.
  // None (a hand-written server's tool without arguments) is an object of no properties; `.optional()`:
  // zod takes a key of a transform's pipe as required, so a tool without the key failed the whole list.
  inputSchema: z
    .unknown()
    .optional()
    .transform((schema) => schema ?? { type: "object" }),
  // `null` (a hand-written server writing None or nil) is none, as for inputSchema: not a failed list.
  annotations: z
    .looseObject({})
    .nullish()
    .transform((annotations) => annotations ?? undefined),
  // Text or none: a `null` or a number would reach the model API, `svc mcp tools` and a command
  // agent's MCP client, which take a string.
  description: z
    .unknown()
    .optional()
    .transform((text) => (typeof text === "string" ? text : undefined)),
});

export const LooseToolListSchema = z.looseObject({
  // `null`: a Go server's nil slice (mcp-go with no tools yet) is an empty list, not a malformed answer.
  tools: z
    .array(z.unknown())
    .nullable()
    .transform((tools) => tools ?? []),
  nextCursor: LooseCursorSchema,
});

/** The tools of one page that parse, and a report naming each entry that does not (by its place). */
export function listedTools(entries: readonly unknown[], page: number): { tools: Tool[]; skipped: string[] } {
  const tools: Tool[] = [];
  const skipped: string[] = [];
  entries.forEach((entry, index) => {
    const parsed = LooseToolSchema.safeParse(entry);
    if (parsed.success) {
      tools.push(parsed.data as Tool);
      return;
    }
    const name = (entry as { name?: unknown } | null)?.name;
    const problem =
      entry === null || typeof entry !== "object" || Array.isArray(entry)
        ? `it is ${entry === null ? "null" : Array.isArray(entry) ? "a list" : `a ${typeof entry}`}, not a tool`
        : name === undefined || name === null
          ? "it has no name"
          : typeof name !== "string"
            ? `its name is ${JSON.stringify(name)}, not text`
            : name === ""
              ? "its name is empty"
              : `"${name}": ${summarizeZodError(parsed.error) ?? "it does not have a tool's shape"}`;
    const place = `tools[${index}]${page === 1 ? "" : ` of page ${page}`}`;
    skipped.push(
      `tools/list entry ${place} is skipped: ${problem} (the rest of the list is registered as usual)`,
    );
  });
  return { tools, skipped };
}

/**
 * A `tools/call` result read with a key sent as `null` (a Python server's None: `isError`,
 * `structuredContent`, a content block's `annotations` or `mimeType`) left out, at the top and in each
 * content block, where the SDK's schema failed the call; what `structuredContent` holds is the tool's own
 * data and stays as sent. A content block svc cannot read costs that block, not the call (`readable`).
 * A result nested deeper than `MAX_RESULT_DEPTH` fails the call (`ResultTooDeepError`).
 */
export const LooseCallToolResultSchema = z.preprocess((value) => {
  // Before `nullsLeftOut` walks it: a result thousands of levels deep is refused, not a stack overflow.
  refuseTooDeep(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const top = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
  return Array.isArray(top.content)
    ? { ...top, content: top.content.map((block) => labelled(readable(nullsLeftOut(block)))) }
    : top;
}, CallToolResultSchema);

/** The content block types MCP defines, which the SDK's schema reads. */
const BLOCK_TYPES: ReadonlySet<unknown> = new Set(["text", "image", "audio", "resource_link", "resource"]);

/** How much of a block type svc does not read its line quotes. */
const SHOWN_TYPE_CHARS = 40;

/**
 * A block the SDK's schema failed the whole call for, though the tool ran and its other blocks are
 * readable, as the model and `svc mcp call` can use them: a type MCP does not define (`"video"`, `"Text"`)
 * (or none) becomes a line naming it, as audio gets one; a text block's `text` sent as `null` (or left
 * out) is empty text; a resource link without a name is named by its uri.
 */
function readable(block: unknown): unknown {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return block;
  const b = block as Record<string, unknown>;
  if (!BLOCK_TYPES.has(b.type)) {
    const type =
      typeof b.type === "string"
        ? JSON.stringify(b.type.length > SHOWN_TYPE_CHARS ? `${b.type.slice(0, SHOWN_TYPE_CHARS)}…` : b.type)
        : undefined;
    const what = type === undefined ? "content block without a type name" : `content block of type ${type}`;
    return { type: "text", text: `[${what} — not shown: svc does not read this MCP content type]` };
  }
  if (b.type === "text" && b.text === undefined) return { ...b, text: "" };
  if (b.type === "resource_link" && b.name === undefined && typeof b.uri === "string")
    return { ...b, name: b.uri };
  return block;
}

/**
 * An image or audio block without a `mimeType` (sent as `null`) is labelled by what its bytes show, or as
 * bytes of unknown type: the model is sent an image by its first bytes whatever its label, so the
 * missing label fails nothing (the SDK's schema, which requires one, failed the whole call).
 */
function labelled(block: unknown): unknown {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return block;
  const b = block as Record<string, unknown>;
  if ((b.type !== "image" && b.type !== "audio") || b.mimeType !== undefined || typeof b.data !== "string")
    return block;
  const sniffed =
    b.type === "image" ? sniffedImageType(Buffer.from(b.data.slice(0, 24), "base64")) : undefined;
  return { ...b, mimeType: sniffed ?? "application/octet-stream" };
}

/**
 * `notifications/message` read loosely: the SDK's schema takes MCP's eight levels only, so a message a
 * hand-written server logs at `warn`, `FATAL` or `trace` failed it and was dropped without a word.
 */
export const LooseLogNotificationSchema = z.object({
  method: z.literal("notifications/message"),
  params: z.looseObject({
    // Any value: a message without a level, or with a number (pino's 50), is logged at info, not dropped.
    level: z.unknown().optional(),
    logger: z.unknown().optional(),
    // Required by MCP, left out by some hand-written servers: logged as "(no data)", not dropped.
    data: z.unknown().optional(),
  }),
});

/** A server's log message as svc reads it: `level`, `logger` and `data` as the server sent them. */
export type ServerLogParams = z.infer<typeof LooseLogNotificationSchema>["params"];
