import { describe, expect, it } from "vitest";
import { changingListing } from "./changingListing.js";
import { entry, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

const FORGOTTEN =
  "the server no longer knows the session it opened at this connect's initialize: a server run as several instances behind a load balancer does this when a request reaches another instance than the one that opened the session — route each session to one instance (session affinity on the Mcp-Session-Id header)";
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A Streamable HTTP server that forgets the session its initialize had just opened when the connect lists
 * its tools (404 "Session not found" to the first tools/list): the connect fails saying so, as a handshake
 * refused so does, not with the transport's raw error; a call that waited on that connect was never sent.
 */
describe("a connect whose first tools/list finds its session forgotten", () => {
  it("fails naming the forgotten session, and a call that waited on it says it was not run", async () => {
    const s = await changingListing(serve);
    s.forgetAtNextListing();
    const h = ctx.hub(ctx.home, { store: entry({ url: s.url }) });
    // Made while the first connect is under way: it waits on that connect.
    const call = h.call("store", "read_item", {});
    await expect(call).rejects.toMatchObject({
      code: "mcp_connect",
      message: expect.stringMatching(
        new RegExp(
          `^mcp_servers\\.store: Streamable HTTP error: .*Session not found.* — ${escaped(FORGOTTEN)}; "read_item" was not run$`,
        ),
      ),
    });
    expect(s.runs()).toBe(0);
    expect(s.requests).not.toContain("POST tools/call");
  });

  it("when it is the reconnect for a read-only call's replay, the replay's error names the forgotten session", async () => {
    const s = await changingListing(serve);
    const h = ctx.hub(ctx.home, { store: entry({ url: s.url }) });
    expect((await h.settled("store")).state).toBe("connected");
    s.forgetSessions();
    s.forgetAtNextListing();
    await expect(h.call("store", "read_item", {})).rejects.toMatchObject({
      code: "mcp_call",
      message: expect.stringMatching(
        new RegExp(
          `^mcp_servers\\.store: the session expired while "read_item" was being called, and reconnecting to replay it failed: Streamable HTTP error: .*Session not found.* — ${escaped(FORGOTTEN)}$`,
        ),
      ),
    });
    expect(s.runs()).toBe(0);
  });
});
