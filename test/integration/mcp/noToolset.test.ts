import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { entry, STDIO_FIXTURE, useHubs } from "./harness.js";

const ctx = useHubs();

const EMPTY_SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/empty-server.mjs"),
);

/** Rule 5: no tool left, no toolset. The log line says why there is none, as `svc mcp test` does. */
describe("a server that registers no tool", () => {
  it("is logged with the true reason: no tools capability, a server that lists none, or filters that left none", async () => {
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      {
        // No tools capability: svc never sends it tools/list (so "lists no tools" would not be true).
        empty: entry({ command: process.execPath, args: [EMPTY_SERVER] }),
        listsNone: entry({ command: process.execPath, args: [EMPTY_SERVER, "--tools-capability"] }),
        fx: entry({
          command: process.execPath,
          args: [STDIO_FIXTURE, "legacy", "--no-resources", "--no-prompts"],
          tools: { include: "nothing*" },
        }),
      },
      { logger: log.logger },
    );
    await Promise.all([h.settled("empty"), h.settled("listsNone"), h.settled("fx")]);
    const lines = log.messages().filter((m) => m.includes("no toolset registered"));
    expect(lines.sort()).toEqual([
      "[mcp] empty: no toolset registered — the server declares no tools capability in its initialize answer, so svc does not ask it for tools",
      expect.stringMatching(
        /^\[mcp\] fx: no toolset registered — tools\.include\/exclude left none of its \d+ tools$/,
      ),
      "[mcp] listsNone: no toolset registered — the server lists no tools",
    ]);
  });
});
