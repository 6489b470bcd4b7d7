import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";
import { taskSessions } from "./taskSessions.js";

/**
 * A tool run only as a task whose `tools/call` itself is refused before the server made a task: the
 * transport's refusal is told as for a plain call (the MCP SDK's task stream hands it on flattened into an
 * `MCP error -32603` of its text), so an expired session reconnects at once and a 401 or a server gone
 * reconnect as a plain call's do.
 */
const ctx = useHubs();
const serve = useLoopbackHttp();

/** The task server of "job" (done after 50 ms, polled every 10 ms) on loopback; `readOnly`: listed so. */
async function taskServer(readOnly = false) {
  const tasks = taskSessions({ pollInterval: 10, doneAfterMs: 50, readOnly });
  const port = await serve((req, res) => tasks.handle(req, res));
  return { url: `http://127.0.0.1:${port}/mcp`, ...tasks };
}

const own: Server[] = [];
afterEach(async () => {
  for (const server of own.splice(0)) {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
});

describe("a task tool's call refused before its task was made", () => {
  it("an expired session (HTTP 404): reconnects at once and fails as outcome_uncertain, the task not made", async () => {
    const s = await taskServer();
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    s.state.expire();
    await expect(h.call("jobs", "job", {})).rejects.toMatchObject({
      code: "outcome_uncertain",
      message:
        'mcp_servers.jobs: the session expired while "job" was being called; it may or may not have run — verify its effect before calling it again',
    });
    expect(s.state.created).toBe(0);
    // A new session at once, not at the next keepalive ping (180 s).
    await vi.waitFor(() => expect(s.sessions.size).toBe(1), { timeout: 3000, interval: 10 });
    expect(text(await h.call("jobs", "job", {}))).toBe("job done");
  });

  it("an expired session (HTTP 404) under a read-only task tool: replayed once on the new session", async () => {
    const s = await taskServer(true);
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    s.state.expire();
    expect(text(await h.call("jobs", "job", {}))).toBe("job done");
    expect(s.state.created).toBe(1);
  });

  it("a static token refused (HTTP 401): says so, and the next call reconnects with the token .env gives then", async () => {
    const tasks = taskSessions({ pollInterval: 10, doneAfterMs: 50 });
    const taken = { token: "first-token", seen: [] as string[] };
    const port = await serve(async (req, res) => {
      taken.seen.push(String(req.headers.authorization));
      if (req.headers.authorization !== `Bearer ${taken.token}`) {
        res.writeHead(401).end("token expired");
        return;
      }
      await tasks.handle(req, res);
    });
    ctx.home.write(".env", "TOKEN=first-token\n");
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      rot: entry({ url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: "Bearer ${TOKEN}" } }),
    });
    expect((await h.settled("rot")).state).toBe("connected");
    taken.token = "second-token";
    ctx.home.write(".env", "TOKEN=second-token\n");
    const failed = await h.call("rot", "job", {}).catch((err: Error & { code?: string }) => err);
    expect(failed).toMatchObject({ code: "mcp_call" });
    expect((failed as Error).message).toMatch(/^mcp_servers\.rot: "job" failed: .*\(HTTP 401\).* — /);
    expect((failed as Error).message).toContain(
      "the server refused the credentials svc sent (the Authorization header of mcp_servers.rot.headers, or the url's user:password@): check that the token is valid and not expired",
    );
    expect(tasks.state.created).toBe(0);
    expect(text(await h.call("rot", "job", {}))).toBe("job done");
    expect(taken.seen.at(-1)).toBe("Bearer second-token");
  });

  it("a server gone (connection refused): names the network cause, and the status leaves connected", async () => {
    const tasks = taskSessions({ pollInterval: 10, doneAfterMs: 50 });
    const server = createServer((req, res) => void tasks.handle(req, res));
    own.push(server);
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const port = (server.address() as AddressInfo).port;
    const h = ctx.hub(ctx.home, { gone: entry({ url: `http://127.0.0.1:${port}/mcp` }) });
    expect((await h.settled("gone")).state).toBe("connected");
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
    own.splice(0);
    await expect(h.call("gone", "job", {})).rejects.toMatchObject({
      code: "mcp_call",
      message: expect.stringMatching(
        /^mcp_servers\.gone: "job" failed: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:(\d+) — nothing listens on port \1 of 127\.0\.0\.1: start the server, or check mcp_servers\.gone\.url$/,
      ),
    });
    expect(h.status()[0]?.state).not.toBe("connected");
    expect(h.status()[0]?.lastError).toMatch(/ECONNREFUSED/);
  });
});
