import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, STDIO_FIXTURE, useHubs } from "./harness.js";

const ctx = useHubs();

const EMPTY_SERVER = resolve(import.meta.dirname, "../../fixtures/mcp/empty-server.mjs");

/** Rule 5: no tool left, no toolset. The log line says why there is none, as `svc mcp test` does. */
describe("a server that registers no tool", () => {
  it("is logged with the true reason: a server that lists none, or filters that left none", async () => {
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      {
        empty: entry({ command: process.execPath, args: [EMPTY_SERVER] }),
        fx: entry({
          command: process.execPath,
          args: [STDIO_FIXTURE, "legacy", "--no-resources", "--no-prompts"],
          tools: { include: "nothing*" },
        }),
      },
      { logger: log.logger },
    );
    await Promise.all([h.settled("empty"), h.settled("fx")]);
    const lines = log.messages().filter((m) => m.includes("no toolset registered"));
    expect(lines.sort()).toEqual([
      "[mcp] empty: no toolset registered — the server lists no tools",
      expect.stringMatching(
        /^\[mcp\] fx: no toolset registered — tools\.include\/exclude left none of its \d+ tools$/,
      ),
    ]);
  });
});
