import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { sdkSessions } from "./sdkSessions.js";

/**
 * The sessions of a Streamable HTTP server (the SDK's) whose tool "job" runs only as a task, polled every
 * `pollInterval` ms and done `doneAfterMs` after it was made (`end`: how it ends, `completed` unless told).
 * `resumable`: each response stream is primed with an event id (an event store), so a cut one is resumed;
 * `readOnly`: "job" is listed with `readOnlyHint: true`;
 * `state.hold`, when set, is run (once) before the next look-up of a task (as for `tasks/get`) goes on, and
 * `state.holdCreate` before the next task is made (the tools/call's answer waits for it). `handle` answers a request (a session id it
 * does not know: HTTP 404, as a server that ended the session does); `expire` forgets every session.
 */
export function taskSessions(options: {
  pollInterval: number;
  doneAfterMs: number;
  end?: "completed" | "failed" | "cancelled";
  resumable?: boolean;
  readOnly?: boolean;
}) {
  const state = {
    created: 0,
    /** The ids of the tasks made, in order. */
    made: [] as string[],
    expire: () => sdk.sessions.clear(),
    hold: undefined as (() => Promise<void>) | undefined,
    holdCreate: undefined as (() => Promise<void>) | undefined,
  };
  class HeldStore extends InMemoryTaskStore {
    override async createTask(...args: Parameters<InMemoryTaskStore["createTask"]>) {
      const hold = state.holdCreate;
      state.holdCreate = undefined;
      await hold?.();
      const task = await super.createTask(...args);
      state.made.push(task.taskId);
      return task;
    }

    override async getTask(...args: Parameters<InMemoryTaskStore["getTask"]>) {
      const hold = state.hold;
      state.hold = undefined;
      await hold?.();
      return super.getTask(...args);
    }
  }
  const resumable =
    options.resumable === true ? { eventStore: new InMemoryEventStore(), retryInterval: 1 } : {};
  const sdk = sdkSessions(resumable, async (transport) => {
    const server = new McpServer(
      { name: "tasks", version: "1" },
      {
        capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
        taskStore: new HeldStore(),
      },
    );
    server.experimental.tasks.registerToolTask(
      "job",
      {
        execution: { taskSupport: "required" },
        ...(options.readOnly === true ? { annotations: { readOnlyHint: true } } : {}),
      },
      {
        createTask: async (extra) => {
          state.created++;
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: options.pollInterval });
          const end = options.end ?? "completed";
          // A task cancelled meanwhile (tasks/cancel) takes no end of its own; a long one holds no test open.
          setTimeout(() => {
            void (
              end === "completed"
                ? extra.taskStore.storeTaskResult(task.taskId, end, {
                    content: [{ type: "text", text: "job done" }],
                  })
                : extra.taskStore.updateTaskStatus(task.taskId, end, `job ${end}`)
            ).catch(() => undefined);
          }, options.doneAfterMs).unref();
          return { task };
        },
        getTask: (extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: (extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
      },
    );
    await server.connect(transport);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse, parsed?: unknown): Promise<void> => {
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string" && !sdk.sessions.has(id)) {
      res
        .writeHead(404)
        .end(
          JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
        );
      return;
    }
    await sdk.handle(req, res, parsed);
  };
  return { state, handle, sessions: sdk.sessions };
}

/** What a task server was sent, in order: each message posted, and `{ delete: true }` for a session's DELETE. */
export interface Received {
  readonly method?: string;
  readonly id?: number;
  readonly params?: { readonly taskId?: string; readonly requestId?: number };
  readonly delete?: true;
}

/**
 * A Streamable HTTP server (`taskSessions` with `options`) served by `serve`, which counts the `tasks/get`
 * requests (`polls`) and cuts the connection of the next `drop` of them before any answer (the socket
 * destroyed: a proxy restarting, a network blip; `dropped` counts them). `received` holds what it was sent.
 */
export async function droppingTaskServer(
  serve: (handler: RequestListener) => Promise<number>,
  options: Parameters<typeof taskSessions>[0],
) {
  const tasks = taskSessions(options);
  const state = Object.assign(tasks.state, { polls: 0, dropped: 0, drop: 0 });
  const received: Received[] = [];
  const port = await serve(async (req, res) => {
    let parsed: unknown;
    if (req.method === "DELETE") received.push({ delete: true });
    if (req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      parsed = JSON.parse(body);
      received.push(...((Array.isArray(parsed) ? parsed : [parsed]) as Received[]));
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
    await tasks.handle(req, res, parsed);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state, received };
}
