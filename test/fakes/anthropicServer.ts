import {
  type FakeModel,
  type FakeModelOptions,
  halves,
  rawArgumentsMark,
  sse,
  startScriptedModel,
  withRawArguments,
} from "./modelScript.js";

export type { FakeModel, ModelTurn } from "./modelScript.js";

/** Whether every text in `value` is well-formed UTF-16 (no lone surrogate). */
function wellFormedJson(value: unknown): boolean {
  if (typeof value === "string")
    return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
  if (Array.isArray(value)) return value.every(wellFormedJson);
  if (value !== null && typeof value === "object") return Object.values(value).every(wellFormedJson);
  return true;
}

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** The type an image's first bytes show (PNG, JPEG, GIF, WebP), as the Messages API reads them. */
function signatureType(head: Buffer): string | undefined {
  if (head.toString("latin1", 0, 4) === "\x89PNG") return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8) return "image/jpeg";
  if (head.toString("latin1", 0, 3) === "GIF") return "image/gif";
  if (head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WEBP")
    return "image/webp";
  return undefined;
}

/**
 * A scripted Anthropic Messages server (`POST <baseUrl>/messages`) on 127.0.0.1: each request gets the
 * next scripted turn as one message body or, for `stream: true` (every request with `streamAlways`), as the
 * Messages event stream, each text and tool input in two deltas.
 * Usage: 10 tokens in, 5 out per turn. Like the Messages API, it answers 400 to a request holding an
 * image of a type other than JPEG, PNG, GIF or WebP (in a message or a tool result), one whose bytes are
 * another of those types than its media_type says or none of them, or one whose base64
 * is longer than 5 MiB (the API measures the encoded image), a PNG with a side past 8000 pixels (2000 in a
 * request of more than 20 images), more than 100 images, one
 * holding a lone surrogate, one whose last message is the assistant's with text ending in whitespace, or one offering
 * a tool whose input schema has allOf, anyOf or oneOf at its top level, or a top-level argument name
 * outside `[a-zA-Z0-9_.-]{1,64}`, or one whose history holds a `tool_use` named outside `^[a-zA-Z0-9_-]{1,64}$`.
 */
/** Whether a block's input is the stand-in for a `rawObject` call's arguments (`rawArgumentsMark`). */
const isRawMark = (input: unknown): input is string =>
  typeof input === "string" && input.startsWith(rawArgumentsMark(0).slice(0, -1));

/** The JSON text a `rawObject` call's stand-in stands for. */
function rawText(turn: { readonly toolCalls?: ReadonlyArray<{ args: unknown }> }, mark: string): string {
  const index = Number(mark.slice(rawArgumentsMark(0).length - 1));
  return String(turn.toolCalls?.[index]?.args);
}

export function startFakeAnthropic(options: FakeModelOptions = {}): Promise<FakeModel> {
  return startScriptedModel("/messages", (turn, request, res, index) => {
    const mediaTypes = [...JSON.stringify(request.json.messages ?? []).matchAll(/"media_type":"([^"]*)"/g)];
    const refused = mediaTypes.find(([, type]) => !IMAGE_TYPES.has(type ?? ""));
    if (refused !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got ${refused[1]})`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: an image whose base64 is longer than 5 MiB fails the whole request.
    const big = [...JSON.stringify(request.json.messages ?? []).matchAll(/"data":"([^"]*)"/g)].find(
      ([, data]) => (data ?? "").length > 5 * 1024 * 1024,
    );
    if (big !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.2.content.0.image.source.base64: image exceeds 5 MB maximum: ${big[1]?.length} bytes > 5242880 bytes`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: a PNG with a side past 8000 pixels fails the whole request, and one past 2000
    // pixels when the request holds more than 20 images (IHDR's width and height, bytes 16-24).
    const images = [...JSON.stringify(request.json.messages ?? []).matchAll(/"data":"([^"]*)"/g)];
    if (images.length > 100) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: { type: "invalid_request_error", message: `Too many images: ${images.length} > 100` },
        }),
      );
      return;
    }
    // As the Messages API does: an image whose bytes are another type than its media_type says (a JPEG sent
    // as image/png) fails the whole request.
    const mislabelled = [
      ...JSON.stringify(request.json.messages ?? []).matchAll(/"media_type":"([^"]*)","data":"([^"]*)"/g),
    ].find(([, type, data]) => {
      const actual = signatureType(Buffer.from((data ?? "").slice(0, 16), "base64"));
      return actual !== undefined && actual !== type;
    });
    if (mislabelled !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.2.content.0.image.source.base64.data: Image does not match the provided media type ${mislabelled[1]}`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: an image whose bytes are no JPEG, PNG, GIF or WebP at all (not an image, or
    // empty) fails the whole request, whatever its media_type.
    const undecodable = [
      ...JSON.stringify(request.json.messages ?? []).matchAll(/"media_type":"[^"]*","data":"([^"]*)"/g),
    ].find(([, data]) => signatureType(Buffer.from((data ?? "").slice(0, 16), "base64")) === undefined);
    if (undecodable !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: { type: "invalid_request_error", message: "Could not process image" },
        }),
      );
      return;
    }
    const maxSide = images.length > 20 ? 2000 : 8000;
    const tall = images.find(([, data]) => {
      const png = Buffer.from((data ?? "").slice(0, 64), "base64");
      return (
        png.toString("latin1", 1, 4) === "PNG" &&
        png.length >= 24 &&
        Math.max(png.readUInt32BE(16), png.readUInt32BE(20)) > maxSide
      );
    });
    if (tall !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.2.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size${maxSide === 2000 ? " for many-image requests" : ""}: ${maxSide} pixels`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: a tool schema with allOf/anyOf/oneOf at its top level fails the whole request.
    const tools = (request.json.tools ?? []) as Array<{ input_schema?: Record<string, unknown> }>;
    const combined = tools.findIndex((t) =>
      ["allOf", "anyOf", "oneOf"].some((k) => k in (t.input_schema ?? {})),
    );
    if (combined >= 0) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `tools.${combined}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: a top-level argument name outside [a-zA-Z0-9_.-]{1,64} fails the whole request.
    const badKeys = tools.findIndex((t) =>
      Object.keys((t.input_schema?.properties ?? {}) as object).some(
        (k) => !/^[a-zA-Z0-9_.-]{1,64}$/.test(k),
      ),
    );
    if (badKeys >= 0) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `tools.${badKeys}.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: a tool_use in the history named outside its pattern fails the whole request.
    const history = (request.json.messages ?? []) as Array<{ content?: unknown }>;
    for (const [i, message] of history.entries()) {
      const blocks = (Array.isArray(message.content) ? message.content : []) as Array<{
        type?: unknown;
        name?: unknown;
      }>;
      const j = blocks.findIndex(
        (b) => b.type === "tool_use" && !(typeof b.name === "string" && /^[a-zA-Z0-9_-]{1,64}$/.test(b.name)),
      );
      if (j < 0) continue;
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.${i}.content.${j}.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
          },
        }),
      );
      return;
    }
    // As the Messages API does: a lone surrogate anywhere in the body fails the whole request.
    if (!wellFormedJson(request.json)) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message:
              "The request body is not valid JSON: no low surrogate in string: line 1 column 1 (char 0)",
          },
        }),
      );
      return;
    }
    // As the Messages API does: a last (assistant) message whose text ends in whitespace fails the whole request.
    const last = ((request.json.messages ?? []) as Array<{ role: string; content: unknown }>).at(-1);
    const lastBlock = Array.isArray(last?.content)
      ? (last.content as Array<{ text?: unknown }>).at(-1)
      : undefined;
    const lastText = typeof last?.content === "string" ? last.content : lastBlock?.text;
    if (last?.role === "assistant" && typeof lastText === "string" && /\s$/.test(lastText)) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: "messages: final assistant content cannot end with trailing whitespace",
          },
        }),
      );
      return;
    }
    const model = turn.model ?? String(request.json.model ?? "fake");
    const content = [
      ...(turn.unsignedThinking === undefined ? [] : [{ type: "thinking", thinking: turn.unsignedThinking }]),
      ...(turn.text === undefined
        ? []
        : [{ type: "text", text: turn.text, ...(turn.nullCitations ? { citations: null } : {}) }]),
      ...(turn.toolCalls ?? []).map((call, i) => ({
        type: "tool_use",
        ...(call.withoutId ? {} : { id: call.id ?? `toolu_${index}_${i}` }),
        ...(call.unnamed === undefined ? { name: call.name } : call.unnamed === "null" ? { name: null } : {}),
        ...(call.inputAs === "absent"
          ? {}
          : {
              input:
                call.inputAs === "null"
                  ? null
                  : call.inputAs !== undefined
                    ? call.inputAs.text
                    : call.rawObject
                      ? rawArgumentsMark(i)
                      : typeof call.args === "string"
                        ? JSON.parse(call.args)
                        : call.args,
            }),
      })),
      ...(turn.blocks ?? []),
    ];
    const stopReason = turn.finishReason ?? ((turn.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn");
    const message = { id: `msg_${index}`, type: "message", role: "assistant", model };
    if (request.json.stream !== true && !options.streamAlways) {
      res.writeHead(200, { "content-type": "application/json" }).end(
        withRawArguments(turn, {
          ...message,
          content: turn.nullContent ? null : content,
          stop_reason: stopReason,
          stop_sequence: null,
          ...(turn.noUsage ? {} : { usage: { input_tokens: 10, output_tokens: 5 } }),
        }),
      );
      return;
    }
    const events: Array<{ event: string; data: unknown }> = [
      {
        event: "message_start",
        data: {
          type: "message_start",
          message: {
            ...message,
            content: turn.nullContent ? null : [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 0 },
          },
        },
      },
      { event: "ping", data: { type: "ping" } },
    ];
    content.forEach((block, i) => {
      if (block.type === "thinking") {
        const { signature } = block as { signature?: unknown };
        events.push(
          {
            event: "content_block_start",
            data: {
              type: "content_block_start",
              index: i,
              content_block: { type: "thinking", thinking: "" },
            },
          },
          {
            event: "content_block_delta",
            data: {
              type: "content_block_delta",
              index: i,
              delta: { type: "thinking_delta", thinking: (block as { thinking: string }).thinking },
            },
          },
          // As the Messages API signs a thinking block: its signature in a delta of its own, last.
          ...(typeof signature === "string"
            ? [
                {
                  event: "content_block_delta",
                  data: {
                    type: "content_block_delta",
                    index: i,
                    delta: { type: "signature_delta", signature },
                  },
                },
              ]
            : []),
        );
      } else if (block.type === "text") {
        events.push(
          {
            event: "content_block_start",
            data: {
              type: "content_block_start",
              index: i,
              content_block: { type: "text", text: "", ...(turn.nullCitations ? { citations: null } : {}) },
            },
          },
          ...halves((block as { text: string }).text).map((text) => ({
            event: "content_block_delta",
            data: { type: "content_block_delta", index: i, delta: { type: "text_delta", text } },
          })),
        );
      } else if (
        !("input" in block) ||
        block.input === null ||
        (typeof block.input === "string" && !isRawMark(block.input))
      ) {
        // A call written without an input, with a null one or with a text for it: so in its start, with no
        // input deltas.
        events.push({
          event: "content_block_start",
          data: { type: "content_block_start", index: i, content_block: block },
        });
      } else {
        const { input, ...start } = block as { input: unknown };
        events.push(
          {
            event: "content_block_start",
            data: { type: "content_block_start", index: i, content_block: { ...start, input: {} } },
          },
          // A `rawObject` call's input deltas are its JSON text as written.
          ...halves(isRawMark(input) ? rawText(turn, input) : JSON.stringify(input)).map((partial_json) => ({
            event: "content_block_delta",
            data: {
              type: "content_block_delta",
              index: i,
              delta: { type: "input_json_delta", partial_json },
            },
          })),
        );
      }
      events.push({ event: "content_block_stop", data: { type: "content_block_stop", index: i } });
    });
    events.push(
      {
        event: "message_delta",
        data: {
          type: "message_delta",
          delta: { stop_reason: stopReason, stop_sequence: null },
          usage: { output_tokens: 5 },
        },
      },
      { event: "message_stop", data: { type: "message_stop" } },
    );
    sse(res, events);
  });
}
