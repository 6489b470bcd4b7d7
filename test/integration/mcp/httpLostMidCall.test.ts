import { describe, expect, it } from "vitest";
import { startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** An elicitation nobody answers keeps the non-read-only "ask" tool in flight until the connection drops. */
function pendingElicitation(): { asked: Promise<void>; approvals: Parameters<typeof ctx.hub>[2] } {
  let asked: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    asked = r;
  });
  return {
    asked: promise,
    approvals: {
      approvals: {
        approve: async () => false,
        elicit: () => {
          asked();
          return new Promise(() => undefined);
        },
      },
    },
  };
}

/**
 * Spec 2.1 trust rules when a Streamable HTTP server goes away under a call (process killed, proxy cut):
 * the answer can no longer come, so the call must not wait out its `timeout` (300 s by default).
 */
describe.each([
  ["an SSE response stream", false],
  ["a JSON response", true],
])("a Streamable HTTP server that drops the connection mid-call (%s)", (_, jsonResponse) => {
  it("a tool without readOnlyHint fails at once with outcome_uncertain", async () => {
    const s = await startStreamableHttp({ jsonResponse });
    const port = Number(new URL(s.url).port);
    const { asked, approvals } = pendingElicitation();
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url, timeout: 20 }) }, approvals);
    await h.settled("web");
    const call = h.call("web", "ask", {});
    await asked;
    await s.close();
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message:
        'mcp_servers.web: the connection was lost while "ask" was being called; it may or may not have run — verify its effect before calling it again',
    });
    const back = await startStreamableHttp({ port, jsonResponse });
    try {
      expect(text(await h.call("web", "add", { a: 1, b: 2 }))).toBe("3");
    } finally {
      await h.stop();
      await back.close();
    }
  });

  it("a readOnlyHint tool is replayed once the server is back", async () => {
    const s = await startStreamableHttp({ jsonResponse });
    const port = Number(new URL(s.url).port);
    const h = ctx.hub(ctx.home, { web: entry({ url: s.url, timeout: 20 }) });
    await h.settled("web");
    const call = h.call("web", "slow", { ms: 400 });
    await new Promise((r) => setTimeout(r, 150));
    await s.close();
    const back = await startStreamableHttp({ port, jsonResponse });
    try {
      expect(text(await call)).toBe("slept 400");
    } finally {
      await h.stop();
      await back.close();
    }
  });
});

describe("parallel calls when one of them finds the session expired", () => {
  it("the other call in flight on the closed session fails with outcome_uncertain, not a bare 'Connection closed'", async () => {
    const s = await startStreamableHttp();
    const { asked, approvals } = pendingElicitation();
    const h = ctx.hub(
      ctx.home,
      { web: entry({ url: s.url, supports_parallel_tool_calls: true }) },
      approvals,
    );
    await h.settled("web");
    const pending = h.call("web", "ask", {}).catch((err: unknown) => err);
    await asked;
    s.expireSessions();
    // The 404 of this call ends the session (reconnect at once); "ask" was in flight on it.
    expect(text(await h.call("web", "echo", { text: "replayed" }))).toBe("replayed");
    expect(await pending).toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.web: the connection was lost while "ask" was being called/,
      ),
    });
    await h.stop();
    await s.close();
  });
});
