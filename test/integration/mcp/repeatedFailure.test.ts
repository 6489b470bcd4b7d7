import { mkdirSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, STDIO_FIXTURE, useHubs } from "./harness.js";

const ctx = useHubs();

/** pino's level names by number, as the gateway log writes them. */
const LEVELS: Record<number, string> = { 20: "debug", 30: "info", 40: "warn", 50: "error" };

function mcpLines(lines: string[]): Array<[string, string]> {
  return lines
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((l) => l.msg.startsWith("[mcp] ") && l.msg.includes("mcpwarnsrv"))
    .map((l) => [LEVELS[l.level] ?? String(l.level), l.msg]);
}

/**
 * A server whose command is not installed fails the same way at each backoff retry: the log says so at
 * WARN once per failure streak (later identical failures at DEBUG), and the connect that ends the streak
 * says how many failures there were. A failure after that starts a new streak, logged at WARN again.
 */
describe("a server that keeps failing the same way", () => {
  it("is warned about once per streak, then logged connected again with the count", async () => {
    const bin = join(ctx.home.dir, "bin");
    mkdirSync(bin);
    const command = join(bin, "mcpwarn-server");
    const log = captureLogger();
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      { mcpwarnsrv: entry({ command, args: [STDIO_FIXTURE, "legacy", "--crash-after-ms", "1000"] }) },
      { logger: log.logger, clock },
    );
    const notFound = `[mcp] mcp_servers.mcpwarnsrv: command not found: ${command} — check command (and PATH)`;
    const failures = () => mcpLines(log.lines()).filter(([, msg]) => msg === notFound).length;

    expect((await h.settled("mcpwarnsrv")).state).toBe("failed");
    for (let retry = 1; retry <= 3; retry++) {
      clock.increment(300_000);
      await vi.waitFor(() => expect(failures()).toBe(retry + 1), { timeout: 5000, interval: 10 });
    }
    expect(mcpLines(log.lines())).toEqual([
      ["warn", notFound],
      ["debug", notFound],
      ["debug", notFound],
      ["debug", notFound],
    ]);

    // The command installed: the next retry connects, and says the streak is over.
    symlinkSync(process.execPath, command);
    clock.increment(300_000);
    await vi.waitFor(() => expect(h.status()[0]?.state).not.toBe("failed"), { timeout: 5000, interval: 10 });
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("reconnecting"), {
      timeout: 5000,
      interval: 10,
    });
    unlinkSync(command);
    clock.increment(300_000);
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("failed"), { timeout: 5000, interval: 10 });

    const after = mcpLines(log.lines()).slice(4);
    expect(after).toEqual([
      ["info", "[mcp] mcpwarnsrv: connected again after 4 failures"],
      ["warn", expect.stringMatching(/^\[mcp\] mcp_servers\.mcpwarnsrv: .* — reconnecting$/)],
      ["warn", notFound],
    ]);
  });

  it("a reload that retries it (the unchanged entry) warns again when it fails the same way", async () => {
    const command = join(ctx.home.dir, "mcpwarn-missing");
    const log = captureLogger();
    const clock = new SimulatedClock();
    const servers = { mcpwarnsrv: entry({ command, args: [STDIO_FIXTURE, "legacy"] }) };
    const h = ctx.hub(ctx.home, servers, { logger: log.logger, clock });
    const notFound = `[mcp] mcp_servers.mcpwarnsrv: command not found: ${command} — check command (and PATH)`;
    const failures = () => mcpLines(log.lines()).filter(([, msg]) => msg === notFound).length;
    expect((await h.settled("mcpwarnsrv")).state).toBe("failed");
    clock.increment(300_000);
    await vi.waitFor(() => expect(failures()).toBe(2), { timeout: 5000, interval: 10 });

    await h.reload(servers);
    await vi.waitFor(() => expect(failures()).toBe(3), { timeout: 5000, interval: 10 });
    expect(mcpLines(log.lines())).toEqual([
      ["warn", notFound],
      ["debug", notFound],
      ["warn", notFound],
    ]);
  });
});
