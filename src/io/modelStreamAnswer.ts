import { parseKeepingNumbers } from "../streams/jsonNumbers/inexact.js";
import { cutText } from "./cutText.js";

/**
 * A model's answer written as Server-Sent Events to a request that asked for no stream, as proxies and
 * gateways set to always stream and some self-hosted servers answer: assembled into the one JSON answer the
 * request asked for, so the run goes on as if the endpoint had answered JSON. Pure: the text in, the answer
 * (or what was wrong with the stream) out; `modelFetch.ts` reads the body and hands the answer on.
 */

/** Which API's events the request is answered with: Chat Completions (`openai`) or the Messages API. */
export type StreamProtocol = "chat" | "messages";

/**
 * The assembled answer (for the SDK to read, as a JSON body would be: an error the stream carried is an
 * answer too, `{"error": ...}` or `{"type": "error", ...}`, which the run fails quoting), or what was wrong
 * with the stream, in words for the run's failure notice (`... gave an answer svc cannot use (HTTP 200): `).
 */
export type StreamAssembly =
  | {
      readonly answer: unknown;
      /**
       * The answer is an error a later try may not meet (overloaded, rate-limited, the server's own): what a
       * request that asked for no stream gets as a 529, 429 or 5xx, which the run retries.
       */
      readonly transient?: true;
    }
  | {
      readonly problem: string;
      /**
       * The stream was cut off before its end (the server, or a proxy in front of it, ended the answer
       * early): what a connection dropped in the middle of the answer is, which the run retries.
       */
      readonly transient?: true;
    };

/** The Messages API's error types of a failure a later try may not meet (529, 429, 500, 504). */
const TRANSIENT_MESSAGES_ERRORS = new Set([
  "overloaded_error",
  "rate_limit_error",
  "api_error",
  "timeout_error",
]);
/** A Chat Completions error's `type` or `code` naming such a failure (OpenAI's, OpenRouter's, LiteLLM's). */
const TRANSIENT_CHAT_ERROR = /server_error|rate_limit|overloaded|timeout|unavailable/i;

/**
 * An error's `code` as the HTTP status it names: a number, or one written as text (LiteLLM's proxy writes
 * `"code": "429"`, as OpenAI's SDKs type the code as text).
 */
const statusCode = (code: unknown): number | undefined =>
  typeof code === "number"
    ? code
    : typeof code === "string" && /^[1-5]\d\d$/.test(code)
      ? Number(code)
      : undefined;

/** Whether an API error object names a failure a later try may not meet. */
function isTransientError(error: Record<string, unknown>, protocol: StreamProtocol): boolean {
  if (protocol === "messages")
    return typeof error.type === "string" && TRANSIENT_MESSAGES_ERRORS.has(error.type);
  const status = statusCode(error.code);
  return status !== undefined
    ? status === 408 || status === 429 || status >= 500
    : [error.type, error.code].some((kind) => typeof kind === "string" && TRANSIENT_CHAT_ERROR.test(kind));
}

/** An error event as the answer; `transient` when its kind is one a later try may not meet. */
function errorAnswer(answer: Record<string, unknown>, protocol: StreamProtocol): StreamAssembly {
  const error = isRecord(answer.error) ? answer.error : answer;
  return isTransientError(error, protocol) ? { answer, transient: true } : { answer };
}

/**
 * Whether a whole (not streamed) 200 answer is an error a later try may not meet: an `{"error": ...}` body,
 * or a Chat Completions choice that failed while it was written (OpenRouter's `finish_reason: "error"` with
 * the provider's `error`, such as its 502), as the same errors inside a stream are.
 */
export function isTransientErrorAnswer(answer: unknown, protocol: StreamProtocol): boolean {
  if (!isRecord(answer)) return false;
  if (isRecord(answer.error)) return isTransientError(answer.error, protocol);
  const first: unknown = Array.isArray(answer.choices) ? answer.choices[0] : undefined;
  return (
    protocol === "chat" &&
    isRecord(first) &&
    first.finish_reason === "error" &&
    isRecord(first.error) &&
    isTransientError(first.error, protocol)
  );
}

const STREAM = "an event stream (text/event-stream)";
const QUOTED = 120;

/** One event of the stream: its `event:` name (if any) and its `data:` lines joined. */
interface ServerEvent {
  readonly name: string | undefined;
  readonly data: string;
  /** False for the text after the stream's last blank line: an event that may be cut short. */
  readonly ended: boolean;
}

/**
 * The events in `text`: lines end in CRLF, LF or CR; `field: value` (one space after the colon dropped);
 * a blank line ends an event; comments (`: keep-alive`) and fields other than `event` and `data` skipped.
 */
function serverEvents(text: string): ServerEvent[] {
  const events: ServerEvent[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
  let data: string[] | undefined;
  let name: string | undefined;
  lines.forEach((line, i) => {
    if (line === "") {
      // The empty text after a final line break ends nothing.
      if (i === lines.length - 1) return;
      if (data !== undefined) events.push({ name, data: data.join("\n"), ended: true });
      data = undefined;
      name = undefined;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") {
      data ??= [];
      data.push(value);
    } else if (field === "event") name = value;
  });
  if (data !== undefined) events.push({ name, data: data.join("\n"), ended: false });
  return events;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const quoted = (text: string) => cutText(text.replace(/\s+/g, " ").trim(), QUOTED);

const cutOff = (end: string, count: number): StreamAssembly => ({
  problem: `${STREAM} cut off before its end (no ${end} after ${count} event${count === 1 ? "" : "s"}) — the server, or a proxy in front of it, ended the answer early`,
  transient: true,
});

const API_NAME = { chat: "Chat Completions chunks", messages: "Messages API events" } as const;
const PATH = { chat: "/chat/completions", messages: "/messages" } as const;

/** Which API's stream an event's JSON belongs to, by its shape. */
function shapeOf(data: unknown): StreamProtocol | undefined {
  if (!isRecord(data)) return undefined;
  if (Array.isArray(data.choices) || data.object === "chat.completion.chunk") return "chat";
  if (typeof data.type === "string" && /^(message_start|content_block_|message_delta|ping$)/.test(data.type))
    return "messages";
  return undefined;
}

/**
 * The events' JSON, in order (`cut`: the last event was unfinished, the stream cut in the middle of it); or
 * the problem of the first that is not JSON.
 */
type Parsed = { readonly events: unknown[]; readonly cut?: true } | { readonly problem: string };

function parsedEvents(events: readonly ServerEvent[], protocol: StreamProtocol): Parsed {
  const parsed: unknown[] = [];
  for (const [i, event] of events.entries()) {
    if (event.data.trim() === "[DONE]") return { events: [...parsed, END] };
    try {
      const data: unknown = parseKeepingNumbers(event.data);
      parsed.push(event.name === "error" ? asError(data, protocol) : data);
    } catch {
      // An unfinished last event: the stream was cut in the middle of it.
      if (!event.ended && i === events.length - 1) return { events: parsed, cut: true };
      return { problem: `${STREAM} whose event ${i + 1} is not JSON: data: ${quoted(event.data)}` };
    }
  }
  return { events: parsed };
}

/**
 * An `event: error`'s data as `protocol`'s error: one in neither API's shape (`{"message": "upstream
 * timeout"}`) was passed over, and the stream's end then read as a cut, its text lost.
 */
function asError(data: unknown, protocol: StreamProtocol): unknown {
  if (isError(data, protocol)) return data;
  const error = isRecord(data) && isRecord(data.error) ? data.error : data;
  return protocol === "chat" ? { error } : { type: "error", error };
}

/** Stands for Chat Completions' `data: [DONE]` among the parsed events: nothing after it is read. */
const END = Symbol("end of stream");

/**
 * The answer `text` (a stream of `expected`'s events) assembles into, or why it assembles into none: a
 * stream of the other API's events, of neither, one cut off before its end, or holding an event that is
 * not JSON.
 */
export function streamedAnswer(text: string, expected: StreamProtocol): StreamAssembly {
  const events = serverEvents(text);
  if (events.length === 0)
    return { problem: `${STREAM} with no events: ${text.trim() === "" ? "an empty body" : quoted(text)}` };
  const parsed = parsedEvents(events, expected);
  if ("problem" in parsed) return parsed;
  const first = parsed.events[0];
  if (first !== END && !isError(first, expected)) {
    const shape = shapeOf(first);
    if (shape === undefined) {
      if (first === undefined) return cutOff(expected === "chat" ? "data: [DONE]" : "message_stop event", 0);
      return {
        problem: `${STREAM} of neither Chat Completions chunks nor Messages API events; its first event: data: ${quoted(JSON.stringify(first))}`,
      };
    }
    if (shape !== expected)
      return {
        problem: `${STREAM} of ${API_NAME[shape]}, not the ${API_NAME[expected]} a ${PATH[expected]} request is answered with — check agent.provider`,
      };
  }
  return expected === "chat"
    ? chatAnswer(parsed.events, parsed.cut === true)
    : messagesAnswer(parsed.events, parsed.cut === true);
}

/** An event that is an error the endpoint reports in the stream: Chat Completions' `error`, the Messages API's. */
function isError(event: unknown, protocol: StreamProtocol): boolean {
  if (!isRecord(event)) return false;
  return protocol === "chat"
    ? (event.error !== undefined && event.error !== null) || event.object === "error"
    : event.type === "error";
}

interface CallDraft {
  /** The `index` the server gave it (its place among the turn's calls), or the one it was given. */
  readonly index: number;
  id?: string;
  type?: string;
  name: string;
  /** The arguments' text so far; `value` when a server wrote them as JSON rather than text. */
  args: string;
  value?: unknown;
  extra?: unknown;
}

interface ChoiceDraft {
  /** The text pieces, and the content parts of servers that write `content` as an array of parts. */
  readonly content: Array<string | Record<string, unknown>>;
  readonly texts: { reasoning_content: string; reasoning: string; refusal: string };
  /** In the order they started. */
  readonly calls: CallDraft[];
  /** The call each `index` names now: the last one started there. */
  readonly open: Map<number, CallDraft>;
  /** OpenRouter's `reasoning_details`, each entry's pieces joined (`addReasoningDetails`). */
  readonly details: Array<Record<string, unknown>>;
  /** LiteLLM's `thinking_blocks` (Claude's signed thinking), each block's pieces joined (`addThinkingBlocks`). */
  readonly thinking: Array<Record<string, unknown>>;
  /** The legacy `function_call` (older servers), its arguments joined. */
  functionCall?: { name: string; arguments: string };
  /** The call a delta without an `index` adds to (Gemini's endpoint sends none). */
  lastCall?: CallDraft;
  finish: unknown;
}

/**
 * A `chat.completion`: per choice, the deltas' text, reasoning and refusal joined (a choice's whole `message`,
 * where an event holds one, read as its delta); tool calls assembled by
 * their `index`, and apart by their ids where a server sends several at one index (the id, type and name
 * as sent, the arguments' pieces joined); the last finish reason; the
 * usage of the last chunk that carries one (in `usage`, or as Groq sends it, in `x_groq.usage`). A chunk
 * carrying an `error` ends the answer as that error.
 * Without `data: [DONE]` the answer is whole when the body ended between events and every choice had
 * finished (servers that close the stream after the last chunk, without the marker); `cut` (the body
 * ended inside an event) or a choice without its finish reason is a stream cut off.
 */
function chatAnswer(events: readonly unknown[], cut: boolean): StreamAssembly {
  const head: Record<string, unknown> = {};
  const choices = new Map<number, ChoiceDraft>();
  let usage: unknown;
  let count = 0;
  for (const event of events) {
    if (event === END) return { answer: chatCompletion(head, choices, usage) };
    count++;
    if (!isRecord(event)) continue;
    if (isError(event, "chat"))
      return errorAnswer(event.error === undefined ? event : { error: event.error }, "chat");
    for (const key of ["id", "created", "model", "system_fingerprint"])
      if (head[key] === undefined && event[key] !== undefined && event[key] !== null) head[key] = event[key];
    if (event.usage !== undefined && event.usage !== null) usage = event.usage;
    // Groq's chunks carry theirs in `x_groq.usage` (its last chunk), with no `usage` of their own.
    else if (isRecord(event.x_groq) && isRecord(event.x_groq.usage)) usage = event.x_groq.usage;
    if (!Array.isArray(event.choices)) continue;
    for (const choice of event.choices as unknown[]) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === "number" ? choice.index : 0;
      let draft = choices.get(index);
      if (draft === undefined) {
        draft = {
          content: [],
          texts: { reasoning_content: "", reasoning: "", refusal: "" },
          calls: [],
          open: new Map(),
          details: [],
          thinking: [],
          finish: null,
        };
        choices.set(index, draft);
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        draft.finish = choice.finish_reason;
      if (isRecord(choice.delta)) addDelta(draft, choice.delta);
      // A whole `chat.completion` in one event, as a gateway streams an answer it had whole.
      else if (isRecord(choice.message)) addDelta(draft, wholeMessage(choice.message));
    }
  }
  const finished = choices.size > 0 && [...choices.values()].every((draft) => draft.finish !== null);
  return finished && !cut ? { answer: chatCompletion(head, choices, usage) } : cutOff("data: [DONE]", count);
}

/** A whole message as one delta: each of its calls whole, at its place in the list when it names none. */
function wholeMessage(message: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(message.tool_calls)) return message;
  const calls = (message.tool_calls as unknown[]).map((call, index) =>
    isRecord(call) && typeof call.index !== "number" ? { ...call, index } : call,
  );
  return { ...message, tool_calls: calls };
}

/**
 * A JSON answer a server labels as an event stream and ends with the stream's `data: [DONE]` (a router
 * answering a request without `stream`): the JSON without that marker.
 */
export function withoutDoneMarker(text: string): string {
  return text.replace(/(?:\s*data:\s*\[DONE\])+\s*$/, "");
}

function addDelta(draft: ChoiceDraft, delta: Record<string, unknown>): void {
  const { content } = delta;
  if (typeof content === "string" && content !== "") draft.content.push(content);
  else if (Array.isArray(content)) for (const part of content) if (isRecord(part)) draft.content.push(part);
  for (const key of ["reasoning_content", "reasoning", "refusal"] as const) {
    const piece = delta[key];
    if (typeof piece === "string") draft.texts[key] += piece;
  }
  if (Array.isArray(delta.reasoning_details)) addReasoningDetails(draft.details, delta.reasoning_details);
  if (Array.isArray(delta.thinking_blocks)) addThinkingBlocks(draft.thinking, delta.thinking_blocks);
  if (isRecord(delta.function_call)) {
    const { name, arguments: args } = delta.function_call;
    draft.functionCall ??= { name: "", arguments: "" };
    if (typeof name === "string" && name !== "") draft.functionCall.name = name;
    if (typeof args === "string") draft.functionCall.arguments += args;
  }
  if (!Array.isArray(delta.tool_calls)) return;
  for (const piece of delta.tool_calls as unknown[]) {
    if (!isRecord(piece)) continue;
    const fn = isRecord(piece.function) ? piece.function : {};
    const id = typeof piece.id === "string" && piece.id !== "" ? piece.id : undefined;
    const index = typeof piece.index === "number" ? piece.index : undefined;
    const named = typeof fn.name === "string" && fn.name !== "";
    // Without an index, a call is sent whole (Gemini's endpoint): a piece naming a tool under a new id (or
    // the first piece) starts the next call. At an index, so does a piece naming a tool under an id other
    // than the call's there: Ollama sends every call of a turn at index 0, each whole with its own id. A
    // piece without a name goes on its call whatever id it carries (Poolside gives the later pieces another
    // id), and one at an index no call started at goes on the last call started (DeepSeek has sent a call's
    // first piece at the index of the call before it, its later pieces at its own).
    let call =
      index === undefined
        ? draft.lastCall
        : (draft.open.get(index) ?? (id === undefined && !named ? draft.lastCall : undefined));
    if (call === undefined || (named && id !== undefined && call.id !== undefined && id !== call.id)) {
      call = {
        index: index ?? (draft.calls.length === 0 ? 0 : Math.max(...draft.calls.map((c) => c.index)) + 1),
        name: "",
        args: "",
      };
      draft.calls.push(call);
    }
    if (index !== undefined) draft.open.set(index, call);
    draft.lastCall = call;
    if (call.id === undefined && id !== undefined) call.id = id;
    if (typeof piece.type === "string" && piece.type !== "") call.type = piece.type;
    if (named) call.name = fn.name as string;
    if (typeof fn.arguments === "string") call.args += fn.arguments;
    else if (fn.arguments !== undefined && fn.arguments !== null) call.value = fn.arguments;
    if (call.extra === undefined && piece.extra_content !== undefined && piece.extra_content !== null)
      call.extra = piece.extra_content;
  }
}

/** The texts of a `reasoning_details` entry that OpenRouter streams in pieces. */
const DETAIL_TEXTS = ["text", "summary", "data"] as const;

/**
 * OpenRouter's `reasoning_details` pieces added to `details`: a piece at the `index` and of the type of an
 * entry so far goes on it (its texts joined, its other fields as the last piece wrote them, a signature
 * coming last), any other starts an entry.
 */
function addReasoningDetails(details: Array<Record<string, unknown>>, pieces: readonly unknown[]): void {
  for (const piece of pieces) {
    if (!isRecord(piece)) continue;
    const entry =
      typeof piece.index === "number"
        ? details.find((d) => d.index === piece.index && d.type === piece.type)
        : undefined;
    if (entry === undefined) {
      details.push({ ...piece });
      continue;
    }
    for (const [key, value] of Object.entries(piece)) {
      if (value === null || value === undefined) continue;
      const text = (DETAIL_TEXTS as readonly string[]).includes(key);
      entry[key] =
        text && typeof entry[key] === "string" && typeof value === "string" ? entry[key] + value : value;
    }
  }
}

const signed = (block: Record<string, unknown> | undefined) =>
  typeof block?.signature === "string" && block.signature !== "";

/**
 * LiteLLM's `thinking_blocks` pieces added to `blocks`, as it streams Claude's thinking: each delta's
 * `thinking` block holds a piece of a block's text and its signature comes last (a piece with an empty
 * text), so a `thinking` piece goes on the last block until that block is signed, and starts the next one
 * after; any other block (`redacted_thinking`) comes whole. Without them the turn went back without its
 * thinking, which Claude refuses on the turn after a tool call.
 */
function addThinkingBlocks(blocks: Array<Record<string, unknown>>, pieces: readonly unknown[]): void {
  for (const piece of pieces) {
    if (!isRecord(piece)) continue;
    const last = blocks.at(-1);
    if (piece.type !== "thinking" || last?.type !== "thinking" || signed(last)) {
      blocks.push({ ...piece });
      continue;
    }
    for (const [key, value] of Object.entries(piece)) {
      if (value === null || value === undefined || value === "") continue;
      last[key] =
        key === "thinking" && typeof last.thinking === "string" && typeof value === "string"
          ? last.thinking + value
          : value;
    }
  }
}

function chatCompletion(
  head: Record<string, unknown>,
  choices: ReadonlyMap<number, ChoiceDraft>,
  usage: unknown,
): Record<string, unknown> {
  return {
    ...(head.id === undefined ? {} : { id: head.id }),
    object: "chat.completion",
    ...(head.created === undefined ? {} : { created: head.created }),
    ...(head.model === undefined ? {} : { model: head.model }),
    ...(head.system_fingerprint === undefined ? {} : { system_fingerprint: head.system_fingerprint }),
    choices: [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, draft]) => ({ index, message: chatMessage(draft), finish_reason: draft.finish })),
    ...(usage === undefined ? {} : { usage }),
  };
}

function chatMessage(draft: ChoiceDraft): Record<string, unknown> {
  const texts = Object.entries(draft.texts).filter(([, text]) => text !== "");
  // A stable sort: calls at one index stay in the order they started.
  const calls = [...draft.calls]
    .sort((a, b) => a.index - b.index)
    .map((call) => ({
      ...(call.id === undefined ? {} : { id: call.id }),
      type: call.type ?? "function",
      function: {
        name: call.name,
        arguments: call.value !== undefined && call.args === "" ? call.value : call.args,
      },
      ...(call.extra === undefined ? {} : { extra_content: call.extra }),
    }));
  return {
    role: "assistant",
    content: chatContent(draft.content),
    ...Object.fromEntries(texts),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
    ...(draft.details.length === 0 ? {} : { reasoning_details: draft.details }),
    ...(draft.thinking.length === 0 ? {} : { thinking_blocks: draft.thinking }),
    ...(draft.functionCall === undefined ? {} : { function_call: draft.functionCall }),
  };
}

/** The text joined (null when none); content parts as parts, with the text between them as text parts. */
function chatContent(pieces: ReadonlyArray<string | Record<string, unknown>>): unknown {
  if (pieces.every((piece) => typeof piece === "string")) return pieces.length === 0 ? null : pieces.join("");
  const parts: Array<Record<string, unknown>> = [];
  for (const piece of pieces) {
    const part = typeof piece === "string" ? { type: "text", text: piece } : piece;
    const last = parts.at(-1);
    if (
      last?.type === "text" &&
      part.type === "text" &&
      typeof last.text === "string" &&
      typeof part.text === "string"
    )
      parts[parts.length - 1] = { ...last, text: last.text + part.text };
    else parts.push(part);
  }
  return parts;
}

/**
 * The Messages API's stop reasons for a turn stopped before its end: at `max_tokens`, at the end of the
 * context window, or by the safety system (`refusal`, which may strike inside a tool's input).
 */
const CUT_STOP_REASONS: ReadonlySet<string> = new Set([
  "max_tokens",
  "model_context_window_exceeded",
  "refusal",
]);

/**
 * A Messages API `message`: `message_start`'s skeleton, each block from its `content_block_start` with its
 * deltas applied (text and thinking joined, the signature as sent, a tool's input parsed from its joined
 * JSON pieces), `message_delta`'s stop reason and usage; `ping` and events of types it does not know
 * skipped. An `error` event ends the answer as that error. Without `message_stop` the answer is whole when
 * the body ended between events after a `message_delta` gave the stop reason, every block stopped (proxies
 * have been seen to end the stream there); `cut` (the body ended inside an event), or an earlier end, is a
 * stream cut off.
 */
function messagesAnswer(events: readonly unknown[], cut: boolean): StreamAssembly {
  let message: Record<string, unknown> | undefined;
  const blocks: Array<Record<string, unknown> | undefined> = [];
  /** The blocks started and not stopped yet. */
  const open = new Set<number>();
  /** A `message_delta` gave the stop reason. */
  let stopped = false;
  const inputs = new Map<number, string>();
  /**
   * Why a block's input is not JSON, by block: a turn cut at its output limit (or at the end of the context
   * window) stops inside a tool's input, so whether it is malformed is known only from the stop reason, which
   * `message_delta` brings after the blocks.
   */
  const unfinished = new Map<number, string>();
  let count = 0;
  const finish = (index: number): void => {
    const json = inputs.get(index);
    const block = blocks[index];
    inputs.delete(index);
    if (json === undefined || json.trim() === "" || block === undefined) return;
    try {
      block.input = parseKeepingNumbers(json);
    } catch {
      const name = typeof block.name === "string" ? ` ("${block.name}")` : "";
      unfinished.set(
        index,
        `${STREAM} whose ${String(block.type)} block ${index}${name} has an input that is not JSON: ${quoted(json)}`,
      );
    }
  };
  for (const event of events) {
    count++;
    if (!isRecord(event)) continue;
    if (isError(event, "messages")) return errorAnswer(event, "messages");
    const index = typeof event.index === "number" ? event.index : -1;
    switch (event.type) {
      case "message_start":
        message = isRecord(event.message) ? { ...event.message } : {};
        if (isRecord(message.usage)) message.usage = { ...message.usage };
        break;
      case "content_block_start":
        if (index >= 0 && isRecord(event.content_block)) {
          blocks[index] = { ...event.content_block };
          open.add(index);
        }
        break;
      case "content_block_delta": {
        const block = blocks[index];
        const delta = event.delta;
        // Dropping it would deliver what is left (often an empty reply) as if it were the whole answer.
        if (block === undefined)
          return {
            problem: `${STREAM} whose content_block_delta event ${count} ${index < 0 ? "names no block" : `is for block ${index}, which no content_block_start began`}`,
          };
        if (!isRecord(delta)) break;
        if (delta.type === "text_delta" && typeof delta.text === "string")
          block.text = (typeof block.text === "string" ? block.text : "") + delta.text;
        else if (delta.type === "thinking_delta" && typeof delta.thinking === "string")
          block.thinking = (typeof block.thinking === "string" ? block.thinking : "") + delta.thinking;
        else if (delta.type === "signature_delta" && typeof delta.signature === "string")
          block.signature = delta.signature;
        else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string")
          inputs.set(index, (inputs.get(index) ?? "") + delta.partial_json);
        else if (delta.type === "citations_delta" && delta.citation !== undefined)
          block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
        break;
      }
      case "content_block_stop":
        open.delete(index);
        finish(index);
        break;
      case "message_delta":
        if (message === undefined) break;
        // Key by key: Object.assign would take a `__proto__` key the server wrote as the message's prototype.
        if (isRecord(event.delta))
          for (const [key, value] of Object.entries(event.delta))
            if (key !== "__proto__") message[key] = value;
        if (typeof message.stop_reason === "string") stopped = true;
        if (isRecord(event.usage))
          message.usage = {
            ...(isRecord(message.usage) ? message.usage : {}),
            ...Object.fromEntries(Object.entries(event.usage).filter(([, value]) => value !== null)),
          };
        break;
      case "message_stop":
        return whole();
    }
  }
  return !cut && stopped && open.size === 0 ? whole() : cutOff("message_stop event", count);

  /** The message the events so far assemble into, as at its `message_stop`. */
  function whole(): StreamAssembly {
    for (const index of [...inputs.keys()]) finish(index);
    if (message === undefined)
      return { problem: `${STREAM} of Messages API events without a message_start event` };
    // A call the cut left unfinished is never run (the tool loop records it as cut, or stopped): an
    // empty input stands in for its arguments, as the API's own answer holds an input object.
    const cutShort = CUT_STOP_REASONS.has(String(message.stop_reason));
    for (const [index, problem] of unfinished) {
      if (!cutShort) return { problem };
      const block = blocks[index];
      if (block !== undefined) block.input = {};
    }
    return { answer: { ...message, content: blocks.filter((block) => block !== undefined) } };
  }
}
