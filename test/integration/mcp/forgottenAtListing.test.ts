import { describe, expect, it } from "vitest";
import { changingListing } from "./changingListing.js";
import { entry, readRpcRequest, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

const FORGOTTEN =
  "the server no longer knows the session it opened at this connect's initialize: a server run as several instances behind a load balancer does this when a request reaches another instance than the one that opened the session — route each session to one instance (session affinity on the Mcp-Session-Id header)";
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const NO_SESSION_ID =
  "the server answered this connect's initialize without an Mcp-Session-Id header, then refused its first tools/list — if a proxy is in front of the server, it may drop that header: check that the proxy passes Mcp-Session-Id through (in answers and in requests)";

/**
 * A Streamable HTTP server that answers `initialize` with JSON and no Mcp-Session-Id, accepts notifications
 * (202), and refuses every other request with `status` and `body`: one without sessions that lacks
 * tools/list (404), or one whose session header a proxy dropped (the SDK's examples then answer 400).
 */
async function sessionlessServer(status: number, body: string): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const port = await serve(async (req, res) => {
    const rpc = await readRpcRequest(req, res);
    if (rpc === undefined) return;
    requests.push(rpc.method);
    if (rpc.method !== "initialize") {
      res.writeHead(status, { "content-type": "application/json" }).end(body);
      return;
    }
    const result = {
      protocolVersion: rpc.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "sessionless", version: "1" },
    };
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: rpc.id, result }));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, requests };
}

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

/**
 * A connect whose first tools/list is refused as a session's request is (404, or 400 naming the session)
 * after an initialize answered without an Mcp-Session-Id: no session was opened, so none was forgotten; the
 * error says that none was given, and where the header may have gone.
 */
describe("a connect whose first tools/list is refused after an initialize that gave no session", () => {
  it("a 404 is the transport's error, with the note that the server gave no Mcp-Session-Id", async () => {
    const s = await sessionlessServer(404, "Not Found");
    const h = ctx.hub(ctx.home, { plain: entry({ url: s.url }) });
    const { state, lastError } = await h.settled("plain");
    expect(state).toBe("failed");
    expect(s.requests).toEqual(["initialize", "tools/list"]);
    expect(lastError).toBe(
      `mcp_servers.plain: Streamable HTTP error: Error POSTing to endpoint: Not Found (HTTP 404) — ${NO_SESSION_ID}`,
    );
  });

  it("a 400 naming the session (a proxy dropped the header) says so too, not that a session was forgotten", async () => {
    const refusal = JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Bad Request: No valid session ID provided" },
      id: null,
    });
    const s = await sessionlessServer(400, refusal);
    const h = ctx.hub(ctx.home, { proxied: entry({ url: s.url }) });
    const lastError = (await h.settled("proxied")).lastError;
    expect(lastError).toBe(
      `mcp_servers.proxied: Streamable HTTP error: Error POSTing to endpoint: ${refusal} (HTTP 400) — ${NO_SESSION_ID}`,
    );
    expect(lastError).not.toContain("no longer knows the session");
  });
});
