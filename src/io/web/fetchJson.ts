import { cutText } from "../cutText.js";
import { outboundFetch } from "../outbound/dispatcher.js";
import { DELAY_SECONDS, parseRetryAfter } from "../retryAfter.js";

export interface JsonRequest {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export type JsonResult =
  | { readonly ok: true; readonly status: number; readonly json: unknown }
  | {
      readonly ok: false;
      readonly error: string;
      readonly status?: number;
      /** Seconds the backend asked to wait (a 429's `Retry-After`, or Brave's `X-RateLimit-Reset`). */
      readonly waitSeconds?: number;
    };

/**
 * The wait a refusal asks for: `Retry-After`, else `X-RateLimit-Reset` as Brave sends it (seconds to the
 * reset of each of its windows, `1, 1419704`: the first, the per-second window, is the one a 429 hit).
 */
function waitAsked(headers: Headers): number | undefined {
  const retryAfter = parseRetryAfter(headers.get("retry-after"));
  if (retryAfter !== undefined) return retryAfter;
  const reset = headers.get("x-ratelimit-reset")?.split(",")[0]?.trim() ?? "";
  return DELAY_SECONDS.test(reset) ? Number(reset) : undefined;
}

const MAX_BYTES = 2 * 1024 * 1024;

/** An answer past MAX_BYTES: the backend answered, so not "could not be reached". */
class TooLarge extends Error {}

async function readCapped(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw new TooLarge();
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The message in a JSON error answer, one line and short: Brave's `error.detail`, Tavily's
 * `detail.error`, a `detail`, `message` or `error` string. Empty when there is none (an HTML page).
 */
export function errorDetail(text: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return "";
  }
  const o = (value: unknown): Record<string, unknown> =>
    typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const answer = o(json);
  const found = [o(answer.error).detail, o(answer.error).message, o(answer.detail).error, answer.detail]
    .concat([answer.message, answer.error])
    .find((value): value is string => typeof value === "string" && value.trim() !== "");
  if (found === undefined) return "";
  const line = found.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${cutText(line, 300)}…` : line;
}

/** Where a redirect leads, without its query (it would repeat the search, or a key put there). */
export function redirectTarget(location: string, base: string): string {
  try {
    const url = new URL(location, base);
    return `${url.origin}${url.pathname}`;
  } catch {
    return "an unreadable location";
  }
}

/**
 * One JSON API call (a search backend): a timeout, the answer capped at 2 MiB, redirects refused. Errors
 * name the host and the status, never the request's headers, query or body (they carry API keys).
 */
export async function fetchJson(
  request: JsonRequest,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<JsonResult> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const host = new URL(request.url).host;
  try {
    const response = await outboundFetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.any([signal, deadline.signal]),
      // Not followed (the backend's URL is the operator's choice, where it leads is not), and said so:
      // with redirect: "error" it came out as a bare "fetch failed".
      redirect: "manual",
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get("location");
      const to = location === null ? "" : ` to ${redirectTarget(location, request.url)}`;
      return {
        ok: false,
        error: `${host} answered HTTP ${response.status}, a redirect${to}, which svc does not follow — set tools.web_search.url to where it leads`,
      };
    }
    const text = await readCapped(response);
    if (!response.ok) {
      const detail = errorDetail(text);
      const wait = waitAsked(response.headers);
      return {
        ok: false,
        status: response.status,
        ...(wait === undefined ? {} : { waitSeconds: wait }),
        error: `${host} answered HTTP ${response.status}${detail === "" ? "" : `: ${detail}`}`,
      };
    }
    try {
      return { ok: true, status: response.status, json: JSON.parse(text) };
    } catch {
      return { ok: false, error: `${host} answered something that is not JSON` };
    }
  } catch (err) {
    if (err instanceof TooLarge)
      return {
        ok: false,
        error: `${host} answered more than ${MAX_BYTES / (1024 * 1024)} MiB, which svc does not read`,
      };
    if (deadline.signal.aborted)
      return { ok: false, error: `${host} did not answer within ${timeoutMs / 1000} s` };
    if (signal.aborted) return { ok: false, error: "canceled: the run ended" };
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    return { ok: false, error: `${host} could not be reached: ${cause}` };
  } finally {
    clearTimeout(timer);
  }
}
