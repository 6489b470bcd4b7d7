import { describe, expect, it } from "vitest";
import { gatewayLevel, SERVER_LOG_MAX_CHARS, serverLogText } from "../../../src/actors/mcp/serverLog.js";

describe("a server's log message in the gateway log", () => {
  it("maps the eight MCP levels onto the gateway's four", () => {
    const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
    expect(levels.map(gatewayLevel)).toEqual([
      "debug",
      "info",
      "info",
      "warn",
      "error",
      "error",
      "error",
      "error",
    ]);
  });

  it("names the server's logger, writes non-string data as JSON and cuts a long message", () => {
    expect(serverLogText({ level: "info", logger: "db", data: "ready" })).toBe("db: ready");
    expect(serverLogText({ level: "info", data: { rows: 3 } })).toBe('{"rows":3}');
    // A hand-written server's message without `data`: said so, not the word "undefined".
    expect(serverLogText({ level: "info", logger: "db" } as Parameters<typeof serverLogText>[0])).toBe(
      "db: (no data)",
    );
    // Data nested deeper than JSON.stringify can go (JSON.parse read it): said so, not dropped.
    const deep = JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`);
    expect(serverLogText({ level: "info", logger: "db", data: deep })).toBe(
      "db: (data nested too deep to write out)",
    );
    const long = serverLogText({ level: "info", data: "x".repeat(5000) });
    expect(long).toHaveLength(SERVER_LOG_MAX_CHARS + 1);
    expect(long.endsWith("…")).toBe(true);
  });
});
