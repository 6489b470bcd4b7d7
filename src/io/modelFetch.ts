import type { Dispatcher } from "undici";
import { parseKeepingNumbers } from "../streams/jsonNumbers/inexact.js";
import { importExternal } from "./importExternal.js";
import { secureContextFor, systemCaCertificates } from "./mcp/systemCas.js";
import { answerTooLarge, cappedAnswer } from "./modelAnswerCap.js";
import {
  isTransientErrorAnswer,
  type StreamProtocol,
  streamedAnswer,
  withoutDoneMarker,
} from "./modelStreamAnswer.js";
import { modelAgentNotLoaded } from "./openFiles.js";
import { outboundDispatcher } from "./outbound/dispatcher.js";

/**
 * The connection pool model requests go through: undici's, without its own limits on the wait for an
 * answer's headers and between its body's chunks (300 s each in the global fetch's pool). A model that
 * writes a long answer before sending any of it (a non-streamed request to Ollama on a CPU, a reasoning
 * model thinking for minutes) would fail there as `Headers Timeout Error`, be retried from the start, and
 * never answer, whatever `agent.timeout_seconds` allows: that setting, the run's abort signal, bounds it.
 * An `https://` endpoint is verified against the system's CAs, as MCP servers and Redis are (systemCas.ts):
 * Node's own list alone leaves out a company CA installed in the system trust store, which a model gateway
 * inside a company (LiteLLM, a TLS-inspecting proxy in front of api.openai.com) is often served under.
 * Through the outbound proxy when one is set (io/outbound/), with the same options.
 * Made at the first request: undici takes about a sixth of a second to load.
 */
let modelPool: Promise<Dispatcher> | undefined;
const pool = () =>
  (modelPool ??= importExternal<typeof import("undici")>("undici").then((undici) => {
    const ca = systemCaCertificates();
    return outboundDispatcher(undici, {
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(ca === undefined ? {} : { connect: { secureContext: secureContextFor({ ca }) } }),
    });
  }, modelAgentNotLoaded));

/**
 * Starts loading the pool before the first model request needs it (a runner made for a model provider
 * calls it, and the gateway at its start), so a run's first request does not wait for undici to load, nor
 * open its files when the gateway is at its limit on open files by then; a failed load is tried again then.
 * Resolves once loaded or failed.
 */
export function warmModelPool(): Promise<void> {
  return pool().then(
    () => undefined,
    () => {
      modelPool = undefined;
    },
  );
}

/**
 * The global fetch, through `pool`, following no redirect: fetch would send the request again to wherever
 * one leads, another host included, with the `x-api-key` header (only `Authorization` is dropped across
 * origins) and the run's prompt. The 3xx answer itself fails the run, naming where it led.
 */
async function modelRequest(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
  const dispatcher = await pool();
  // Node's fetch takes a pool of the undici package (its types are those of the undici it bundles).
  return cappedAnswer(
    await globalThis.fetch(input, { ...init, redirect: "manual", dispatcher } as unknown as RequestInit),
  );
}

/**
 * The `anthropic-beta` values the AI SDK adds that svc never uses: `structured-outputs-2025-11-13`, sent
 * with every request that offers tools to a recent Claude model, though svc asks for no structured output
 * and marks no tool strict. Anthropic's own API takes it, but Google Vertex AI and Amazon Bedrock (and the
 * gateways in front of them that speak the Messages API) refuse the whole request: "Unexpected value(s)
 * `structured-outputs-2025-11-13` for the `anthropic-beta` header", "invalid beta flag".
 */
const UNUSED_BETA = /^structured-outputs-/i;

/** `headers` without the unused beta values (the header dropped when none is left); others unchanged. */
export function withoutUnusedBetas(
  headers: NonNullable<RequestInit["headers"]>,
): NonNullable<RequestInit["headers"]> {
  const copy = new Headers(headers);
  const betas = copy.get("anthropic-beta");
  if (betas === null) return headers;
  const kept = betas
    .split(",")
    .map((beta) => beta.trim())
    .filter((beta) => beta !== "" && !UNUSED_BETA.test(beta));
  if (kept.length === 0) copy.delete("anthropic-beta");
  else copy.set("anthropic-beta", kept.join(","));
  return copy;
}

/**
 * `headers` without an empty `x-api-key`: the AI SDK sends one when `agent.api_key` is left out (a local
 * Messages API server that needs no key), where no key is meant (an empty `api_key` is refused at load).
 */
export function withoutEmptyKey(
  headers: NonNullable<RequestInit["headers"]>,
): NonNullable<RequestInit["headers"]> {
  const copy = new Headers(headers);
  if (copy.get("x-api-key") !== "") return headers;
  copy.delete("x-api-key");
  return copy;
}

/** `headers` with the key of `x-api-key` sent as `Authorization: Bearer` instead. */
export function withBearerKey(headers: Headers): Headers {
  const copy = new Headers(headers);
  const key = copy.get("x-api-key");
  if (key === null) return copy;
  copy.delete("x-api-key");
  copy.set("authorization", `Bearer ${key}`);
  return copy;
}

/**
 * The fetch an `anthropic` model's requests go through: the global fetch, without the unused betas or an
 * empty key; a successful JSON answer (or Messages API events streamed to a request that asked for no
 * stream, assembled into it) is passed through `normalize` (with the URL it came from), as
 * `chatCompletionsFetch` does.
 * A server other than Anthropic's own that refuses the key in `x-api-key` with a 401 (Ollama's cloud,
 * Alibaba Cloud Model Studio and MiniMax take it only as `Authorization: Bearer`, as Claude Code sends
 * `ANTHROPIC_AUTH_TOKEN`) gets the request again with the key as a Bearer token; the endpoint is remembered,
 * and its later requests are sent so at once.
 */
export function messagesApiFetch(normalize: (answer: unknown, url: string) => unknown): typeof fetch {
  const bearer = new Set<string>();
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const read: AnswerReading = {
      normalize: (answer) => normalize(answer, url),
      protocol: "messages",
      askedToStream: () => askedToStream(init),
    };
    if (init?.headers === undefined) return normalizedAnswer(await modelRequest(input, init), read);
    const headers = new Headers(withoutEmptyKey(withoutUnusedBetas(init.headers)));
    if (bearer.has(url))
      return normalizedAnswer(await modelRequest(input, { ...init, headers: withBearerKey(headers) }), read);
    let response = await modelRequest(input, { ...init, headers });
    if (response.status === 401 && headers.has("x-api-key") && !isAnthropicApi(url)) {
      const again = await modelRequest(input, { ...init, headers: withBearerKey(headers) });
      // The answer not handed on is read no further, so its connection is free again.
      if (again.status !== 401) {
        bearer.add(url);
        await response.body?.cancel();
        response = again;
      } else await again.body?.cancel();
    }
    return normalizedAnswer(response, read);
  };
}

/** Whether `url` is Anthropic's own API, which takes a key only in `x-api-key`. */
export function isAnthropicApi(url: string): boolean {
  return URL.canParse(url) && new URL(url).hostname.toLowerCase() === "api.anthropic.com";
}

/** A refusal of a request's form that the same request, rewritten, is taken in (a parameter's name). */
export interface RequestRewrite {
  /** Whether an error answer (its status and body text) is that refusal. */
  readonly refused: (status: number, body: string) => boolean;
  readonly rewrite: (body: string) => string;
}

/**
 * The fetch an `openai` model's requests go through: a successful answer that is JSON, whatever its
 * content-type says, or Chat Completions chunks streamed to a request that asked for no stream (assembled
 * into that JSON), is passed through `normalize` (with the URL it came from; it returns `undefined` to keep
 * the answer as it is); every
 * other answer is untouched. An error
 * answer that is one of `rewrites`' refusals is followed by the request once more, rewritten (each rewrite
 * at most once per request); the endpoint is remembered, and its later requests are sent rewritten at once.
 */
export function chatCompletionsFetch(
  normalize: (answer: unknown, url: string) => unknown,
  rewrites: readonly RequestRewrite[] = [],
): typeof fetch {
  const learned = new Map<string, Set<RequestRewrite>>();
  return async (input, init) => {
    const key = input instanceof Request ? input.url : String(input);
    const body = init?.body;
    const applied = learned.get(key) ?? new Set<RequestRewrite>();
    const send = () =>
      typeof body === "string" && applied.size > 0
        ? modelRequest(input, {
            ...init,
            body: rewrites.reduce((text, r) => (applied.has(r) ? r.rewrite(text) : text), body),
          })
        : modelRequest(input, init);
    let response = await send();
    while (typeof body === "string" && response.status >= 400 && response.status < 500) {
      const refusal = await response
        .clone()
        .text()
        .catch(() => "");
      const rewrite = rewrites.find((r) => !applied.has(r) && r.refused(response.status, refusal));
      if (rewrite === undefined) break;
      applied.add(rewrite);
      learned.set(key, applied);
      response = await send();
    }
    return normalizedAnswer(response, {
      normalize: (answer) => normalize(answer, key),
      protocol: "chat",
      askedToStream: () => askedToStream(init),
    });
  };
}

/** How `normalizedAnswer` reads a model's successful answer. */
interface AnswerReading {
  /** Returns the answer in the shape the SDK reads, or `undefined` to keep it as it is. */
  readonly normalize: (answer: unknown) => unknown;
  /** Whose events an answer written as a stream is: the API the request was made to. */
  readonly protocol: StreamProtocol;
  /**
   * Whether the request asked for a stream (svc asks for none): such an answer is handed on as it is. Asked
   * only of an answer that is a stream, so the request's body is not read again for every answer.
   */
  readonly askedToStream: () => boolean;
}

/** Whether a request's JSON body asks for a stream (`"stream": true`). */
function askedToStream(init: RequestInit | undefined): boolean {
  if (typeof init?.body !== "string") return false;
  try {
    return (JSON.parse(init.body) as { stream?: unknown } | null)?.stream === true;
  } catch {
    return false;
  }
}

/**
 * A successful answer passed through `normalize`; a failed one untouched. Read whatever type the answer
 * names, as the SDK does: a server or proxy that labels its JSON `text/plain` (Go's default for a body
 * written without a type) or names none is still read by the SDK, which would then refuse the shapes
 * `normalize` reads. An answer written as a stream of events (`text/event-stream`) to a request that asked
 * for none, as proxies and gateways set to always stream and some self-hosted servers answer, is assembled
 * into the JSON answer the request asked for (`streamedAnswer`) and normalized as one; a stream that
 * assembles into none (cut off, not JSON, of neither API) is handed on as a text saying what was wrong with
 * it, which the SDK refuses and the run's failure notice quotes (one cut off marked to be retried, as a body
 * whose connection dropped is). An answer that can have no body (204) is
 * passed on.
 */
async function normalizedAnswer(response: Response, read: AnswerReading): Promise<Response> {
  const stream = /\bevent-stream\b/i.test(response.headers.get("content-type") ?? "");
  if (!response.ok || response.body === null || (stream && read.askedToStream())) return response;
  const headers = new Headers(response.headers);
  // The body handed on is the decoded text.
  headers.delete("content-encoding");
  headers.delete("content-length");
  const kept = { status: response.status, statusText: response.statusText, headers };
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // Too large: an answer svc cannot use, which no retry makes smaller.
    const tooLarge = answerTooLarge(error);
    if (tooLarge !== undefined) {
      headers.set("content-type", "text/plain; charset=utf-8");
      return new Response(tooLarge.message, kept);
    }
    // A body cut off (the connection dropped mid-answer) fails as the SDK's own read of it would.
    return new Response(new ReadableStream({ start: (controller) => controller.error(error) }), kept);
  }
  let answer: unknown;
  // A JSON body labelled as a stream (no event stream starts with `{`) is read as the JSON it is, as the SDK
  // read it before streams were assembled, a `data: [DONE]` a server wrote after it left out.
  if (stream && !/^\s*\{/.test(text)) {
    const assembled = streamedAnswer(text, read.protocol);
    if ("problem" in assembled) {
      headers.set("content-type", "text/plain; charset=utf-8");
      // Cut off before its end: retried as an answer whose connection dropped mid-way is.
      if (assembled.transient) headers.set("x-should-retry", "true");
      return new Response(assembled.problem, kept);
    }
    headers.set("content-type", "application/json");
    // The run retries it as it retries a 529, 429 or 5xx (`x-should-retry` decides over the status, as in the
    // providers' own SDKs); the notice of a last failure still says HTTP 200 and quotes the error.
    if (assembled.transient) headers.set("x-should-retry", "true");
    answer = assembled.answer;
  } else {
    if (stream) headers.set("content-type", "application/json");
    // Numbers' texts kept: a tool call's arguments holding one a double does not hold are refused by it.
    try {
      answer = parseKeepingNumbers(stream ? withoutDoneMarker(text) : text);
    } catch {
      // Not JSON: the SDK reports the body as it is.
      return new Response(text, kept);
    }
    // Retried as the same error inside a stream is (above).
    if (isTransientErrorAnswer(answer, read.protocol)) headers.set("x-should-retry", "true");
  }
  let fixed: unknown;
  try {
    fixed = read.normalize(answer);
  } catch {
    // Left as it is: the SDK reads it, or reports it.
  }
  return new Response(fixed === undefined && !stream ? text : JSON.stringify(fixed ?? answer), kept);
}
