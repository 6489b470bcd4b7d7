import { describe, expect, it } from "vitest";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

const TOKEN = "sk-live-0123456789abcdef";

/**
 * A url whose GET of the SSE stream is refused with a body: the refusal reads as a refused POST does,
 * `(HTTP <status>)` and the body on one line, with the credentials svc sent redacted from it.
 */
describe("an SSE stream whose GET is refused (transport: sse)", () => {
  it.each([
    [401, `invalid token ${TOKEN}\nsee the docs`, `invalid token [redacted] see the docs`],
    [403, "key [redacted] lacks scope mcp:read", "key [redacted] lacks scope mcp:read"],
    [404, "no such stream\n", "no such stream"],
  ])("HTTP %i: the status and the body, as a POST's refusal", async (status, body, quoted) => {
    const port = await serve((req, res) => {
      if (req.method !== "GET") {
        res.writeHead(405).end();
        return;
      }
      res.writeHead(status, { "content-type": "text/plain" }).end(body.replace("[redacted]", TOKEN));
    });
    ctx.home.write(".env", `TOKEN=${TOKEN}\n`);
    const h = ctx.hub(ctx.home, {
      x: entry({
        url: `http://127.0.0.1:${port}/sse`,
        transport: "sse",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        headers: { Authorization: "Bearer ${TOKEN}" },
        skip_preflight: true,
      }),
    });
    const { lastError } = await h.settled("x");
    expect(lastError).toContain(`mcp_servers.x: Error GETting the SSE stream (HTTP ${status}): ${quoted}`);
    expect(lastError).not.toContain(TOKEN);
  });

  it("an HTML page (a proxy's, a login page) is named by its title, as in a POST's refusal", async () => {
    const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>${"<p>x</p>\n".repeat(500)}</body></html>`;
    const port = await serve((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" }).end(page);
    });
    const h = ctx.hub(ctx.home, { x: entry({ url: `http://127.0.0.1:${port}/sse`, transport: "sse" }) });
    expect((await h.settled("x")).lastError).toBe(
      `mcp_servers.x: Error GETting the SSE stream (HTTP 502): an HTML page "502 Bad Gateway" (${page.length} characters, not shown)`,
    );
  });

  it("an empty body leaves the status alone; the hints follow as before", async () => {
    const port = await serve((_req, res) => {
      res.writeHead(401).end();
    });
    const h = ctx.hub(ctx.home, { x: entry({ url: `http://127.0.0.1:${port}/sse`, transport: "sse" }) });
    expect((await h.settled("x")).lastError).toMatch(
      /^mcp_servers\.x: Error GETting the SSE stream \(HTTP 401\) — the server requires authorization: /,
    );
  });
});
