import { describe, expect, it, vi } from "vitest";
import { mcpAgentTools } from "../../../src/agent/mcpTools.js";
import { toolContext } from "../../helpers/toolContext.js";
import { entry, ownHubs, pendingElicitation, stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** A server slow to exit once its stdin closes: stopping it (a reload of its changed entry) takes a while. */
const lingering = (extra: Record<string, unknown> = {}) =>
  stdioEntry("legacy", extra, ["--linger-ms", "1500"]);

function stateOf(h: ReturnType<typeof ctx.hub>, server: string): string | undefined {
  return h.status().find((s) => s.name === server)?.state;
}

/**
 * A reload (`svc mcp reload`, SIGHUP) while agent runs call the servers: a call that was not sent yet is
 * never lost to the reload, and one that cannot be sent says so.
 */
describe("calls while a reload replaces a server", () => {
  // The three tests below run at once, each with a hub and home of its own: each waits on its servers'
  // processes, which a reload stops (one lingers 1.5 s after its stdin closes).
  it.concurrent("run: an unchanged server's at once, a changed server's on its new connection", async ({
    onTestFinished,
  }) => {
    const h = ownHubs(onTestFinished).hub({ fx: lingering(), other: stdioEntry() });
    await h.settled("fx");
    await h.settled("other");
    const before = Number(text(await h.call("fx", "pid", {})));
    const reload = h.reload({ fx: lingering({ timeout: 77 }), other: stdioEntry() });
    await vi.waitFor(() => expect(stateOf(h, "fx")).toBe("stopped"), { timeout: 10_000 });
    const unchanged = h.call("other", "echo", { text: "unchanged server" });
    const changed = h.call("fx", "pid", {});
    expect(text(await unchanged)).toBe("unchanged server");
    expect(Number(text(await changed))).not.toBe(before);
    expect(await reload).toMatchObject({ changed: ["fx"], unchanged: ["other"] });
    expect(h.status().map((s) => s.name)).toEqual(["fx", "other"]);
  });

  it.concurrent("a call queued behind one the reload cuts off runs on the new connection", async ({
    onTestFinished,
  }) => {
    const { asked, approvals } = pendingElicitation();
    const h = ownHubs(onTestFinished).hub({ fx: stdioEntry() }, { approvals });
    await h.settled("fx");
    const running = h.call("fx", "ask", {});
    const queued = h.call("fx", "echo", { text: "queued call" });
    await asked;
    await h.reload({ fx: stdioEntry("legacy", { timeout: 77 }) });
    await expect(running).rejects.toThrow(/"ask" was cut off: the server was stopped or reloaded/);
    expect(text(await queued)).toBe("queued call");
  });

  it.concurrent("a call queued for a server the reload removes fails, never sent, saying so", async ({
    onTestFinished,
  }) => {
    const { asked, approvals } = pendingElicitation();
    const h = ownHubs(onTestFinished).hub({ fx: stdioEntry(), other: stdioEntry() }, { approvals });
    await h.settled("fx");
    const running = h.call("fx", "ask", {});
    const queued = h.call("fx", "write-note", { text: "x" });
    await asked;
    await h.reload({ other: stdioEntry() });
    await expect(running).rejects.toThrow(/cut off/);
    await expect(queued).rejects.toThrow(
      'mcp_servers.fx: "write-note" was not called: the server was stopped or removed from mcp_servers before the call\'s turn came',
    );
  });

  // A run's call of the server's echo, queued behind the server's earlier call (one at a time), when a reload
  // takes the server away: told as a call made after that reload is (docs/mcp.md).
  for (const [how, servers, said] of [
    [
      "disables",
      { fx: stdioEntry("legacy", { enabled: false }) },
      'mcp_servers.fx is disabled (a reload during this run set enabled: false); "echo" was not run',
    ],
    [
      "removes",
      { other: stdioEntry() },
      'mcp_servers.fx is no longer configured (a reload during this run removed it); "echo" was not run',
    ],
  ] as const) {
    it.concurrent(`a run's call queued for a server the reload ${how} is told so, never sent`, async ({
      onTestFinished,
    }) => {
      const { asked, approvals } = pendingElicitation();
      const h = ownHubs(onTestFinished).hub({ fx: stdioEntry(), other: stdioEntry() }, { approvals });
      await h.settled("fx");
      const tools = await mcpAgentTools(h, ["fx"], new AbortController().signal);
      const echo = tools.find((t) => t.name === "mcp__fx__echo");
      const running = h.call("fx", "ask", {});
      await asked;
      const queued = echo?.execute({ text: "x" }, toolContext({ route: "r", deliveryId: "d" }));
      await h.reload(servers);
      await expect(running).rejects.toThrow(/cut off/);
      expect(await queued).toEqual({ ok: false, error: said });
    });
  }

  it("a call waiting for a connect that a stop ends says it was not called, not the bare state", async () => {
    // A process that never answers the handshake (it waits for something, as a bridge waiting on a login).
    const silent = entry({ command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] });
    const h = ctx.hub(ctx.home, { fx: silent });
    const call = h.call("fx", "echo", { text: "x" });
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("connecting"), { timeout: 10_000 });
    const warn = vi.spyOn(console, "warn");
    await h.stop();
    await expect(call).rejects.toThrow(
      'mcp_servers.fx: "echo" was not called: the server was stopped or reloaded before the call was sent',
    );
    // The call's end is not sent to the runtime the stop ended (XState warns of an event to a stopped actor).
    expect(warn.mock.calls.flat().join("\n")).not.toContain("stopped actor");
    warn.mockRestore();
  });
});
