import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SvcError } from "../../errors.js";

const MCP_TYPES = ["application/json", "text/event-stream"];
const PROBE_BUDGET_MS = 3000;

function mediaType(header: string | null): string {
  return (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Fail-fast probe of a remote endpoint (`skip_preflight`): HEAD, then GET when HEAD gives no
 * verdict. Only a 2xx answer with a content type that is neither JSON nor an event stream (a login page,
 * a docs site) fails; every other answer (401, 404, 405, network errors, no content type) and no answer
 * within the probe's share of the time proceed to the real connect, which reports its own error.
 */
export async function preflight(
  server: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  fetch: FetchLike,
  timeoutMs: number,
  /** The url as written (`${VAR}` unrendered): messages never echo a secret rendered into it. */
  shownUrl = url,
  /**
   * SSE: GET only. A Node SSE server (the TypeScript SDK's, Express-based ones) never sends the headers
   * of a HEAD on its event stream, so HEAD would wait out the whole probe budget.
   */
  methods: ReadonlyArray<"HEAD" | "GET"> = ["HEAD", "GET"],
  /** The connect was given up (connect_timeout, stop): the probe ends with it. */
  signal?: AbortSignal,
): Promise<void> {
  for (const method of methods) {
    if (signal?.aborted) return;
    // A HEAD or GET that hangs (a server that answers MCP on POST only) must not eat the connect's time:
    // the probe is there to fail fast on a definite wrong answer, and no answer is none. An SSE stream's
    // GET, the only probe, keeps the whole wait: the connect's own GET would hang as well.
    const budget = methods.length > 1 ? Math.min(timeoutMs / 3, PROBE_BUDGET_MS) : timeoutMs;
    const verdict = await probe(url, method, headers, fetch, budget, signal);
    if (verdict === "mcp") return;
    if (verdict !== undefined) {
      throw new SvcError(
        "mcp_connect",
        `mcp_servers.${server}: ${shownUrl} answered ${method} with content type "${verdict}", not an MCP endpoint — ${
          methods.includes("HEAD")
            ? "check the url, or set skip_preflight: true if the server only answers MCP on POST"
            : "check the url: an SSE endpoint's GET answers text/event-stream (for a Streamable HTTP server, remove transport: sse)"
        }`,
      );
    }
  }
}

/** "mcp" for an MCP-looking 2xx, the content type for a non-MCP 2xx, undefined for "no verdict". */
async function probe(
  url: string,
  method: "HEAD" | "GET",
  headers: Readonly<Record<string, string>>,
  fetch: FetchLike,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const response = await fetch(url, {
      method,
      headers: { ...headers, accept: "application/json, text/event-stream" },
      signal: controller.signal,
      redirect: "manual",
    });
    const type = mediaType(response.headers.get("content-type"));
    await response.body?.cancel().catch(() => undefined);
    if (response.status < 200 || response.status >= 300 || type === "") return undefined;
    return MCP_TYPES.includes(type) ? "mcp" : type;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
    controller.abort();
  }
}
