import { describe, expect, it } from "vitest";
import { noAnswer } from "../../../src/actors/mcp/unansweredConnect.js";

/**
 * What a connect timeout adds when the server answered nothing svc could read (docs/mcp.md, A process that
 * exits, or never answers the handshake): the request left unanswered, what to check, the wait to raise.
 */
describe("noAnswer", () => {
  const timedOut = "connect timed out after 60 s (connect_timeout)";
  const sent = { handshakeSent: true, streamOpened: true };
  const preflight = { handshakeSent: false, streamOpened: false };

  it("names server/discover for a stateless server, initialize otherwise", () => {
    expect(noAnswer({ command: "srv", protocol: "stateless" }, timedOut, sent)).toMatch(
      /^the server did not answer the handshake \(server\/discover, MCP's first request\): check that command and args/,
    );
    expect(noAnswer({ command: "srv", protocol: "auto" }, timedOut, sent)).toMatch(/\(initialize, /);
  });

  it("before the handshake, names the preflight's probe: GET alone for an SSE stream", () => {
    expect(noAnswer({ transport: "sse", protocol: "auto" }, timedOut, preflight)).toBe(
      "the server did not answer the GET of its url that svc sends before the handshake: check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http) — or, for a server slow to start, raise connect_timeout",
    );
    expect(noAnswer({ protocol: "auto" }, timedOut, preflight)).toMatch(
      /^the server did not answer the HEAD or GET of its url .* raise connect_timeout$/,
    );
  });

  it("for an SSE server whose event stream never opened, names its GET: the handshake was never sent", () => {
    expect(
      noAnswer({ transport: "sse", protocol: "auto" }, timedOut, {
        handshakeSent: true,
        streamOpened: false,
      }),
    ).toBe(
      "the event stream did not open: the server did not answer the GET of its url that opens it (so the handshake, initialize, was never sent): check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http) — or, for a server slow to start, raise connect_timeout",
    );
    // Streamable HTTP has no stream to open before the handshake.
    expect(noAnswer({ protocol: "auto" }, timedOut, { handshakeSent: true, streamOpened: false })).toMatch(
      /^the server did not answer the handshake \(initialize, /,
    );
  });

  it("names --timeout when svc mcp list's check gave up", () => {
    expect(noAnswer({ command: "srv", protocol: "auto" }, "no answer within 10 s (--timeout)", sent)).toMatch(
      /raise --timeout$/,
    );
  });

  it("a url server that took no connection, or no TLS handshake, is named so on either transport", () => {
    for (const transport of ["http", "sse"] as const) {
      expect(
        noAnswer({ transport, protocol: "auto" }, timedOut, {
          ...preflight,
          stall: { stage: "tls", address: "127.0.0.1:8443" },
        }),
      ).toBe(
        "the TLS handshake with 127.0.0.1:8443 did not complete (a server or proxy that takes the TCP connection and never answers TLS): check that the url's host and port serve HTTPS, and any proxy or firewall between svc and the server",
      );
      expect(
        noAnswer({ transport, protocol: "auto" }, timedOut, {
          ...sent,
          stall: { stage: "tcp", address: "10.0.0.9:443" },
        }),
      ).toBe(
        "the TCP connect to 10.0.0.9:443 did not complete (nothing answered it: a host that is down, or a firewall that drops the connection): check the url's host and port, and any firewall between svc and the server",
      );
    }
  });
  it("after the era sequence's fallback, names both requests and the last one's wait (docs/mcp.md, Protocol eras)", () => {
    const refused = { answer: "MCP error -32601: Method not found" };
    expect(
      noAnswer({ command: "srv", protocol: "auto" }, "no answer within 10 s (--timeout)", {
        ...sent,
        fellBack: [refused],
        waitedMs: 9_960,
      }),
    ).toBe(
      "initialize was refused (MCP error -32601: Method not found), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too (got no answer within 10 s) — check that this is an MCP server — or, for a server slow to answer, raise --timeout",
    );
    expect(
      noAnswer({ command: "srv", protocol: "stateless" }, timedOut, {
        ...sent,
        fellBack: [{ unansweredMs: 30_000 }],
        waitedMs: 29_950,
      }),
    ).toBe(
      "server/discover failed (got no answer within 30 s) and the legacy initialize retry failed (got no answer within 30 s): check that command and args start an MCP server that speaks stdio, JSON-RPC on its stdin and stdout — or, for a server slow to start, raise connect_timeout",
    );
    // Over SSE the retry is sent only on a stream of its own, which did not open.
    expect(
      noAnswer({ transport: "sse", protocol: "stateless" }, timedOut, {
        handshakeSent: true,
        streamOpened: false,
        fellBack: [{ unansweredMs: 500 }],
        waitedMs: 500,
      }),
    ).toMatch(
      /^server\/discover failed \(got no answer within 0\.5 s\) and the legacy initialize retry failed \(its event stream did not open: the server did not answer the GET of its url that opens it, so it was never sent\): check that url is the event stream/,
    );
  });
});
