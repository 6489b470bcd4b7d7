import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
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

  it("configuration order is the order config.yaml writes the servers in, also for a name that reads as a number", async () => {
    // `7_`'s tool t and `7`'s tool _t both register as mcp__7___t. A JavaScript object lists a key such as
    // "7" before every other, so `7` took the name though config.yaml lists it second.
    const named = await bundledFixture(
      join(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
    );
    writeFileSync(
      join(ctx.home.dir, "config.yaml"),
      `mcp_servers:\n  "7_": {command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(named)}, t]}\n  "7": {command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(named)}, _t]}\n`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const log = captureLogger();
    const h = ctx.hub(ctx.home, config.mcp_servers, { logger: log.logger });
    await Promise.all([h.settled("7_"), h.settled("7")]);
    expect(h.tools().filter((t) => t.name === "mcp__7___t")).toEqual([
      expect.objectContaining({ server: "7_", original: "t" }),
    ]);
    expect(log.messages().filter((m) => m.includes("tool name collision"))).toEqual([
      '[mcp] tool name collision: 7: "_t" registers as mcp__7___t, already taken by server 7_ (listed earlier in mcp_servers); skipped',
    ]);
    expect(h.status().map((s) => s.name)).toEqual(["7_", "7"]);
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
