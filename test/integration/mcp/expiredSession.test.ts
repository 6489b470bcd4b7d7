import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FixtureHttp } from "../../fixtures/mcp/httpServers.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";
import { taskSessions } from "./taskSessions.js";

/**
 * MCP: a server that has ended a session answers each request naming it with HTTP 404, and the client
 * starts a new session. What svc then does with the call (a read-only tool replayed, any other one failed as
 * outcome_uncertain) is pinned in http.test.ts; here, what must not count as an expiry, and a task's poll.
 */
const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();
const serve = useLoopbackHttp();

/** A Streamable HTTP server whose tool "job" runs only as a task (created, then polled), done after 400 ms. */
async function taskServer() {
  const { state, handle, sessions } = taskSessions({ pollInterval: 50, doneAfterMs: 400 });
  const port = await serve((req, res) => handle(req, res));
  return { url: `http://127.0.0.1:${port}/mcp`, state, sessions };
}

describe("an expired session under a call", () => {
  it("a task whose polling meets an expired session is not created again: it was created and may run", async () => {
    const s = await taskServer();
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    const call = h.call("jobs", "job", {});
    await vi.waitFor(() => expect(s.state.created).toBe(1), { timeout: 5000, interval: 10 });
    s.state.expire();
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.jobs: following the task of "job" failed \(.*Session not found.*\); it may or may not have run — verify its effect before calling it again$/,
      ),
    });
    expect(s.state.created).toBe(1);
    // The server forgot the session: a new one is started at once, not at the next request.
    await vi.waitFor(() => expect(s.sessions.size).toBe(1), { timeout: 3000, interval: 10 });
  });

  it("a task whose poll's cut response stream the server cannot resume (HTTP 404: it forgot the session) starts a new session at once", async () => {
    const tasks = taskSessions({ pollInterval: 20, doneAfterMs: 2000, resumable: true });
    const cut = { next: false, resumes: 0 };
    const port = await serve(async (req, res) => {
      let parsed: unknown;
      if (req.method === "POST") {
        let body = "";
        for await (const chunk of req) body += chunk;
        parsed = JSON.parse(body);
        const message = parsed as { method?: string; id?: number };
        const session = tasks.sessions.get(String(req.headers["mcp-session-id"]));
        if (message.method === "tasks/get" && cut.next && session !== undefined) {
          cut.next = false;
          // The poll's stream ends before its answer, and the server forgets the session.
          tasks.state.hold = async () => {
            session.closeSSEStream(message.id as number);
            tasks.state.expire();
          };
        }
      }
      if (req.method === "GET" && typeof req.headers["last-event-id"] === "string") cut.resumes++;
      await tasks.handle(req, res, parsed);
    });
    const h = ctx.hub(ctx.home, { jobs: entry({ url: `http://127.0.0.1:${port}/mcp` }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    const call = h.call("jobs", "job", {});
    await vi.waitFor(() => expect(tasks.state.created).toBe(1), { timeout: 5000, interval: 10 });
    cut.next = true;
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.jobs: following the task of "job" failed \(.*Session not found.*\); it may or may not have run — verify its effect before calling it again$/,
      ),
    });
    expect(cut.resumes).toBe(1);
    await vi.waitFor(() => expect(tasks.sessions.size).toBe(1), { timeout: 3000, interval: 10 });
    expect(tasks.state.created).toBe(1);
  });

  it("a tool's own JSON-RPC error that quotes an HTTP 404 (an upstream API's) is the call's error, not an expired session", async () => {
    let calls = 0;
    let sessions = 0;
    const build = () => {
      sessions++;
      const server = new Server({ name: "proxy", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "create-issue", inputSchema: { type: "object" as const } }],
      }));
      server.setRequestHandler(CallToolRequestSchema, () => {
        calls++;
        throw new McpError(-32603, "GitHub answered (HTTP 404): Not Found");
      });
      return server;
    };
    const h = ctx.hub(
      ctx.home,
      { gh: entry(IN_MEMORY_ENTRY) },
      { transportFor: inMemoryServers({ gh: build }) },
    );
    await h.settled("gh");
    await expect(h.call("gh", "create-issue", {})).rejects.toMatchObject({
      code: "mcp_call",
      message:
        'mcp_servers.gh: "create-issue" failed: MCP error -32603: GitHub answered (HTTP 404): Not Found',
    });
    expect(calls).toBe(1);
    expect(sessions).toBe(1);
    expect((await h.settled("gh")).state).toBe("connected");
  });
});
