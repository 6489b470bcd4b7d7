import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, vi } from "vitest";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";
import { droppingTaskServer, type Received } from "./taskSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

interface Posted {
  readonly method?: string;
  readonly id?: number;
  readonly params?: { requestId?: number };
}

/**
 * An SDK Streamable HTTP server on loopback that records every message posted to it: "echo" answers at
 * once, "hold" only once cancelled, "job" runs as a task done after 50 ms.
 */
async function recordingServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const posted: Posted[] = [];
  const state = { holding: 0 };
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    let parsed: unknown;
    if (req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      parsed = JSON.parse(body);
      posted.push(...(Array.isArray(parsed) ? parsed : [parsed]));
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const server = new McpServer(
        { name: "recording", version: "1" },
        {
          capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
          taskStore: new InMemoryTaskStore(),
        },
      );
      server.registerTool("echo", {}, () => ({ content: [{ type: "text", text: "echoed" }] }));
      server.registerTool("hold", {}, async (extra) => {
        state.holding++;
        await new Promise<void>((stopped) => extra.signal.addEventListener("abort", () => stopped()));
        return { content: [{ type: "text", text: "never sent" }] };
      });
      server.experimental.tasks.registerToolTask(
        "job",
        { execution: { taskSupport: "required" } },
        {
          createTask: async (extra) => {
            const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 10 });
            setTimeout(() => {
              void extra.taskStore.storeTaskResult(task.taskId, "completed", {
                content: [{ type: "text", text: "job done" }],
              });
            }, 50);
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
  const methods = () => posted.map((m) => m.method);
  return { url: `http://127.0.0.1:${port}/mcp`, posted, methods, state };
}

describe("notifications/cancelled over Streamable HTTP", () => {
  it("is sent for a call still in flight when its run ends, naming that call's request id", async () => {
    const s = await recordingServer();
    const h = ctx.hub(ctx.home, { rec: entry({ url: s.url }) });
    expect((await h.settled("rec")).state).toBe("connected");
    const run = new AbortController();
    const call = h.call("rec", "hold", {}, run.signal);
    await vi.waitFor(() => expect(s.state.holding).toBe(1), { timeout: 5000, interval: 5 });
    run.abort();
    await expect(call).rejects.toThrow(/was canceled: the run ended before it answered/);
    await vi.waitFor(() => expect(s.methods()).toContain("notifications/cancelled"), {
      timeout: 5000,
      interval: 5,
    });
    const held = s.posted.find((m) => m.method === "tools/call");
    const cancelled = s.posted.filter((m) => m.method === "notifications/cancelled");
    expect(cancelled.map((m) => m.params?.requestId)).toEqual([held?.id]);
  });

  it("is never sent for calls the server had answered, plain or run as a task, when their run ends", async () => {
    const s = await recordingServer();
    const h = ctx.hub(ctx.home, { rec: entry({ url: s.url }) });
    expect((await h.settled("rec")).state).toBe("connected");
    const run = new AbortController();
    expect(text(await h.call("rec", "echo", {}, run.signal))).toBe("echoed");
    expect(text(await h.call("rec", "job", {}, run.signal))).toBe("job done");
    run.abort();
    // A cancel the abort caused would be posted at once, before the next call's POST.
    expect(text(await h.call("rec", "echo", {}))).toBe("echoed");
    expect(s.methods()).not.toContain("notifications/cancelled");
    expect(s.methods()).not.toContain("tasks/cancel");
    expect(s.methods().filter((m) => m === "tools/call")).toHaveLength(3);
  });
});

/**
 * The `notifications/cancelled` a task server was sent: none, or one for the request still in flight when
 * the call was given up — the task's last poll, never the tools/call the task was made by.
 */
/** The task the server was polled for is cancelled with tasks/cancel, once, and only the last poll was in flight. */
async function taskCancelledOnce(received: readonly Received[]): Promise<void> {
  const polled = received.find((m) => m.method === "tasks/get")?.params?.taskId;
  await vi.waitFor(
    () =>
      expect(received.filter((m) => m.method === "tasks/cancel").map((m) => m.params?.taskId)).toEqual([
        polled,
      ]),
    { timeout: 5000, interval: 5 },
  );
  cancelsOnlyTheLastPoll(received);
}

function cancelsOnlyTheLastPoll(received: readonly Received[]): void {
  const cancelled = received.filter((m) => m.method === "notifications/cancelled");
  expect(cancelled.length).toBeLessThanOrEqual(1);
  const polls = received.filter((m) => m.method === "tasks/get" || m.method === "tasks/result");
  for (const cancel of cancelled) expect(cancel.params?.requestId).toBe(polls.at(-1)?.id);
}

describe("a task given up while it runs (its tools/call and earlier polls answered)", () => {
  it("at its timeout: tasks/cancel for the task, and no notifications/cancelled for the requests answered", async () => {
    const s = await droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 60_000 });
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url, timeout: 0.5 }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    await expect(h.call("jobs", "job", {})).rejects.toMatchObject({ code: "mcp_timeout" });
    expect(s.state.polls).toBeGreaterThan(1);
    await taskCancelledOnce(s.received);
  });

  it("at its run's end: the same", async () => {
    const s = await droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 60_000 });
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    const run = new AbortController();
    const call = h.call("jobs", "job", {}, run.signal);
    await vi.waitFor(() => expect(s.state.polls).toBeGreaterThan(2), { timeout: 5000, interval: 5 });
    run.abort();
    await expect(call).rejects.toThrow(/was canceled: the run ended before it answered/);
    await taskCancelledOnce(s.received);
  });
});

describe("a task given up while its tools/call waits for its answer (the server making the task)", () => {
  it("waits for the answer and cancels the task it names with tasks/cancel, not the tools/call with notifications/cancelled", async () => {
    const s = await droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 60_000 });
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    let release: () => void = () => undefined;
    s.state.holdCreate = () =>
      new Promise<void>((released) => {
        release = released;
      });
    const run = new AbortController();
    const call = h.call("jobs", "job", {}, run.signal);
    await vi.waitFor(() => expect(s.state.created).toBe(1), { timeout: 5000, interval: 5 });
    run.abort();
    release();
    await expect(call).rejects.toThrow(/was canceled: the run ended before it answered/);
    expect(s.received.filter((m) => m.method === "tasks/cancel").map((m) => m.params?.taskId)).toEqual(
      s.state.made,
    );
    expect(s.state.made).toHaveLength(1);
    expect(s.received.map((m) => m.method)).not.toContain("notifications/cancelled");
  });
});

/**
 * A server whose handshake's answer never comes (its headers, then nothing): `posted` holds what it was
 * sent, `state.open` counts the answers still open on its side.
 */
async function muteHandshake(type: string) {
  const posted: Posted[] = [];
  const state = { open: 0 };
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(body) as Posted;
    posted.push(message);
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    state.open++;
    res.on("close", () => state.open--);
    res.writeHead(200, { "content-type": type });
    res.flushHeaders();
  });
  return { posted, state, port };
}

describe.each([["text/event-stream"], ["application/json"]])(
  "an initialize given up at connect_timeout (%s headers, then nothing)",
  (type) => {
    it("is not cancelled with notifications/cancelled (MCP: a client must not cancel initialize), and its connection is closed", async () => {
      const { posted, state, port } = await muteHandshake(type);
      const h = ctx.hub(ctx.home, {
        mute: entry({ url: `http://127.0.0.1:${port}/mcp`, connect_timeout: 0.3, skip_preflight: true }),
      });
      const settled = await h.settled("mute");
      expect(settled.state).not.toBe("connected");
      expect(posted.map((m) => m.method)).toContain("initialize");
      await vi.waitFor(() => expect(state.open).toBe(0), { timeout: 2000, interval: 10 });
      expect(posted.map((m) => m.method)).not.toContain("notifications/cancelled");
    });
  },
);

describe("the SDK's own timeout of initialize (the handshake's timer, which can run out before the connect's)", () => {
  it("sends no notifications/cancelled for initialize and closes its connection", async () => {
    const { openSession } = await import("../../../src/io/mcp/session.js");
    const { createTransport } = await import("../../../src/io/mcp/transport.js");
    const { posted, state, port } = await muteHandshake("text/event-stream");
    const url = `http://127.0.0.1:${port}/mcp`;
    await expect(
      openSession({
        name: "mute",
        protocol: "legacy",
        makeTransport: () => createTransport(entry({ url })),
        timeoutMs: 200,
      }),
    ).rejects.toThrow(/Request timed out/);
    await vi.waitFor(() => expect(state.open).toBe(0), { timeout: 2000, interval: 10 });
    expect(posted.map((m) => m.method)).toEqual(["initialize"]);
  });
});
