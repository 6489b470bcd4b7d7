import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();
const hub = ctx.hub;

describe("lazy servers and the schema cache (spec 2.1 lazy, 3)", () => {
  it("caches schemas on connect; lazy: true registers from the cache and spawns only on the first call", async () => {
    const lazyEntry = stdioEntry("legacy", { lazy: true });
    const first = hub(ctx.home, { fx: lazyEntry });
    // No cache yet: a lazy server connects eagerly.
    expect((await first.settled("fx")).state).toBe("connected");
    const liveCount = first.toolsOf("fx").length;
    await first.stop();
    expect(readdirSync(join(ctx.home.dir, "mcp-cache")).filter((f) => f !== "status.json")).toHaveLength(1);

    const second = hub(ctx.home, { fx: lazyEntry });
    const status = second.status()[0];
    expect(status).toMatchObject({ state: "lazy", lazy: true, cached: true });
    expect(status?.toolCount).toBe(liveCount);
    expect(second.tools().map((t) => t.name)).toContain("mcp__fx__echo");
    expect(text(await second.call("fx", "echo", { text: "woke" }))).toBe("woke");
    expect(second.status()[0]?.state).toBe("connected");
  });

  it("a live connect made before lazy: true was set is the earlier connect a lazy start needs", async () => {
    const eager = hub(ctx.home, { fx: stdioEntry("legacy") });
    expect((await eager.settled("fx")).state).toBe("connected");
    await eager.stop();
    const lazy = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) });
    expect(lazy.status()[0]).toMatchObject({ state: "lazy", cached: true });
    expect(lazy.tools().map((t) => t.name)).toContain("mcp__fx__echo");
  });

  it("a changed entry makes the cache stale: eager connect", async () => {
    const a = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true }) });
    await a.settled("fx");
    await a.stop();
    const b = hub(ctx.home, { fx: stdioEntry("legacy", { lazy: true, timeout: 12 }) });
    expect(b.status()[0]?.state).toBe("connecting");
    expect((await b.settled("fx")).state).toBe("connected");
  });
});

describe("recycling a real stdio process (spec 3)", () => {
  it("idle_timeout_seconds recycles the process and the next call respawns it", async () => {
    const h = hub(ctx.home, { fx: stdioEntry("legacy", { idle_timeout_seconds: 0.4 }) });
    const firstPid = text(await h.call("fx", "pid", {}));
    await vi.waitFor(
      () => {
        expect(h.status()[0]?.state).toBe("recycled");
        expect(() => process.kill(Number(firstPid), 0)).toThrow();
      },
      { timeout: 5000, interval: 50 },
    );
    const secondPid = text(await h.call("fx", "pid", {}));
    expect(secondPid).not.toBe(firstPid);
  });

  it("a call made while an idle process is still exiting waits for it and runs on a new process", async () => {
    const h = hub(ctx.home, {
      fx: stdioEntry("legacy", { idle_timeout_seconds: 0.3 }, ["--linger-ms", "800"]),
    });
    const firstPid = text(await h.call("fx", "pid", {}));
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("recycled"), { timeout: 5000, interval: 10 });
    // The old process has not exited yet (it lingers 800 ms after its stdin closes).
    expect(() => process.kill(Number(firstPid), 0)).not.toThrow();
    const secondPid = text(await h.call("fx", "pid", {}));
    expect(secondPid).not.toBe(firstPid);
    expect(h.status()[0]?.state).toBe("connected");
  });
});

describe("protocol eras (spec 9)", () => {
  it("auto: falls back to server/discover when the server rejects initialize as modern-only", async () => {
    const h = hub(ctx.home, { m: stdioEntry("modern-only") });
    expect(await h.settled("m")).toMatchObject({ state: "connected", era: "stateless" });
    expect(text(await h.call("m", "echo", { text: "stateless" }))).toBe("stateless");
  });

  it("auto: a legacy server stays legacy", async () => {
    const h = hub(ctx.home, { l: stdioEntry("legacy") });
    expect(await h.settled("l")).toMatchObject({ state: "connected", era: "legacy" });
  });

  it("stateless: probes server/discover first (a server without initialize at all)", async () => {
    const h = hub(ctx.home, { d: stdioEntry("discover-only", { protocol: "stateless" }) });
    expect(await h.settled("d")).toMatchObject({ state: "connected", era: "stateless" });
    expect(text(await h.call("d", "add", { a: 20, b: 22 }))).toBe("42");
  });

  it("stateless: one legacy retry when the probe fails", async () => {
    const h = hub(ctx.home, { l: stdioEntry("legacy", { protocol: "stateless" }) });
    expect(await h.settled("l")).toMatchObject({ state: "connected", era: "legacy" });
  });

  it("legacy: handshake only, no fallback", async () => {
    const h = hub(ctx.home, { m: stdioEntry("modern-only", { protocol: "legacy" }) });
    const status = await h.settled("m");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(/-32022/);
  });
});

describe("server-initiated requests (spec 6)", () => {
  it("sampling: disabled by default (not advertised); enabled → answered by the runner, max_tokens clamped", async () => {
    const seen: Array<{ prompt: string; maxTokens: number; model?: string }> = [];
    const runner = async (r: { prompt: string; maxTokens: number; model?: string }) => {
      seen.push(r);
      return `reply to ${r.prompt}`;
    };
    const h = hub(
      ctx.home,
      {
        off: stdioEntry(),
        on: stdioEntry("legacy", { sampling: { enabled: true, max_tokens: 50, model: "m1" } }),
      },
      { runner },
    );
    const off = await h.call("off", "sample", { prompt: "hi" });
    expect(off.isError).toBe(true);
    expect(text(await h.call("on", "sample", { prompt: "hi" }))).toBe("m1:reply to user: hi");
    expect(seen).toEqual([expect.objectContaining({ prompt: "user: hi", maxTokens: 50, model: "m1" })]);
  });

  it("sampling: requests over max_requests_per_minute are refused", async () => {
    let now = 1_000_000;
    const h = hub(
      ctx.home,
      { s: stdioEntry("legacy", { sampling: { enabled: true, max_requests_per_minute: 1 } }) },
      {
        runner: async () => "ok",
        now: () => now,
      },
    );
    expect(text(await h.call("s", "sample", { prompt: "1" }))).toBe("svc-agent:ok");
    expect(text(await h.call("s", "sample", { prompt: "2" }))).toMatch(/sampling failed: .*rate limit/);
    now += 60_001;
    expect(text(await h.call("s", "sample", { prompt: "3" }))).toBe("svc-agent:ok");
  });

  it("form elicitation goes to the approval surface (terminal prompt); URL mode is declined", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    const asked: string[] = [];
    output.on("data", (chunk: Buffer) => {
      const line = chunk.toString();
      asked.push(line);
      if (line.startsWith("  color")) input.write("red\n");
      if (line.includes("Send these answers")) input.write("y\n");
    });
    const h = hub(ctx.home, { e: stdioEntry() }, { approvals: terminalApprovals({ input, output }) });
    expect(JSON.parse(text(await h.call("e", "ask", {})))).toEqual({
      action: "accept",
      content: { color: "red" },
    });
    expect(asked.join("")).toContain("Pick a color");
    expect(JSON.parse(text(await h.call("e", "ask-url", {})))).toEqual({ action: "decline" });
  });

  it("the terminal surface answers no when stdin is not a terminal", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: false });
    const h = hub(
      ctx.home,
      { e: stdioEntry(), u: stdioEntry("legacy", { trust: "untrusted" }) },
      {
        approvals: terminalApprovals({ input, output: new PassThrough() }),
      },
    );
    expect(JSON.parse(text(await h.call("e", "ask", {})))).toEqual({ action: "decline" });
    await expect(h.call("u", "add", { a: 1, b: 1 })).rejects.toMatchObject({ code: "approval_denied" });
  });

  it("elicitation.timeout cancels an unanswered form; elicitation.enabled: false is not advertised", async () => {
    const h = hub(
      ctx.home,
      {
        slow: stdioEntry("legacy", { elicitation: { timeout: 0.2 } }),
        off: stdioEntry("legacy", { elicitation: { enabled: false } }),
      },
      {
        approvals: {
          approve: async () => false,
          elicit: (_r, signal) =>
            new Promise((resolve) =>
              signal.addEventListener("abort", () => resolve({ action: "accept", content: {} })),
            ),
        },
      },
    );
    const slow = text(await h.call("slow", "ask", {}));
    expect(JSON.parse(slow)).toEqual({ action: "cancel" });
    const off = await h.call("off", "ask", {});
    expect(off.isError).toBe(true);
    expect(text(off)).toMatch(/does not support.*elicitation/i);
  });
});

describe("tools/list_changed", () => {
  it("re-lists, re-registers and re-caches the server's tools", async () => {
    const h = hub(ctx.home, { fx: stdioEntry() });
    await h.settled("fx");
    expect(h.tools().map((t) => t.name)).not.toContain("mcp__fx__late_one");
    await h.call("fx", "add-tool", { name: "late.one" });
    await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__fx__late_one"), {
      timeout: 3000,
      interval: 20,
    });
    expect(text(await h.call("fx", "late.one", {}))).toBe("late late.one");
  });

  it("a burst of notifications (one per tool added) re-lists at most twice and ends with the full list", async () => {
    const h = hub(ctx.home, { fx: stdioEntry("legacy", {}, ["--count-lists"]) });
    await h.settled("fx");
    expect(text(await h.call("fx", "list-count", {}))).toBe("1");
    await h.call("fx", "add-tools", { count: 10 });
    await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__fx__burst10"), {
      timeout: 3000,
      interval: 20,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(h.tools().filter((t) => t.original.startsWith("burst"))).toHaveLength(10);
    expect(Number(text(await h.call("fx", "list-count", {})))).toBeLessThanOrEqual(3);
  });
});

describe("reload", () => {
  it("reconnects only servers whose entry changed", async () => {
    const same = stdioEntry();
    const h = hub(ctx.home, { keep: same, change: stdioEntry(), drop: stdioEntry() });
    await Promise.all(["keep", "change", "drop"].map((s) => h.settled(s)));
    const pidKeep = text(await h.call("keep", "pid", {}));
    const pidChange = text(await h.call("change", "pid", {}));
    const summary = await h.reload({
      keep: same,
      change: stdioEntry("legacy", { timeout: 99 }),
      add: stdioEntry(),
    });
    expect(summary).toEqual({ added: ["add"], removed: ["drop"], changed: ["change"], unchanged: ["keep"] });
    expect(text(await h.call("keep", "pid", {}))).toBe(pidKeep);
    expect(text(await h.call("change", "pid", {}))).not.toBe(pidChange);
    expect(h.status().map((s) => s.name)).toEqual(["keep", "change", "add"]);
    expect(existsSync(join(ctx.home.dir, "mcp-cache"))).toBe(true);
  });
});
