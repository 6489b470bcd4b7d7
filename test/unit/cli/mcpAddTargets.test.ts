import { describe, expect, it } from "vitest";
import { urlNotCommand } from "../../../src/cli/mcp/edit.js";

describe("svc mcp add: a target that is a URL svc cannot reach, not a command", () => {
  it("names a URL of another scheme and a host:port without http://", () => {
    expect(urlNotCommand("ws://mcp.example.com/mcp")).toBe(
      "ws://mcp.example.com/mcp is a ws:// URL, not a command: svc reaches remote MCP servers at http:// or https:// URLs (Streamable HTTP, or SSE with --transport sse)",
    );
    expect(urlNotCommand("WSS://x/mcp")).toContain("is a wss:// URL, not a command");
    expect(urlNotCommand("localhost:8080/mcp")).toBe(
      "localhost:8080/mcp is a host and port without http://, not a command — write http://localhost:8080/mcp (https:// for TLS)",
    );
    expect(urlNotCommand("127.0.0.1:3000")).toContain("write http://127.0.0.1:3000 (https:// for TLS)");
    // An IPv6 literal in brackets, as URLs write it: no program is named so either.
    expect(urlNotCommand("[::1]:8080/mcp")).toBe(
      "[::1]:8080/mcp is a host and port without http://, not a command — write http://[::1]:8080/mcp (https:// for TLS)",
    );
    expect(urlNotCommand("[fd00::5]:3000")).toContain("write http://[fd00::5]:3000 (https:// for TLS)");
  });

  it("quotes such a target without its password or credential query values", () => {
    const said = [
      urlNotCommand("ws://me:pw-6161@mcp.example.com/mcp"),
      urlNotCommand("wss://mcp.example.com/mcp?token=tk-6262"),
      urlNotCommand("localhost:8080/mcp?api_key=ak-6363"),
    ];
    expect(said[0]).toContain("ws://me:[redacted]@mcp.example.com/mcp is a ws:// URL, not a command");
    expect(said[1]).toContain("wss://mcp.example.com/mcp?token=[redacted] is a wss:// URL");
    expect(said[2]).toBe(
      "localhost:8080/mcp?api_key=[redacted] is a host and port without http://, not a command — write http://localhost:8080/mcp?api_key=[redacted] (https:// for TLS)",
    );
    for (const secret of ["pw-6161", "tk-6262", "ak-6363"]) expect(said.join("\n")).not.toContain(secret);
  });

  it("names a URL with user:password@ but no http:// (it would be written as a command and quoted in every error)", () => {
    const said = [
      urlNotCommand("me:pw-6464@localhost:8080/mcp"),
      urlNotCommand("me:pw-6565@mcp.example.com/mcp?token=tk-6666"),
    ];
    expect(said[0]).toBe(
      "me:[redacted]@localhost:8080/mcp is a URL without http://, not a command — write http://me:[redacted]@localhost:8080/mcp (https:// for TLS)",
    );
    expect(said[1]).toContain("me:[redacted]@mcp.example.com/mcp?token=[redacted] is a URL without http://");
    for (const secret of ["pw-6464", "pw-6565", "tk-6666"]) expect(said.join("\n")).not.toContain(secret);
  });

  it("leaves programs alone", () => {
    for (const program of [
      "npx",
      "node",
      "./server.js",
      "/usr/local/bin/mcp-server",
      "C:/tools/srv.exe",
      "uvx",
    ])
      expect(urlNotCommand(program)).toBeUndefined();
  });
});
