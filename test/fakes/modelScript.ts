import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One model turn the fake answers with, in order. */
export type ModelTurn =
  /** An assistant message: text, tool calls, or both (`args` as an object, or a raw string sent as is). */
  | {
      readonly text?: string;
      /**
       * `id`: the call's id as sent (default: one of its own per call), to script a server that repeats ids;
       * `thoughtSignature`: sent as Gemini's OpenAI-compatible endpoint sends it (`extra_content.google`).
       */
      readonly toolCalls?: ReadonlyArray<{
        name: string;
        args: unknown;
        id?: string;
        /** Messages API only: the `tool_use` has no `id` at all (as some servers in front of other models write it). */
        withoutId?: true;
        /** The call's name left out, or sent as `null` (`name` is then not sent), as some servers write a call. */
        unnamed?: "absent" | "null";
        thoughtSignature?: string;
        /** Chat Completions only: `arguments` sent as the JSON object, not its text (as some servers do). */
        argumentsAsObject?: true;
        /**
         * `args` (a string) is the arguments object's JSON text, written into the answer as it is (an object
         * nested too deep for JSON.stringify): Chat Completions' `arguments` with `argumentsAsObject`, the
         * Messages API's `input`.
         */
        rawObject?: true;
        /**
         * Messages API only: the `tool_use` without an `input` (`absent`), with `"input": null` (`null`, as Go's
         * encoding/json and pydantic write a nil input; streamed, so in its `content_block_start`, with no
         * input deltas), or with this text as its input, as proxies writing the API's answers send a call of a
         * tool without arguments.
         */
        inputAs?: "absent" | "null" | { readonly text: string };
      }>;
      /**
       * Chat Completions only: `content` sent as this array of parts in place of `text` (streamed, each part
       * in a chunk of its own).
       */
      readonly contentParts?: ReadonlyArray<Record<string, unknown>>;
      /** Messages API only: blocks written after the others as they are (a `server_tool_use`). */
      readonly blocks?: ReadonlyArray<Record<string, unknown>>;
      /** Chat Completions only: the one call sent as the legacy `function_call` (`finish_reason: function_call`). */
      readonly legacyFunctionCall?: true;
      /** Chat Completions only: the message's reasoning, in Groq's `reasoning` field. */
      readonly reasoning?: string;
      /** Chat Completions only: the message's reasoning, in DeepSeek's (and vLLM's) `reasoning_content` field. */
      readonly reasoningContent?: string;
      /**
       * Messages API only: a `thinking` block before the others, without a `signature`, as Ollama's Messages
       * API writes a thinking model's (qwen3, deepseek-r1, gpt-oss).
       */
      readonly unsignedThinking?: string;
      /**
       * Messages API only: text blocks written with `"citations": null`, as the API reference shows a text block
       * and as gateways that re-encode answers through Anthropic's SDK types write every one.
       */
      readonly nullCitations?: true;
      /** Chat Completions only: the message's `refusal` (OpenAI's field for a refusal the model wrote). */
      readonly refusal?: string;
      /** The turn's finish reason as sent, when not the usual one (`stop` with tool calls, as some servers send). */
      readonly finishReason?: string;
      /** The model the answer names (default: the one asked for), as an endpoint resolving an alias answers. */
      readonly model?: string;
      /** The answer carries no `usage` (as servers and proxies that count no tokens write it). */
      readonly noUsage?: true;
      /**
       * Messages API only: the answer's `content` is `null` (streamed: `message_start`'s message holds
       * `"content": null` and no block follows), as gateways writing a Go nil slice send an empty answer.
       */
      readonly nullContent?: true;
    }
  /** An HTTP error answer (429 with `retry-after`, 500, ...). */
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  /** 200 with a body that is not JSON. */
  | { readonly malformed: true }
  /** Never answers (until the client gives up or the fake closes). */
  | { readonly hang: true };

export interface ModelRequest {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly json: Record<string, unknown>;
}

/** How a fake model server answers. */
export interface FakeModelOptions {
  /**
   * Every answer as an event stream, whether the request asked for one or not, as proxies and gateways set
   * to always stream do.
   */
  readonly streamAlways?: boolean;
}

export interface FakeModel {
  /** The base URL to put in `agent.base_url` (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: ModelRequest[];
  /** Adds turns to the script; once it is used up the fake answers `(script ended)`. */
  script(...turns: ModelTurn[]): void;
  close(): Promise<void>;
}

export type AnswerWriter = (
  turn: Extract<ModelTurn, { text?: string }>,
  request: ModelRequest,
  res: ServerResponse,
  index: number,
) => void;

/** The shared scripted server: records each request and replays the next turn with `write`. */
export async function startScriptedModel(path: string, write: AnswerWriter): Promise<FakeModel> {
  const requests: ModelRequest[] = [];
  const turns: ModelTurn[] = [];
  const sockets = new Set<Socket>();
  let answered = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      // Recorded as {}.
    }
    const request = { path: req.url ?? "/", headers: req.headers, json };
    requests.push(request);
    if (req.method !== "POST" || !request.path.endsWith(path)) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    const turn = turns.shift() ?? { text: "(script ended)" };
    if ("hang" in turn) return;
    if ("malformed" in turn) {
      res.writeHead(200, { "content-type": "application/json" }).end("{not json");
      return;
    }
    if ("status" in turn) {
      res
        .writeHead(turn.status, { "content-type": "application/json", ...turn.headers })
        .end(
          turn.body ??
            JSON.stringify({ error: { message: `scripted ${turn.status}`, type: "server_error" } }),
        );
      return;
    }
    write(turn, request, res, answered++);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...more) => turns.push(...more),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export const argsText = (args: unknown) => (typeof args === "string" ? args : JSON.stringify(args));

/**
 * Writes `events` as an event stream, each event in a write of its own; an event holding a character of
 * more than one byte in UTF-8 is written in two, split inside the first such character, as a network may cut
 * it.
 */
export function sse(res: ServerResponse, events: ReadonlyArray<{ event?: string; data: unknown }>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    const bytes = Buffer.from(
      `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    );
    const lead = bytes.findIndex((byte) => byte >= 0xc0);
    if (lead < 0) res.write(bytes);
    else {
      res.write(bytes.subarray(0, lead + 1));
      res.write(bytes.subarray(lead + 1));
    }
  }
  res.end();
}

/** `text` in two pieces (one when it is a single character or empty), cut between characters. */
export function halves(text: string): string[] {
  const chars = Array.from(text);
  const mid = Math.ceil(chars.length / 2);
  return [chars.slice(0, mid).join(""), chars.slice(mid).join("")].filter((piece) => piece !== "");
}

/** Stands in for a `rawObject` call's arguments (the `index`-th call of its turn) until the answer is written. */
export const rawArgumentsMark = (index: number): string => `\u0000raw-arguments-${index}`;

/** The answer's JSON text with each `rawObject` call's arguments written in as their JSON text. */
export function withRawArguments(turn: Extract<ModelTurn, { text?: string }>, answer: unknown): string {
  let text = JSON.stringify(answer);
  (turn.toolCalls ?? []).forEach((call, i) => {
    if (call.rawObject) text = text.replace(JSON.stringify(rawArgumentsMark(i)), () => String(call.args));
  });
  return text;
}
