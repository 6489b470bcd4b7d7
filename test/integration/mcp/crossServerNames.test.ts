import { describe, expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, STDIO_FIXTURE, stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

/** The stdio fixture, started only after `ms` (a server slow to start, such as one fetched by npx). */
function slowEntry(ms: number) {
  return entry({
    command: process.execPath,
    args: [
      "-e",
      `setTimeout(() => import(require("node:url").pathToFileURL(process.argv[1]).href), ${ms})`,
      STDIO_FIXTURE,
      "legacy",
    ],
    tools: { include: "echo" },
  });
}

/**
 * Servers `a.b` and `a_b` both register as `mcp__a_b__*` (spec 2.5). The server listed first in
 * mcp_servers keeps the name whatever the connect order, and the name never moves mid-run.
 */
describe("a tool name two servers register", () => {
  it("goes to the server listed first even when it connects last, and is never held by the other meanwhile", async () => {
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { "a.b": slowEntry(1500), a_b: stdioEntry("legacy", { tools: { include: "echo" } }) },
      { logger: log.logger },
    );
    expect((await h.settled("a_b")).state).toBe("connected");
    expect(h.tools().filter((t) => t.name === "mcp__a_b__echo")).toEqual([]);
    expect((await h.settled("a.b")).state).toBe("connected");
    expect(h.tools().filter((t) => t.name === "mcp__a_b__echo")).toEqual([
      expect.objectContaining({ server: "a.b" }),
    ]);
    const reports = log.messages().filter((m) => m.includes("tool name collision"));
    expect(reports).toEqual([
      '[mcp] tool name collision: a_b: "echo" registers as mcp__a_b__echo, already taken by server a.b (listed earlier in mcp_servers); skipped',
    ]);
    // The losing server's status counts the tool out and shows the collision.
    const status = Object.fromEntries(h.status().map((s) => [s.name, s]));
    expect(status["a.b"]).toMatchObject({ toolCount: 1, collisions: [] });
    expect(status.a_b).toMatchObject({
      toolCount: 0,
      collisions: [
        'a_b: "echo" registers as mcp__a_b__echo, already taken by server a.b (listed earlier in mcp_servers); skipped',
      ],
    });
  });

  it("a later server's tools register once the earlier one has failed its first connect", async () => {
    const h = ctx.hub(ctx.home, {
      "a.b": entry({ command: process.execPath, args: ["-e", "process.exit(3)"] }),
      a_b: stdioEntry("legacy", { tools: { include: "echo" } }),
    });
    await Promise.all([h.settled("a.b"), h.settled("a_b")]);
    expect(h.tools().filter((t) => t.name === "mcp__a_b__echo")).toEqual([
      expect.objectContaining({ server: "a_b" }),
    ]);
  });
});
