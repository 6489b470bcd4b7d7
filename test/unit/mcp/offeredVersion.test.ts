import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { offeredVersion, refusedVersionsHint } from "../../../src/io/mcp/offeredVersion.js";

const refusal = (supported: unknown) =>
  new McpError(-32602, "Unsupported protocol version", { supported, requested: "2025-11-25" });

describe("offeredVersion: the version to ask for after initialize was refused naming the supported ones", () => {
  it("is the newest of them svc speaks, whatever order the server lists them in", () => {
    expect(offeredVersion(refusal(["2024-11-05", "2025-06-18"]), "2025-11-25")).toBe("2025-06-18");
  });

  it("is none when the refusal lists the version asked for (it is about something else), none svc speaks, or no list", () => {
    expect(offeredVersion(refusal(["2025-11-25", "2025-06-18"]), "2025-11-25")).toBeUndefined();
    expect(offeredVersion(refusal(["2026-07-28"]), "2025-11-25")).toBeUndefined();
    expect(offeredVersion(refusal("2025-06-18"), "2025-11-25")).toBeUndefined();
    expect(
      offeredVersion(new McpError(-32602, "Unsupported protocol version"), "2025-11-25"),
    ).toBeUndefined();
    expect(offeredVersion(new Error("fetch failed"), "2025-11-25")).toBeUndefined();
  });

  it("reads the JSON-RPC body an HTTP error quotes", () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      error: { code: -32602, message: "Unsupported protocol version", data: { supported: ["2025-03-26"] } },
    });
    expect(
      offeredVersion(new Error(`Streamable HTTP error: Error POSTing to endpoint: ${body}`), "2025-11-25"),
    ).toBe("2025-03-26");
    expect(offeredVersion(new Error("Error POSTing to endpoint: {not json}"), "2025-11-25")).toBeUndefined();
  });
});

describe("refusedVersionsHint", () => {
  it("names the server's versions and svc's when none is shared; nothing otherwise", () => {
    expect(refusedVersionsHint(refusal(["1999-01-01"]))).toMatch(
      /^ — the server supports 1999-01-01, and svc speaks 2025-11-25, .* update svc$/,
    );
    expect(refusedVersionsHint(refusal(["2025-06-18"]))).toBe("");
    expect(refusedVersionsHint(refusal(["2026-07-28"]))).toBe("");
    expect(refusedVersionsHint(refusal([]))).toBe("");
  });
});
