import { describe, expect, it, vi } from "vitest";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { mcpAgentTool } from "../../../src/agent/mcpTools.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";
import { entry, ownHubs, STDIO_FIXTURE, stdioEntry } from "./harness.js";

/** The fixture started after `seconds` (a server slow to start), as an entry a reload changed. */
const slowToStart = (seconds: string, extra: Record<string, unknown> = {}) =>
  entry({
    command: "sh",
    args: ["-c", `sleep ${seconds}; exec "$0" "$@"`, process.execPath, STDIO_FIXTURE, "legacy"],
    ...extra,
  });

/**
 * A run's call to a tool of a server that a reload (`svc mcp reload`, SIGHUP) reconnects because its entry
 * changed: until the new connection has listed the tools, none of the server's is registered. The tool the
 * run was offered is still the server's: the call waits for the connect, as one to a recycled process does.
 */
// Its tests run at once, each with a hub of its own: each waits on its server's processes (a reconnect
// slow to start, a stop).
describe("an agent run's MCP call while a reload reconnects the server", () => {
  function reconnecting(h: McpHub) {
    return (
      h.status().find((s) => s.name === "fx")?.state === "connecting" &&
      !h.tools().some((t) => t.server === "fx")
    );
  }

  it.concurrent("waits for the new connection and runs there, rather than saying the server's tools changed", async ({
    onTestFinished,
  }) => {
    const h = ownHubs(onTestFinished).hub({ fx: stdioEntry() });
    await h.settled("fx");
    const echo = h.tools().find((t) => t.name === "mcp__fx__echo");
    if (echo === undefined) throw new Error("the fixture lists echo");
    const tool = mcpAgentTool(h, echo);
    const reload = h.reload({ fx: slowToStart("1", { timeout: 77 }) });
    await vi.waitFor(() => expect(reconnecting(h)).toBe(true), { timeout: 10_000, interval: 10 });
    const outcome = await tool.execute({ text: "after the reload" }, toolContext());
    expect(outcomeText(outcome)).toBe("after the reload");
    await reload;
  });

  it.concurrent("is given up, never sent, when the run ends while the server connects", async ({
    onTestFinished,
  }) => {
    const h = ownHubs(onTestFinished).hub({ fx: stdioEntry() });
    await h.settled("fx");
    const echo = h.tools().find((t) => t.name === "mcp__fx__echo");
    if (echo === undefined) throw new Error("the fixture lists echo");
    const run = new AbortController();
    const reload = h.reload({ fx: slowToStart("5", { timeout: 77 }) });
    await vi.waitFor(() => expect(reconnecting(h)).toBe(true), { timeout: 10_000, interval: 10 });
    const call = mcpAgentTool(h, echo).execute({ text: "x" }, toolContext({ signal: run.signal }));
    run.abort();
    expect(await call).toEqual({
      ok: false,
      error: 'mcp_servers.fx: "echo" was not called: the run ended while the server was connecting',
    });
    await h.stop();
    await reload.catch(() => undefined);
  });

  it.concurrent("says the server could not be connected again when the new connection fails", async ({
    onTestFinished,
  }) => {
    const h = ownHubs(onTestFinished).hub({ fx: stdioEntry() });
    await h.settled("fx");
    const echo = h.tools().find((t) => t.name === "mcp__fx__echo");
    if (echo === undefined) throw new Error("the fixture lists echo");
    const failing = entry({
      command: "sh",
      args: ["-c", "sleep 1; echo 'reconnect refused today' >&2; exit 3"],
      timeout: 77,
    });
    const reload = h.reload({ fx: failing });
    await vi.waitFor(() => expect(reconnecting(h)).toBe(true), { timeout: 10_000, interval: 10 });
    const outcome = await mcpAgentTool(h, echo).execute({ text: "x" }, toolContext());
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? "" : outcome.error).toMatch(
      /^mcp_servers\.fx: .*reconnect refused today.* — a reload during this run changed the server's entry and it could not be connected again; "echo" was not run$/,
    );
    await reload;
  });
});
