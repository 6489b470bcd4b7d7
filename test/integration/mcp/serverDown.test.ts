import { describe, expect, it } from "vitest";
import { startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A remote server that stopped answering: the user sees why the call failed, not just "fetch failed", and
 * what to check, as a connect says it.
 */
describe("a call to a Streamable HTTP server that went away", () => {
  it("fails naming the network cause, the status leaves connected; after the server is back calls work again", async () => {
    const first = await startStreamableHttp();
    const port = Number(new URL(first.url).port);
    const h = ctx.hub(ctx.home, { web: entry({ url: first.url }) });
    expect((await h.settled("web")).state).toBe("connected");
    await first.close();
    await expect(h.call("web", "echo", { text: "x" })).rejects.toMatchObject({
      code: "mcp_call",
      message: expect.stringMatching(
        /^mcp_servers\.web: "echo" failed: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:(\d+) — nothing listens on port \1 of 127\.0\.0\.1: start the server, or check mcp_servers\.web\.url$/,
      ),
    });
    // The hub no longer reports the server as connected: it reconnects (and fails while it is down).
    const state = h.status()[0]?.state;
    expect(state === "reconnecting" || state === "failed" || state === "connecting").toBe(true);
    expect(h.status()[0]?.lastError).toMatch(/ECONNREFUSED/);
    const second = await startStreamableHttp({ port });
    try {
      expect(text(await h.call("web", "echo", { text: "back" }))).toBe("back");
    } finally {
      await h.stop();
      await second.close();
    }
  });
});
