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
});
