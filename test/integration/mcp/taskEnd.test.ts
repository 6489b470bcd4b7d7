import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { openSession } from "../../../src/io/mcp/session.js";
import { TaskPollError } from "../../../src/io/mcp/taskPollError.js";
import { createTransport } from "../../../src/io/mcp/transport.js";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";
import { droppingTaskServer } from "./taskSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/** The task server of "job", which ends `end` after 100 ms, polled every 20 ms (see `droppingTaskServer`). */
function taskServer(end: "failed" | "cancelled") {
  return droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 100, end });
}

describe("a task that ends failed or cancelled", () => {
  it("failed: the call fails with the task's end, not as a poll that failed (outcome_uncertain)", async () => {
    const s = await taskServer("failed");
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    const err = await h.call("jobs", "job", {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message: string },
    );
    expect(err?.code).not.toBe("outcome_uncertain");
    expect(err?.message).toMatch(/Task \S+ failed/);
    expect(s.state.created).toBe(1);
  });

  it("cancelled after a poll lost its connection: svc's own polling ends with the task's end too", async () => {
    const s = await taskServer("cancelled");
    const h = ctx.hub(ctx.home, { jobs: entry({ url: s.url }) });
    expect((await h.settled("jobs")).state).toBe("connected");
    s.state.drop = 1;
    const err = await h.call("jobs", "job", {}).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message: string },
    );
    expect(s.state.dropped).toBe(1);
    expect(err?.code).not.toBe("outcome_uncertain");
    expect(err?.message).toMatch(/Task \S+ was cancelled/);
  });

  it.each(["failed", "cancelled"] as const)(
    "%s: told by the task's status, not the SDK's words for it",
    async (end) => {
      const s = await taskServer(end);
      const session = await openSession({
        name: "jobs",
        protocol: "legacy",
        makeTransport: () => createTransport(entry({ url: s.url })),
        timeoutMs: 5000,
      });
      // The SDK's task stream as another version may word a task's end ("Task <id> has failed").
      const tasks = session.client.experimental.tasks;
      const stream = tasks.callToolStream.bind(tasks);
      tasks.callToolStream = async function* (...args: Parameters<typeof stream>) {
        for await (const message of stream(...args))
          yield message.type === "error"
            ? { type: "error", error: new McpError(message.error.code, `task ended (${end})`) }
            : message;
      } as typeof tasks.callToolStream;
      try {
        const err = await session.callTool("job", {}, 10_000, { task: true }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(McpError);
        expect(err).not.toBeInstanceOf(TaskPollError);
      } finally {
        await session.close();
      }
    },
  );
});
