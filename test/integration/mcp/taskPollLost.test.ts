import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { describe, expect, it, vi } from "vitest";
import { openSession } from "../../../src/io/mcp/session.js";
import { createTransport } from "../../../src/io/mcp/transport.js";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";
import { droppingTaskServer } from "./taskSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * The task server of "job", done after 300 ms and polled every 20 ms (see `droppingTaskServer`); `expire`
 * forgets every session.
 */
function taskServer() {
  return droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 300 });
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

  it("is told by the failure's type and cause, not its text: a fetch that words it otherwise polls on too", async () => {
    const s = await taskServer();
    // fetch's failure as another runtime words it (a browser's "Failed to fetch"), its cause kept: the SDK's
    // task stream hands it on as "MCP error -32603: TypeError: Failed to fetch".
    const worded: FetchLike = (url, init) =>
      fetch(url, init).catch((err: Error) => {
        throw new TypeError("Failed to fetch", { cause: err.cause });
      });
    const session = await openSession({
      name: "jobs",
      protocol: "legacy",
      makeTransport: () => createTransport(entry({ url: s.url }), { fetch: worded }),
      timeoutMs: 5000,
    });
    try {
      s.state.drop = 2;
      expect(text(await session.callTool("job", {}, 10_000, { task: true }))).toBe("job done");
      expect(s.state.dropped).toBe(2);
      expect(s.state.created).toBe(1);
    } finally {
      await session.close();
    }
  });
});
