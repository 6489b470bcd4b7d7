import { createHash } from "node:crypto";
import { jsonSchema, type ToolSet, tool } from "ai";
import type { ImageDimensions } from "./imageDimensions.js";
import { imageLine, pixelsOf } from "./imageLine.js";
import { MODEL_IMAGE_TYPES_NAMED, modelImageType, sniffedImageType } from "./modelImageTypes.js";
import { modelToolSchema, withLeftOut } from "./modelSchema.js";
import { originalArguments, withSafePropertyKeys } from "./propertyKeys.js";
import { NOT_RUN_AT_MAX_STEPS, type ToolCallRecord } from "./runRecord.js";
import { recordedToolName } from "./toolCallNames.js";
import { cutToolContent, cutToolText } from "./toolResultCap.js";
import { FAILED_WITHOUT_WHY } from "./tools/outcome.js";
import type { AgentTool, ToolContent, ToolContext } from "./tools/tool.js";

/**
 * The calls a run made, filled in as the tools run (and by the loop for calls that never ran). Calls of one
 * turn run at once and finish in any order; `orderTurn` puts them in the order the model asked for them.
 * `scrubbed` takes the run's secrets out of each record's name and error: a call the tools never saw (a
 * tool name the model made up, arguments that were not JSON) is recorded with what the model wrote, which
 * may quote the key; a made-up name is held to `RECORDED_NAME_MAX` characters (`recordedToolName`).
 */
export class ToolCallLog {
  constructor(private readonly scrubbed: (text: string) => string = (text) => text) {}

  private entries: Array<{ readonly id: string; readonly record: ToolCallRecord }> = [];
  private readonly seen = new Set<string>();
  /** The error each failed call is recorded with, as the model is sent it (`errorOf`). */
  private readonly errors = new Map<string, string>();
  /**
   * Calls whose arguments the tool is not run on (nested too deep, holding a number a double does not hold),
   * sent to the tool loop as `{}` (`unreadableArgumentsMiddleware`), with the error the model gets.
   */
  private readonly refused = new Map<string, string>();
  /** Offered name → registered name, for the tools offered under a shortened name (`modelToolName`). */
  private readonly registered = new Map<string, string>();

  get calls(): ToolCallRecord[] {
    return this.entries.map((entry) => entry.record);
  }
  add(callId: string, record: ToolCallRecord): void {
    if (this.seen.has(callId)) return;
    this.seen.add(callId);
    const { name, error } = record;
    const said = error === undefined ? undefined : this.scrubbed(error);
    if (said !== undefined) this.errors.set(callId, said);
    this.entries.push({
      id: callId,
      record: {
        ...record,
        name: recordedToolName(this.scrubbed(name)),
        ...(said === undefined ? {} : { error: said }),
      },
    });
  }
  has(callId: string): boolean {
    return this.seen.has(callId);
  }
  /** The error call `callId` failed with, as recorded (scrubbed, held to the cap); undefined for another. */
  errorOf(callId: string): string | undefined {
    return this.errors.get(callId);
  }
  /** Notes that the model wrote call `callId` with arguments the tool is not run on, and why (`error`). */
  refuse(callId: string, error: string): void {
    this.refused.set(callId, error);
  }
  /** Why call `callId` is not run (`refuse`), or undefined. */
  refusal(callId: string): string | undefined {
    return this.refused.get(callId);
  }
  /** Notes that the tool registered as `registered` is offered to the model as `offered`. */
  offeredAs(offered: string, registered: string): void {
    if (offered !== registered) this.registered.set(offered, registered);
  }
  /** The registered name of a tool the model named as it was offered (any other name as it is). */
  registeredName(offered: string): string {
    return this.registered.get(offered) ?? offered;
  }
  /** Sorts the calls of one turn (`callIds`, in the model's order) into that order, after earlier turns'. */
  orderTurn(callIds: readonly string[]): void {
    const rank = new Map(callIds.map((id, i) => [id, i]));
    const earlier = this.entries.filter((entry) => !rank.has(entry.id));
    const turn = this.entries.filter((entry) => rank.has(entry.id));
    turn.sort((a, b) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0));
    this.entries = [...earlier, ...turn];
  }
}

type ModelOutput =
  | { type: "text"; value: string }
  | {
      type: "content";
      value: Array<{ type: "text"; text: string } | { type: "image-data"; data: string; mediaType: string }>;
    };

/**
 * Whether the model's API takes an image in a tool's result: the Messages API does; Chat Completions
 * tool messages are text only, where an image would arrive as its base64 in a JSON string (megabytes
 * of context for one screenshot), so it is named in a line of text instead.
 */
export type ToolResultImages = "native" | "described";

/**
 * The largest image the Messages API takes, which it measures on the base64 text: "image exceeds 5 MB
 * maximum: 6405384 bytes" for 4.8 MB of image.
 */
const NATIVE_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/**
 * The most pixels a side the Messages API takes ("At least one of the image dimensions exceed max allowed
 * size: 8000 pixels", failing the whole request): a browser server's full-page screenshot can be taller.
 */
const NATIVE_IMAGE_MAX_SIDE = 8000;

type ImageContent = Extract<ToolContent, { type: "image" }>;

/**
 * What the model gets for a tool that answered with no text at all (`content: []`, `""`, a lone newline):
 * the Messages API refuses an empty or blank tool result, and so do some Chat Completions servers, which
 * would fail the whole run after the tool had run.
 */
export const NO_OUTPUT = "(the tool returned no output)";

/** An image's size in pixels when a side is past what the Messages API takes; undefined otherwise. */
function oversized(c: ImageContent): ImageDimensions | undefined {
  const size = pixelsOf(c.data);
  return size !== undefined && Math.max(size.width, size.height) > NATIVE_IMAGE_MAX_SIDE ? size : undefined;
}

/**
 * The type the Messages API is told an image is: the one its first bytes show, whatever its label (a server
 * may label a JPEG screenshot `image/png`, and the API refuses an image whose bytes are another type than its
 * media_type, failing the whole request); undefined when they show none of the types the API takes, which
 * it refuses too ("Could not process image"), as it does bytes that are no image at all or none.
 */
function nativeImageType(c: ImageContent): string | undefined {
  return sniffedImageType(Buffer.from(c.data.slice(0, 24), "base64"));
}

/** Why an image of a type the API takes (as labelled) is not shown: its bytes are no such image. */
const NOT_AN_IMAGE = `its bytes are no ${MODEL_IMAGE_TYPES_NAMED.replace(" and ", " or ")} image, which the model cannot read`;

function modelOutput(content: readonly ToolContent[], images: ToolResultImages): ModelOutput {
  const native = (c: ImageContent) =>
    images === "native" &&
    nativeImageType(c) !== undefined &&
    c.data.length <= NATIVE_IMAGE_MAX_BYTES &&
    oversized(c) === undefined;
  const described = (c: ImageContent) =>
    imageLine(
      c.mimeType,
      c.data,
      images === "native" ? oversized(c) : undefined,
      images === "described"
        ? "this model endpoint takes text-only tool results"
        : modelImageType(c.mimeType) !== undefined && nativeImageType(c) === undefined
          ? NOT_AN_IMAGE
          : `the model takes ${MODEL_IMAGE_TYPES_NAMED} images of at most 5 MB and ${NATIVE_IMAGE_MAX_SIDE} pixels a side`,
    );
  const text = (c: ToolContent) => (c.type === "text" ? c.text : described(c));
  if (content.every((c) => c.type === "text" || !native(c))) {
    const value = content.map(text).join("\n");
    return { type: "text", value: value.trim() === "" ? NO_OUTPUT : value };
  }
  return {
    type: "content",
    value: content
      // Beside an image a blank text block is left out (the Messages API refuses one).
      .filter((c) => c.type !== "text" || c.text.trim() !== "")
      .map((c) =>
        c.type === "image" && native(c)
          ? { type: "image-data" as const, data: c.data, mediaType: nativeImageType(c) as string }
          : { type: "text" as const, text: text(c) },
      ),
  };
}

export interface SdkToolOptions {
  /** The clock each call is timed on (`Clock.elapsed`); `performance.now` by default. */
  readonly elapsed?: () => number;
  /** Takes the run's secrets (the model API key) out of a text a tool gives back, before the model or the log sees it. */
  readonly scrubbed?: (text: string) => string;
  readonly images?: ToolResultImages;
  /**
   * False on the loop's last allowed turn: no result of a call asked for then can reach the model, so the
   * call is not run (a tool with side effects would act for nothing) and is recorded as not run.
   */
  readonly mayRun?: () => boolean;
  /**
   * True for the Messages API, which refuses a whole request offering a tool with a top-level argument name
   * outside `[A-Za-z0-9_.-]{1,64}` (`filter[id]`): such names are offered renamed and mapped back for the
   * tool (`withSafePropertyKeys`). Other endpoints get the names as the tool lists them.
   */
  readonly safePropertyKeys?: boolean;
  /**
   * The most characters of a call's text (its result, or its error) the model is sent
   * (`agent.max_tool_result_chars`): a longer one is cut and ends with a line saying so. 0 or unset: no cap.
   */
  readonly maxResultChars?: number;
}

/** The longest tool name the OpenAI and Anthropic APIs take; a request offering a longer one fails. */
export const MODEL_TOOL_NAME_MAX = 64;

/**
 * The name a tool is offered to the model under: its own, or for a registered name past
 * `MODEL_TOOL_NAME_MAX` (a long server and tool name), its first 55 characters, `_` and 8 hex characters
 * of its hash, so the run does not fail on every request and two long names stay apart.
 */
export function modelToolName(name: string, attempt = 0): string {
  if (name.length <= MODEL_TOOL_NAME_MAX) return name;
  const digest = createHash("sha256")
    .update(attempt === 0 ? name : `${name}\u0000${attempt}`)
    .digest("hex")
    .slice(0, 8);
  return `${name.slice(0, MODEL_TOOL_NAME_MAX - 9)}_${digest}`;
}

/**
 * The names `tools` are offered under, in their order: a name within the limit is its own; a shortened one
 * that another tool's name already is (a server can list a tool named as another server's long tool is
 * shortened, and would take its place in the run) is shortened again with another hash.
 */
function offeredNames(tools: readonly AgentTool[]): string[] {
  const taken = new Set(tools.map((t) => t.name).filter((name) => name.length <= MODEL_TOOL_NAME_MAX));
  return tools.map((t) => {
    if (t.name.length <= MODEL_TOOL_NAME_MAX) return t.name;
    let offered = modelToolName(t.name);
    for (let attempt = 1; taken.has(offered); attempt++) offered = modelToolName(t.name, attempt);
    taken.add(offered);
    return offered;
  });
}

/**
 * Agent tools as the AI SDK's tool set: the schema passes through (`jsonSchema`, no local validation: the
 * tool's owner judges its arguments; only what model APIs refuse at its top level is moved, `modelToolSchema`), a failed call is thrown so the model gets it as a
 * tool error and the loop goes on, and every call is timed into `log`.
 */
export function sdkTools(
  tools: readonly AgentTool[],
  context: ToolContext,
  log: ToolCallLog,
  options: SdkToolOptions = {},
): ToolSet {
  const {
    elapsed = () => performance.now(),
    scrubbed = (text: string) => text,
    images = "native",
    mayRun,
    maxResultChars = 0,
  } = options;
  const set: ToolSet = {};
  const names = offeredNames(tools);
  for (const [i, agentTool] of tools.entries()) {
    const moved = modelToolSchema(agentTool.inputSchema);
    const keys = options.safePropertyKeys === true ? withSafePropertyKeys(moved.schema) : undefined;
    const offered = keys === undefined ? moved : { ...moved, schema: keys.schema };
    // Calls are recorded under the registered name, whatever name the model was offered.
    const offeredName = names[i] as string;
    log.offeredAs(offeredName, agentTool.name);
    set[offeredName] = tool<unknown, readonly ToolContent[]>({
      description: withLeftOut(agentTool.description, offered.leftOut),
      inputSchema: jsonSchema<unknown>(offered.schema as Parameters<typeof jsonSchema>[0]),
      async execute(input, options) {
        if (mayRun !== undefined && !mayRun()) {
          log.add(options.toolCallId, {
            name: agentTool.name,
            ms: 0,
            ok: false,
            error: NOT_RUN_AT_MAX_STEPS,
          });
          throw new Error(NOT_RUN_AT_MAX_STEPS);
        }
        const refusal = log.refusal(options.toolCallId);
        if (refusal !== undefined) {
          log.add(options.toolCallId, { name: agentTool.name, ms: 0, ok: false, error: refusal });
          throw new Error(refusal);
        }
        const called = elapsed();
        let sentAt: number | undefined;
        const sent = () => {
          sentAt ??= elapsed();
        };
        const signal = options.abortSignal ?? context.signal;
        let outcome: Awaited<ReturnType<AgentTool["execute"]>>;
        try {
          outcome = await agentTool.execute(originalArguments(input, keys?.renamed), {
            ...context,
            signal,
            sent,
          });
        } catch (err) {
          outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
        // An MCP call is timed from its request's sending, as its timeout is: not its wait for the
        // server's earlier call, its connect or an approval. A replayed one from its first sending.
        const started = agentTool.timedFromSend === true ? sentAt : called;
        const ms = started === undefined ? 0 : Math.round(Math.max(0, elapsed() - started));
        if (!outcome.ok) {
          // A blank error would be a blank tool result, which the Messages API refuses with is_error.
          const said = scrubbed(outcome.error);
          const { text: error, cut } = cutToolText(
            said.trim() === "" ? FAILED_WITHOUT_WHY : said,
            maxResultChars,
          );
          log.add(options.toolCallId, { name: agentTool.name, ms, ok: false, error, ...(cut && { cut }) });
          throw new Error(error);
        }
        // Cut here, not where the result becomes the model's message: the call's record says it was cut.
        const { content, cut } = cutToolContent(
          outcome.content.map((part) =>
            part.type === "text" ? { ...part, text: scrubbed(part.text) } : part,
          ),
          maxResultChars,
        );
        log.add(options.toolCallId, { name: agentTool.name, ms, ok: true, ...(cut && { cut }) });
        return content;
      },
      toModelOutput: ({ output }) => modelOutput(output, images),
    });
  }
  return set;
}
