import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { captureLogger } from "../../fakes/logCapture.js";
import { signalProcess } from "../../helpers/process.js";
import { pendingElicitation, stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

async function pidOf(h: ReturnType<typeof ctx.hub>, server: string): Promise<number> {
  return Number(text(await h.call(server, "pid", {})));
}

/**
 * Spec 2.1 trust rules: when the session is lost under a call, only `readOnlyHint: true` tools are
 * replayed; others return `outcome_uncertain` — the same when a stdio server process dies mid-call.
 */
describe("a stdio server that dies while a call is in flight", () => {
  it("a readOnlyHint tool is replayed on the respawned process, the log naming it JSON-quoted", async () => {
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { supports_parallel_tool_calls: true }) },
      { logger: log.logger },
    );
    const pid = await pidOf(h, "fx");
    const call = h.call("fx", "slow", { ms: 800 });
    await new Promise((r) => setTimeout(r, 200));
    signalProcess(pid, "SIGKILL");
    expect(text(await call)).toBe("slept 800");
    expect(await pidOf(h, "fx")).not.toBe(pid);
    // A server's tool name is quoted (a line break in it cannot forge log lines).
    expect(log.messages()).toContain('[mcp] fx: connection lost; replaying read-only "slow"');
  });

  it("any other tool fails with outcome_uncertain, saying how the process ended and telling the user to verify before calling again", async () => {
    // The "ask" tool (no readOnlyHint) waits on an elicitation that never gets an answer.
    const { asked: waiting, approvals } = pendingElicitation();
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { supports_parallel_tool_calls: true }) },
      { approvals },
    );
    const pid = await pidOf(h, "fx");
    const call = h.call("fx", "ask", {});
    await waiting;
    signalProcess(pid, "SIGKILL");
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.fx: the connection was lost while "ask" was being called \(the server process exited \(signal SIGKILL\) — its stderr: fixture legacy ready pid \d+\); it may or may not have run — verify its effect before calling it again$/,
      ),
    });
    expect(text(await h.call("fx", "echo", { text: "back" }))).toBe("back");
  });
});

describe("a stdio server that dies under a call that is not replayed", () => {
  it("is respawned at once, not after the backoff of a connection lost while idle", async () => {
    const { asked: waiting, approvals } = pendingElicitation();
    // A simulated clock that never moves: a respawn waiting out a backoff would never happen.
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { supports_parallel_tool_calls: true }) },
      { clock, approvals },
    );
    const pid = await pidOf(h, "fx");
    const call = h.call("fx", "ask", {});
    await waiting;
    signalProcess(pid, "SIGKILL");
    await expect(call).rejects.toMatchObject({ code: "outcome_uncertain" });
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("connected"), { timeout: 10_000 });
    expect(await pidOf(h, "fx")).not.toBe(pid);
  });
});

describe("a connection lost while idle", () => {
  it("is logged as a warning naming the server, how its process ended and its stderr, then reconnects", async () => {
    const log = captureLogger();
    const h = ctx.hub(ctx.home, { fx: stdioEntry() }, { logger: log.logger });
    const pid = await pidOf(h, "fx");
    signalProcess(pid, "SIGKILL");
    await vi.waitFor(
      () =>
        expect(log.messages()).toContain(
          `[mcp] mcp_servers.fx: the connection closed: the server process exited (signal SIGKILL) — its stderr: fixture legacy ready pid ${pid} — reconnecting`,
        ),
      { timeout: 10_000 },
    );
    await vi.waitFor(async () => expect(await pidOf(h, "fx")).not.toBe(pid), { timeout: 5000 });
  });
});

describe("a stdio server that exits right after the handshake", () => {
  it("fails the connect saying how it exited, at which step and what it wrote on stderr", async () => {
    const h = ctx.hub(ctx.home, { fx: stdioEntry("legacy", {}, ["--exit-on-list"]) });
    const status = await h.settled("fx");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(
      /^mcp_servers\.fx: the server process exited \(code 3\) while its tools were being listed — its stderr: fixture legacy ready pid \d+ \| fatal: database locked$/,
    );
  });

  it("after auto's server/discover probe, quotes the stderr of the probed process only, not of the one refused before", async () => {
    // The first process refuses initialize and is closed; the second answers server/discover, then exits.
    const h = ctx.hub(ctx.home, { fx: stdioEntry("modern-only", {}, ["--exit-on-list"]) });
    const status = await h.settled("fx");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(
      /^mcp_servers\.fx: the server process exited \(code 3\) while its tools were being listed — its stderr: fixture modern-only ready pid \d+ \| fatal: database locked$/,
    );
  });
});
