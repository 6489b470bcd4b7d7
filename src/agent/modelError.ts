import { APICallError, InvalidResponseDataError } from "ai";
import { describe, type WrittenAs } from "../config/describe.js";
import { withUrlAsWritten } from "../config/givenUrl.js";
import { scrub } from "../io/credentials.js";
import { cutText } from "../io/cutText.js";
import { htmlPageSummary } from "../io/htmlPage.js";
import { answerTooLarge } from "../io/modelAnswerCap.js";
import { BLOCKED_PORT, isBlockedPort } from "../io/outbound/blockedPort.js";
import { ProxyRefusedError } from "../io/outbound/proxyErrors.js";
import { refusedHint, unknownHostHint } from "../io/outbound/unreachable.js";
import { redirectTarget } from "../io/web/fetchJson.js";
import { modelClosedHint, modelTlsAnswerHint, modelTlsHint } from "./modelTlsHint.js";
import { promptOverflow } from "./promptOverflow.js";
import { cronJobOf, promptToChange, samplingServerOf } from "./runPrompt.js";

const MAX_DETAIL = 300;
/** The most characters of the one line a model failure is told in. */
const MAX_MESSAGE = 2000;

/**
 * An error body as the notice quotes it: an HTML page (a proxy's 502 in front of vLLM or Ollama, a login
 * page) by its title and size, since its markup tells the reader nothing; any other body cut to length.
 */
function excerpt(body: string): string {
  return htmlPageSummary(body) ?? cutText(body, MAX_DETAIL);
}

/**
 * Why reading an answer failed, from its causes (" (terminated: other side closed)" for a connection that
 * dropped in the middle of the body, " (incorrect header check)" for a body that is not the gzip it said):
 * the SDK's own message, "Failed to process successful response", says neither.
 */
function causes(cause: unknown): string {
  const said: string[] = [];
  for (let depth = 0; cause instanceof Error && depth < 3; depth++) {
    if (cause.message !== "" && !said.includes(cause.message)) said.push(cause.message);
    cause = cause.cause;
  }
  return said.length === 0 ? "" : ` (${said.join(": ")})`;
}

/** A response header by its lower-case name, whatever case the endpoint wrote it in. */
export function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  return Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;
}

/** The socket errors of a connection the server took and then closed before any answer came. */
const DROPPED = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

/**
 * What the socket said (`other side closed`, `read ECONNRESET`) when the endpoint took the connection and
 * closed it without answering (a server that crashed or restarted under the request, a proxy that dropped
 * it): not a server that "could not be reached", which sends the reader to check the address. Undefined for
 * any other failure.
 */
function droppedBy(err: APICallError): string | undefined {
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++) {
    if (DROPPED.has(String((cause as { code?: unknown }).code))) return cause.message;
    cause = cause.cause;
  }
  return undefined;
}

/**
 * A request fetch refused before connecting: the endpoint's port is one of the Fetch standard's blocked
 * ports (`isBlockedPort`). No retry can change that.
 */
export function isRefusedPort(err: unknown): boolean {
  return APICallError.isInstance(err) && err.statusCode === undefined && isBlockedPort(err.cause);
}

/**
 * A request the outbound proxy refused (a 407 for its credentials, a CONNECT answered 403): a setting of
 * the proxy or of `HTTPS_PROXY`, which no retry changes. A proxy that could not be reached may come back.
 */
export function isProxyRefusal(err: unknown): boolean {
  if (!APICallError.isInstance(err) || err.statusCode !== undefined) return false;
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth++) {
    if (cause instanceof ProxyRefusedError) return cause.status !== undefined;
    cause = cause.cause;
  }
  return false;
}

/** The first `code` among an error's causes (`ECONNREFUSED`, `ENOTFOUND`), up to three deep. */
function causeCode(err: unknown): string | undefined {
  let cause: unknown = err;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cause = cause.cause;
  }
  return undefined;
}

/**
 * What to change when no connection could be made (Ollama not started, a typo in the host): fetch says only
 * `connect ECONNREFUSED 127.0.0.1:11434` or `getaddrinfo ENOTFOUND`. Empty for any other failure.
 */
function unreachableHint(err: unknown): string {
  if (!APICallError.isInstance(err) || err.statusCode !== undefined) return "";
  let url: URL;
  try {
    url = new URL(err.url);
  } catch {
    return "";
  }
  const code = causeCode(err.cause);
  if (code === "ECONNREFUSED")
    return refusedHint(url, "start the model server, or write its host and port in agent.base_url");
  if (code === "ENOTFOUND") return unknownHostHint(url, "agent.base_url");
  return "";
}

const QUOTA_EXHAUSTED = /"(?:code|type)"\s*:\s*"insufficient_quota"/;

/**
 * OpenAI's 429 for an account without credit or past its spending limit (`"code": "insufficient_quota"`:
 * "You exceeded your current quota, please check your plan and billing details"): not a rate limit, so no
 * wait makes the next try pass.
 */
export function isQuotaExhausted(err: unknown): boolean {
  return (
    APICallError.isInstance(err) && err.statusCode === 429 && QUOTA_EXHAUSTED.test(err.responseBody ?? "")
  );
}

/** The settings a failed run's request was made with, to name the one to fix in a refusal. */
export interface ModelSettingsUsed {
  /** The model asked for, and the key it came from (`agent.model`, or a sampling request's `sampling.model`). */
  readonly model: string;
  readonly modelKey: string;
  /** The model as a hint quotes it (`quotedModel`): config.yaml's text for one a `${VAR}` gave. */
  readonly quoted?: string;
  /** Whether `agent.api_key` was sent. */
  readonly keySent: boolean;
  /** `agent.max_tokens`, when the request asked for it (not a sampling request's own limit). */
  readonly maxTokens?: number;
  /** `agent.max_tool_result_chars` (0: no cap). */
  readonly maxToolResultChars?: number;
  /**
   * False for a run's first request, which holds no tool result yet: a request too large for the endpoint is
   * then the route's prompt (the payload it quotes), which no `max_tool_result_chars` makes smaller.
   */
  readonly toolResultsSent?: boolean;
  /**
   * The run's route (`cron:<job>` for a cron job's run, `mcp:<server>` for a sampling request's), whose prompt
   * a refusal of the request names.
   */
  readonly route?: string;
  /**
   * The request was `vision_analyze`'s question about an image (the image inline, the question, no tool and
   * no system text): a request too large, or refused by a content filter, is the image's or the question's.
   */
  readonly image?: true;
}

/** What to do about a run's first request too large for the endpoint, before any tool ran. */
function firstRequestAdvice(route: string | undefined): string {
  const job = cronJobOf(route);
  return job === undefined
    ? "render less of the event in the route's prompt (the payload it quotes), shorten agent.system_prompt or the skill"
    : `shorten the prompt of cron job ${job} or agent.system_prompt`;
}

/**
 * A refusal of the output limit a request asked for: vLLM's `This model's maximum context length is 4096
 * tokens. However, you requested 4196 tokens (100 in the messages, 4096 in the completion)` (or `'max_tokens'
 * or 'max_completion_tokens' is too large`), SGLang's `... tokens for the completion`, TGI's `max_new_tokens`,
 * OpenAI's `max_tokens is too large`, Groq's `` `max_tokens` must be less than or equal to ``, the Messages
 * API's `max_tokens: 100000 > 64000, which is the maximum allowed ...`, DeepSeek's `Invalid max_tokens value`,
 * OpenRouter's `(4404 of text input, 4096 in the output)`.
 * Not OpenAI's refusal of the parameter's name (`'max_tokens' is not supported ... Use 'max_completion_tokens'`),
 * which svc answers by sending the other name.
 */
// A parameter's name, not a key of the request a validation error echoes (`"max_tokens": 4096`).
const OUTPUT_LIMIT =
  /\bmax_(?:completion_|new_|output_)?tokens\b(?!\\?"\s*:)|\b(?:in|for) the completion\b|\d+ in the output\b/i;
const NAME_REFUSED = /unsupported|not supported/i;

/**
 * A 400 for a prompt the endpoint's content filter refused before the model answered (Azure OpenAI's `"code":
 * "content_filter"`, `The response was filtered due to the prompt triggering Azure OpenAI's content management
 * policy`): no retry passes, only another prompt.
 */
const PROMPT_FILTERED = /"code"\s*:\s*"content_filter"/;

/**
 * A 400 refusing the model's name, as servers answer that do not use 404 for it: OpenRouter's `x is not a
 * valid model ID`, LiteLLM's `Invalid model name passed in model=x`, DeepSeek's `Model Not Exist`, Mistral's
 * `Invalid model: x`.
 */
const UNKNOWN_MODEL =
  /not a valid model\b|\binvalid model(?: name)?\b(?! (?:output|response|content))|\bmodel not exist|\bunknown model\b|\bno such model\b/i;

/**
 * A server's refusal of any request offering tools: Ollama's for a model without tool support
 * (`registry.ollama.ai/library/deepseek-r1:latest does not support tools`), vLLM's started without tool
 * calling (`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`),
 * llama.cpp's server without its chat templates (`tools param requires --jinja flag`).
 */
const NO_TOOLS =
  /does not support tools|tool choice requires --enable-auto-tool-choice|tools param requires --jinja/i;

/**
 * OpenAI's 400 for a request offering more tools than it takes (`Invalid 'tools': array too long. Expected an
 * array with maximum length 128, but got an array with length 303 instead.`), which a run offered many MCP
 * servers' tools gets on its first request: the maximum and the count.
 */
const TOO_MANY_TOOLS =
  /'tools'[^.]*array too long\. Expected an array with maximum length (\d+), but got an array with length (\d+)/;

/** What to do about a run offered more tools than the endpoint takes: a cron job is offered every server. */
function fewerTools(body: string, route: string | undefined): string | undefined {
  const match = TOO_MANY_TOOLS.exec(body);
  if (match === null) return undefined;
  const include = "list the tools a server offers in mcp_servers.<name>.tools.include";
  return ` — the run was offered ${match[2]} tools, more than the ${match[1]} the endpoint takes in one request: ${
    cronJobOf(route) === undefined
      ? `name only the MCP servers the route needs in its toolsets, or ${include}`
      : `a cron job is offered every MCP server, so ${include}`
  }`;
}

/**
 * LM Studio's answer to a path it does not serve, sent with HTTP 200 ("Returning 200 anyway", its log says):
 * `{"error":"Unexpected endpoint or method. (POST /chat/completions)"}`, what a base_url without its `/v1`
 * gets there.
 */
const UNSERVED_PATH = /Unexpected endpoint or method/i;

/**
 * What to fix for a 2xx answer that names the wrong base: LM Studio's error for a path it does not serve,
 * or a web page (a web UI in front of the model server, such as Open WebUI, answering every path with its
 * page), where the API answers JSON.
 */
function baseUrlToFix(body: string, endpoint: string): string {
  if (UNSERVED_PATH.test(body)) return ` — check agent.base_url${unversionedBase(endpoint)}`;
  const crossed = otherApisAnswer(body, endpoint);
  if (crossed !== undefined)
    return ` — ${crossed}, not the answer a ${ownPath(endpoint)} request gets: check agent.provider`;
  if (htmlPageSummary(body) !== undefined)
    return " — a web page, not the model API: check agent.base_url, the base of the API itself (Ollama: http://127.0.0.1:11434/v1)";
  return "";
}

/**
 * The other API's answer, as a stream of it is told apart (`io/modelStreamAnswer.ts`): a Chat Completions
 * object answering a `/messages` request, or a Messages API message a `/chat/completions` one (a server that
 * speaks the other API at the same base, agent.provider set to the wrong one).
 */
function otherApisAnswer(body: string, endpoint: string): string | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return undefined;
  const record = answer as Record<string, unknown>;
  const path = ownPath(endpoint);
  if (path === "/messages" && (record.object === "chat.completion" || Array.isArray(record.choices)))
    return "a Chat Completions answer";
  if (path === "/chat/completions" && record.type === "message" && Array.isArray(record.content))
    return "a Messages API answer";
  return undefined;
}

/** The path svc appended to agent.base_url for `endpoint`. */
function ownPath(endpoint: string): "/messages" | "/chat/completions" | undefined {
  if (/\/messages$/i.test(endpoint)) return "/messages";
  if (/\/chat\/completions$/i.test(endpoint)) return "/chat/completions";
  return undefined;
}

/**
 * For a 404 from an endpoint whose base names no API version (`http://localhost:11434/messages`, from a
 * base_url written as Anthropic's SDKs take `ANTHROPIC_BASE_URL`, which they add `/v1` to, and as Ollama,
 * LiteLLM and DeepSeek document theirs): the base most servers answer under, with `/v1`, since svc appends
 * only `/messages` or `/chat/completions`. Empty when the base has a version segment (`/v1`, `/v1beta`).
 */
function unversionedBase(endpoint: string): string {
  const match = /^(https?:\/\/[^/?#]+)((?:\/[^/?#]*)*?)(\/messages|\/chat\/completions)$/i.exec(endpoint);
  if (match === null || /\/v\d/i.test(match[2] ?? "")) return "";
  const base = `${match[1]}${match[2]}`;
  const why =
    match[3]?.toLowerCase() === "/messages"
      ? "Anthropic's SDKs add the /v1 to a base written without it, as Ollama, LiteLLM and DeepSeek document theirs; svc appends only /messages"
      : "svc appends only /chat/completions";
  return `, which names no API version: most servers answer at ${base}/v1${match[3]} (${why}) — write ${base}/v1`;
}

/**
 * What to fix for a refusal no retry can change: a model or server that takes no tools, 401 the key, 403
 * what the key may do, a 400 refusing the model's name or the output limit `agent.max_tokens`, a 413 what makes a
 * request large, 404 the model or the endpoint (Ollama's `model "x" not found`, OpenAI's `model_not_found`, a base_url without its `/v1`).
 */
export function settingToFix(status: number, used: ModelSettingsUsed, body = "", endpoint = ""): string {
  if (status >= 400 && NO_TOOLS.test(body))
    return ` — ${used.modelKey} ${quoted(used)} (or the server as it was started) takes no tools: use a model that calls tools, turn tool calling on in the server, or give the route toolsets: [no_mcp] so its runs offer none`;
  if (status === 401)
    return used.keySent
      ? " — check agent.api_key: the endpoint did not take it"
      : " — the endpoint wants a key: set agent.api_key";
  if (status === 403)
    return ` — agent.api_key may not make this request: check what the key (and its account) may use, ${used.modelKey} ${quoted(used)} among it`;
  if (status === 404)
    return ` — check ${used.modelKey} (${quoted(used)}) and agent.base_url${unversionedBase(endpoint)}`;
  if (status === 413 && used.image === true)
    return " — vision_analyze's request (the image, sent inline, and the question) is larger than the server, or a proxy in front of it, takes: ask about a smaller image, or raise the server's limit (nginx: client_max_body_size)";
  // A sampling request (no agent.max_tokens) is the MCP server's prompt: nothing in svc's config makes it smaller.
  if (status === 413 && used.maxTokens === undefined)
    return " — the MCP server's sampling request is larger than the server, or a proxy in front of it, takes: raise the server's limit (nginx: client_max_body_size)";
  if (status === 413)
    return used.toolResultsSent === false
      ? ` — the run's first request is larger than the server, or a proxy in front of it, takes, before any tool ran: ${firstRequestAdvice(used.route)}, or raise the server's limit (nginx: client_max_body_size)`
      : ` — the request (the prompt, and the run's tool results so far) is larger than the server, or a proxy in front of it, takes: ${resultCap(used)}, or raise the server's limit (nginx: client_max_body_size)`;
  // A sampling request (no agent.max_tokens) has no tool results to cut.
  const overflow = status === 400 && used.maxTokens !== undefined ? promptOverflow(body) : undefined;
  const tokens = overflow === null || overflow === undefined ? "" : ` (${overflow} tokens)`;
  if (overflow !== undefined && used.image === true)
    return ` — vision_analyze's request (the image and the question) fills the model's context${tokens}: ask about a smaller image, or use a model with a larger context`;
  if (overflow !== undefined)
    return used.toolResultsSent === false
      ? ` — the run's first request fills the model's context${tokens} before any tool ran: ${firstRequestAdvice(used.route)}, or use a model with a larger context`
      : ` — the prompt and the run's tool results so far fill the model's context${tokens}: ${resultCap(used)}, or use a model with a larger context`;
  if (status === 400 && PROMPT_FILTERED.test(body)) {
    const route = promptToChange(used.route);
    const azure = "on Azure OpenAI, the deployment's content filter decides";
    if (used.image === true)
      return ` — the endpoint's content filter refused vision_analyze's request: the image or the question set it off; ${azure}`;
    // After a tool ran, the request holds its results: a page or file the model read may be what the filter
    // refused (Azure's Prompt Shields judge them as documents), not the route's prompt.
    if (used.toolResultsSent === true)
      return ` — the endpoint's content filter refused the prompt, tool results included: what a tool read (a page, a file) may have set it off, or what ${route} or agent.system_prompt asks for; ${azure}`;
    // A cron job's prompt and a sampling request quote no event.
    const payload =
      cronJobOf(used.route) === undefined && samplingServerOf(used.route) === undefined
        ? " (the event's payload is part of the prompt)"
        : "";
    return ` — the endpoint's content filter refused the prompt: change what ${route} or agent.system_prompt asks for${payload}; ${azure}`;
  }
  const tools = status === 400 ? fewerTools(body, used.route) : undefined;
  if (tools !== undefined) return tools;
  if (status === 400 && UNKNOWN_MODEL.test(body))
    return ` — check ${used.modelKey} (${quoted(used)}): the endpoint does not know it by that name`;
  if (
    (status === 400 || status === 422) &&
    used.maxTokens !== undefined &&
    OUTPUT_LIMIT.test(body) &&
    !NAME_REFUSED.test(body)
  )
    return ` — check agent.max_tokens (${used.maxTokens}): the output tokens each model turn asks for, which the model (with the prompt, in its context) may not have room for`;
  if (status === 429 && QUOTA_EXHAUSTED.test(body))
    return " — the account agent.api_key belongs to has no quota left (insufficient_quota, not a rate limit: no retry passes): add credit or raise its spending limit in its plan and billing";
  return "";
}

/** What to do with `agent.max_tool_result_chars` for a request too large (0: no cap). */
function resultCap(used: ModelSettingsUsed): string {
  if (used.maxToolResultChars === undefined) return "lower agent.max_tool_result_chars";
  return used.maxToolResultChars === 0
    ? "set agent.max_tool_result_chars (0: no cap) to cut long results"
    : `lower agent.max_tool_result_chars (${used.maxToolResultChars})`;
}

/** The model a hint names, quoted: `"gpt-4o"`, or config.yaml's text for one a `${VAR}` gave. */
const quoted = (used: ModelSettingsUsed) => used.quoted ?? `"${used.model}"`;

/**
 * `model` as a run's messages quote it: `"gpt-4o"`, or, when a `${VAR}` gave it (`given`, config.yaml's text),
 * that text (`"${MODEL}" (the value it gives is not shown)`).
 */
export const quotedModel = (model: string, given: WrittenAs | undefined): string =>
  given === undefined ? `"${model}"` : describe(given);

/** A `base_url` a `${VAR}` gave: the base the requests go under (`modelBaseUrl`), and config.yaml's text for it. */
export interface GivenBaseUrl {
  readonly base: string;
  readonly written: WrittenAs;
}

/**
 * `text` with a base URL a `${VAR}` gave named as config.yaml writes it (`"${BASE}" (the value it gives is not
 * shown)/chat/completions`) in whichever form the error writes it (any case), and its host, which fetch's
 * messages and the hints name alone, as `<the host of "${BASE}" (…)>`: never what the variable gave.
 */
const withBaseAsWritten = (text: string, given: GivenBaseUrl): string =>
  withUrlAsWritten(text, given.base, given.written);

/**
 * A model failure in one line for the log, the journal and the failure notice: what the endpoint said
 * (status, short body) or why it could not be reached. The API key is cut out wherever it might echo.
 */
export function describeModelError(
  err: unknown,
  secrets: readonly (string | undefined)[],
  /** Where the answer came from, named for an answer the SDK could not use (no status of its own). */
  endpoint?: string,
  /** The settings the request was made with: a refusal only they can change (401, 403, 404) names them. */
  used?: ModelSettingsUsed,
  /** `agent.base_url` when a `${VAR}` gave it: named as config.yaml writes it, its host too. */
  givenBase?: GivenBaseUrl,
): string {
  let text: string;
  if (APICallError.isInstance(err)) {
    const where = err.url.replace(/\?.*$/, "");
    // Scrubbed before it is cut: a cut through an echoed key would leave its first characters.
    const body = excerpt(scrub((err.responseBody ?? "").replace(/\s+/g, " ").trim(), secrets));
    if (isRefusedPort(err))
      text = `model endpoint ${where} was not called: its port is ${BLOCKED_PORT} — serve the model on another port, or put a proxy in front, and set agent.base_url to it`;
    else if (err.statusCode === undefined && modelTlsHint(err) === "" && droppedBy(err) !== undefined)
      text = `model endpoint ${where} closed the connection without answering (${droppedBy(err)}) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own)${modelClosedHint(err)}`;
    else if (err.statusCode === undefined)
      text = `model endpoint ${where} could not be reached: ${err.message}${modelTlsHint(err) || modelTlsAnswerHint(err) || unreachableHint(err)}`;
    // Not followed: the request carries the key (see modelRequest).
    else if (err.statusCode >= 300 && err.statusCode < 400) {
      const location = headerOf(err.responseHeaders, "location");
      const to = location === undefined ? "" : ` to ${redirectTarget(location, err.url)}`;
      text = `model endpoint ${where} answered HTTP ${err.statusCode}, a redirect${to}, which svc does not follow (the request carries agent.api_key and the prompt) — set agent.base_url to where it leads`;
    }
    // A 2xx the SDK could not read (not JSON, not the API's shape, an OpenRouter-style error body) is not an
    // HTTP error: "answered HTTP 200" would read as success.
    // A body read whole but blank (a server that closed its answer without writing one) is said so: the
    // SDK's parse error would quote the empty text over two lines.
    else if (err.statusCode >= 200 && err.statusCode < 300)
      text = `model endpoint ${where} gave an answer svc cannot use (HTTP ${err.statusCode}): ${body || (err.responseBody === undefined ? `${err.message}${causes(err.cause)}` : "an empty body")}${used === undefined ? "" : baseUrlToFix(err.responseBody ?? "", where)}`;
    else {
      // An error answer whose body was not read whole (past the cap) has none to quote: the cap says why.
      const tooLarge = answerTooLarge(err.cause);
      const said = body ? `: ${body}` : tooLarge ? `: ${tooLarge.message}` : ` (${err.message})`;
      text = `model endpoint ${where} answered HTTP ${err.statusCode}${said}${used === undefined ? "" : settingToFix(err.statusCode, used, err.responseBody ?? "", where)}`;
    }
  } else if (InvalidResponseDataError.isInstance(err) && endpoint !== undefined && err.data !== undefined) {
    // A 200 answer in the API's shape with nothing to read (OpenRouter's `"choices": []` when the upstream
    // model gave nothing): quoted as any answer svc cannot use, the SDK's class name left out.
    const body = excerpt(scrub(JSON.stringify(err.data), secrets));
    text = `model endpoint ${endpoint.replace(/\?.*$/, "")} gave an answer svc cannot use: ${err.message.replace(/\.$/, "")}: ${body}`;
  } else if (err instanceof Error && endpoint !== undefined && err.name.startsWith("AI_")) {
    text = `model endpoint ${endpoint.replace(/\?.*$/, "")} gave an answer svc cannot use: ${err.name}: ${err.message}`;
  } else if (err instanceof Error) {
    const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
    text = `${err.name === "Error" ? "" : `${err.name}: `}${err.message}${cause}`;
  } else {
    text = String(err);
  }
  // One line: the log line, the journal and the notice quote it (an SDK message may hold a line break). The
  // body is cut already (MAX_DETAIL); the cap here is for a message of unknown length, and keeps the advice
  // after a long body and endpoint (a cut at twice MAX_DETAIL lost it).
  const shown = givenBase === undefined ? text : withBaseAsWritten(text, givenBase);
  return cutText(scrub(shown.replace(/\s*\n\s*/g, " "), secrets), MAX_MESSAGE);
}
