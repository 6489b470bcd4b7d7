import { randomUUID } from "node:crypto";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, vi } from "vitest";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * A Streamable HTTP server (the SDK's) whose tool "job" runs only as a task, done after 300 ms and polled
 * every 20 ms. `drop` names how many of the next `tasks/get` requests have their connection cut before any
 * answer (the socket destroyed: a proxy restarting, a network blip); `expire` forgets every session.
 */
async function taskServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state = { created: 0, polls: 0, dropped: 0, drop: 0, expire: () => sessions.clear() };
  const port = await serve(async (req, res) => {
    let parsed: unknown;
    if (req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      parsed = JSON.parse(body);
      if ((parsed as { method?: string }).method === "tasks/get") {
        state.polls++;
        if (state.drop > 0) {
          state.drop--;
          state.dropped++;
          req.socket.destroy();
          return;
        }
      }
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined && typeof id === "string") {
      res
        .writeHead(404)
        .end(
          JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
        );
      return;
    }
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const server = new McpServer(
        { name: "tasks", version: "1" },
        {
          capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
          taskStore: new InMemoryTaskStore(),
        },
      );
      server.experimental.tasks.registerToolTask(
        "job",
        { execution: { taskSupport: "required" } },
        {
          createTask: async (extra) => {
            state.created++;
            const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 20 });
            setTimeout(() => {
              void extra.taskStore.storeTaskResult(task.taskId, "completed", {
                content: [{ type: "text", text: "job done" }],
              });
            }, 300);
            return { task };
          },
          getTask: (extra) => extra.taskStore.getTask(extra.taskId),
          getTaskResult: (extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
        },
      );
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, parsed);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

describe("a task whose poll loses its connection", () => {
  it("is polled again once the connection is back, and the call gets the task's result", async () => {
    const s = await taskServer();
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    s.state.drop = 2;
    expect(text(await h.call("jobs", "job", {}))).toBe("job done");
    expect(s.state.dropped).toBe(2);
    expect(s.state.created).toBe(1);
    expect(s.state.polls).toBeGreaterThan(2);
  });

  it("still fails as outcome_uncertain when the server no longer knows the session once it is back", async () => {
    const s = await taskServer();
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    s.state.drop = 1;
    const call = h.call("jobs", "job", {});
    await vi.waitFor(() => expect(s.state.dropped).toBe(1), { timeout: 5000, interval: 5 });
    s.state.expire();
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.jobs: following the task of "job" failed \(.*Session not found.*\); it may or may not have run — verify its effect before calling it again$/,
      ),
    });
    expect(s.state.created).toBe(1);
  });
});
