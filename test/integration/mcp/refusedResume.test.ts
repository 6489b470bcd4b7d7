import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";
import { sdkSessions } from "./sdkSessions.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * An SDK Streamable HTTP server with an event store (each response stream primed with an event id) whose
 * tool "cut" ends its call's stream before answering, and in front of it a proxy-like rule: a `GET` that
 * resumes a stream (`Last-Event-ID`) is refused with `status`. `resumes` counts those GETs.
 */
async function refusingResumes(status = 405, location?: string) {
  const state = { resumes: 0 };
  const sdk = sdkSessions(
    {
      eventStore: new InMemoryEventStore(),
      retryInterval: 1,
    },
    async (created) => {
      const server = new McpServer({ name: "cutting", version: "1" });
      server.registerTool("cut", {}, async (extra) => {
        extra.closeSSEStream?.();
        await new Promise((r) => setTimeout(r, 50));
        return { content: [{ type: "text", text: "never read" }] };
      });
      server.registerTool("fine", { annotations: { readOnlyHint: true } }, () => ({
        content: [{ type: "text", text: "fine" }],
      }));
      await server.connect(created);
    },
  );
  const port = await serve(async (req, res) => {
    if (req.method === "GET" && typeof req.headers["last-event-id"] === "string") {
      state.resumes++;
      res
        .writeHead(status, status === 405 ? { allow: "POST" } : location === undefined ? {} : { location })
        .end();
      return;
    }
    await sdk.handle(req, res);
  });
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

/** A hub connected to the server at `url`, and what its call of "cut" ended with. */
async function cutCall(url: string) {
  const h = ctx.hub(ctx.home, { cut: entry({ url, timeout: 20 }) });
  expect((await h.settled("cut")).state).toBe("connected");
  const outcome = await h.call("cut", "cut", {}).then(
    () => "answered",
    (err: Error & { code?: string }) => `${err.code}: ${err.message}`,
  );
  return { h, outcome };
}

/** A call's failure when the resumption of its cut stream was refused with `why` (the HTTP answer). */
const refused = (why: string) =>
  `outcome_uncertain: mcp_servers.cut: the connection was lost while "cut" was being called (the server cut the call's response stream before answering and refused to resume it (HTTP ${why})); it may or may not have run — verify its effect before calling it again`;

describe("a call's cut response stream whose resumption the server refuses", () => {
  it("(405) fails the call at once, saying the stream was cut and could not be resumed, not at its timeout", async () => {
    const s = await refusingResumes();
    const { h, outcome } = await cutCall(s.url);
    expect(outcome).toBe(refused(`405 to the GET with Last-Event-ID`));
    expect(s.state.resumes).toBe(1);
    // The hub reconnects at once (as for any call whose answer was lost): the next call is answered.
    expect(text(await h.call("cut", "fine", {}))).toBe("fine");
  });

  // Any other refusal was retried once by the SDK, which then gave the whole session up (about 2.5 s later),
  // the call failing as a lost event stream without a word of the refusal.
  it.each([404, 500])(
    "(%i) fails the call at once too, naming the status, and the session goes on",
    async (status) => {
      const s = await refusingResumes(status);
      const { h, outcome } = await cutCall(s.url);
      expect(outcome).toBe(refused(`${status} to the GET with Last-Event-ID`));
      expect(s.state.resumes).toBe(1);
      expect(text(await h.call("cut", "fine", {}))).toBe("fine");
      expect(h.status().find((st) => st.name === "cut")?.state).toBe("connected");
    },
  );

  // The SDK follows a redirect only within the server's origin; one elsewhere it took as a failure to open
  // the stream and tried again, then gave the session up, the call failing without a word of the redirect.
  it("(a redirect to another origin) fails the call at once too, naming the redirect's target", async () => {
    let elsewhere = 0;
    const other = await serve((_req, res) => {
      elsewhere++;
      res.writeHead(404).end();
    });
    const s = await refusingResumes(307, `http://localhost:${other}/mcp?token=x`);
    const { outcome } = await cutCall(s.url);
    expect(outcome).toBe(
      refused(
        `307 to the GET with Last-Event-ID: a redirect to http://localhost:${other}/mcp, another origin, which is not followed`,
      ),
    );
    expect(s.state.resumes).toBe(1);
    expect(elsewhere).toBe(0);
  });

  // A server that forgot the session (restarted, or ended it) answers the resumption 404 for its id: the
  // reconnect's reason said "the connection dropped", which sent a reader after the network.
  it("(404 from a server that forgot the session) reconnects saying the session was forgotten, not that the connection dropped", async () => {
    const sdk = sdkSessions({ eventStore: new InMemoryEventStore(), retryInterval: 1 }, async (created) => {
      const server = new McpServer({ name: "forgetting", version: "1" });
      server.registerTool("cut", {}, async (extra) => {
        extra.closeSSEStream?.();
        sdk.sessions.clear();
        return { content: [{ type: "text", text: "never read" }] };
      });
      server.registerTool("fine", { annotations: { readOnlyHint: true } }, () => ({
        content: [{ type: "text", text: "fine" }],
      }));
      await server.connect(created);
    });
    const port = await serve(async (req, res) => {
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string" && !sdk.sessions.has(id)) {
        res.writeHead(404).end(
          JSON.stringify({
            jsonrpc: "2.0",
            error: { code: -32001, message: "Session not found" },
            id: null,
          }),
        );
        return;
      }
      await sdk.handle(req, res);
    });
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { cut: entry({ url: `http://127.0.0.1:${port}/mcp`, timeout: 20 }) },
      { logger: log.logger },
    );
    expect((await h.settled("cut")).state).toBe("connected");
    await expect(h.call("cut", "cut", {})).rejects.toMatchObject({ code: "outcome_uncertain" });
    expect(text(await h.call("cut", "fine", {}))).toBe("fine");
    const lost = log.messages().filter((m) => m.endsWith(" — reconnecting"));
    expect(lost).toEqual([
      "[mcp] mcp_servers.cut: the server no longer knows the session (HTTP 404 to the resumption of a call's cut response stream) — reconnecting",
    ]);
  });
});
