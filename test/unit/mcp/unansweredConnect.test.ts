import { describe, expect, it } from "vitest";
import { noAnswer } from "../../../src/actors/mcp/unansweredConnect.js";

/**
 * What a connect timeout adds when the server answered nothing svc could read (docs/mcp.md, A process that
 * exits, or never answers the handshake): the request left unanswered, what to check, the wait to raise.
 */
describe("noAnswer", () => {
  const timedOut = "connect timed out after 60 s (connect_timeout)";

  it("names server/discover for a stateless server, initialize otherwise", () => {
    expect(noAnswer({ command: "srv", protocol: "stateless" }, timedOut, true)).toMatch(
      /^the server did not answer the handshake \(server\/discover, MCP's first request\): check that command and args/,
    );
    expect(noAnswer({ command: "srv", protocol: "auto" }, timedOut, true)).toMatch(/\(initialize, /);
  });

  it("before the handshake, names the preflight's probe: GET alone for an SSE stream", () => {
    expect(noAnswer({ transport: "sse", protocol: "auto" }, timedOut, false)).toBe(
      "the server did not answer the GET of its url that svc sends before the handshake: check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http) — or, for a server slow to start, raise connect_timeout",
    );
    expect(noAnswer({ protocol: "auto" }, timedOut, false)).toMatch(
      /^the server did not answer the HEAD or GET of its url .* raise connect_timeout$/,
    );
  });

  it("names --timeout when svc mcp list's check gave up", () => {
    expect(noAnswer({ command: "srv", protocol: "auto" }, "no answer within 10 s (--timeout)", true)).toMatch(
      /raise --timeout$/,
    );
  });
});
