import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, STDIO_FIXTURE, stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A stdio server that never answers `initialize` once `hangs` exists (it ends once its stdin closes), and
 * until then the fixture server, or with `failFirst` one that exits at once (its connect fails).
 */
function hangsOnceTold(hangs: string, env: Record<string, string> = {}, failFirst = false) {
  const code = `if (require("fs").existsSync(${JSON.stringify(hangs)})) process.stdin.resume(); else ${failFirst ? "process.exit(3)" : `import(${JSON.stringify(STDIO_FIXTURE)})`}`;
  return entry({ command: process.execPath, args: ["-e", code, "_"], env });
}

/**
 * A stop that ended a connect a reload started (an added server's, a changed one's reconnect, a retry of a
 * failed one) left no trace in the log, after the reload's `[mcp] configuration reloaded` line: the servers
 * were never connected, and nothing said so.
 */
describe("a stop that ends the connects a reload started", () => {
  it("logs each and reports the servers, not those that connected or were left alone", async () => {
    const hangs = join(ctx.home.dir, "hangs");
    const log = captureLogger();
    // The simulated clock never advances: no backoff retry or connect timeout of its own comes meanwhile.
    const before = {
      changed: hangsOnceTold(hangs, { V: "1" }),
      failed: hangsOnceTold(hangs, {}, true),
      kept: stdioEntry(),
    };
    const h = ctx.hub(ctx.home, before, { logger: log.logger, clock: new SimulatedClock() });
    expect((await h.settled("changed")).state).toBe("connected");
    expect((await h.settled("failed")).state).toBe("failed");
    expect((await h.settled("kept")).state).toBe("connected");

    ctx.home.write("hangs", "");
    const summary = await h.reload({
      ...before,
      changed: hangsOnceTold(hangs, { V: "2" }),
      added: hangsOnceTold(hangs),
      connects: stdioEntry(),
    });
    expect(summary).toMatchObject({
      added: ["added", "connects"],
      changed: ["changed"],
      unchanged: ["failed", "kept"],
      retried: ["failed"],
    });
    expect((await h.settled("connects")).state).toBe("connected");
    expect(h.reloadConnectsEndedByStop()).toEqual([]);
    await h.stop();

    expect([...h.reloadConnectsEndedByStop()].sort()).toEqual(["added", "changed", "failed"]);
    const ended = log.messages().filter((msg) => msg.includes("ended by the gateway's stop"));
    expect(ended.sort()).toEqual([
      "[mcp] added: the reload's connect was ended by the gateway's stop before it connected — the next start connects it",
      "[mcp] changed: the reload's reconnect was ended by the gateway's stop before it connected — the next start connects it",
      "[mcp] failed: the reload's retry was ended by the gateway's stop before it connected — the next start connects it",
    ]);
  });
});

/**
 * svc mcp reload listed a lazy or enabled: false server a reload added as "not connected … — the gateway began
 * stopping before it connected" when the stop came during its wait: the stop makes every server stopped, and
 * the report named no connect for them. It says such a server was skipped (or lazy), as it was at the reload.
 */
describe("a reload that adds an enabled: false server beside one that never answers", () => {
  it("reports it skipped, and the stop ends only the connect under way", async () => {
    const hangs = join(ctx.home.dir, "hangs");
    ctx.home.write("hangs", "");
    const h = ctx.hub(ctx.home, { kept: stdioEntry() }, { clock: new SimulatedClock() });
    expect((await h.settled("kept")).state).toBe("connected");
    const summary = await h.reload({
      kept: stdioEntry(),
      S: hangsOnceTold(hangs),
      D: entry({ ...stdioEntry(), enabled: false }),
    });
    expect(summary.added).toEqual(["S", "D"]);
    const outcomes = { S: { state: "connecting" }, D: { state: "skipped" } };
    expect(h.reloadConnectOutcomes(summary.added)).toEqual(outcomes);
    await h.stop();
    // As they were at the reload, whatever the stop made of them.
    expect(h.reloadConnectOutcomes(summary.added)).toEqual(outcomes);
    expect(h.reloadConnectsEndedByStop()).toEqual(["S"]);
  });
});
