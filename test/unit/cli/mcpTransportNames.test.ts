import { describe, expect, it } from "vitest";
import { importedServers } from "../../../src/cli/mcp/importFormats.js";
import { mcpServerSchema, transportKind } from "../../../src/config/sections/mcp.js";

/**
 * Cline, Cursor and other clients write Streamable HTTP as `"type": "streamableHttp"` (Roo Code
 * `streamable-http`, Claude Code and VS Code `http`): every spelling names svc's default transport.
 */
describe("streamableHttp, as other clients' configs write it", () => {
  it("config.yaml takes it as transport: or type:", () => {
    for (const key of ["transport", "type"]) {
      const entry = mcpServerSchema.parse({ url: "https://x.test/mcp", [key]: "streamableHttp" });
      expect(transportKind(entry)).toBe("http");
    }
  });

  it("svc mcp import carries it over as transport: http, without a note", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { cline: { type: "streamableHttp", url: "https://x.test/mcp" } } },
      "cline_mcp_settings.json",
    );
    expect(entries.cline).toEqual({ url: "https://x.test/mcp", transport: "http" });
    expect(notes).toEqual([]);
  });

  it("svc mcp import reads Cline's transportType as type (an SSE server stays SSE) and its timeout (seconds)", () => {
    const { entries, notes } = importedServers(
      {
        mcpServers: {
          old: { url: "http://localhost:6688/sse", transportType: "sse", timeout: 60 },
          neu: { url: "https://x.test/mcp", transportType: "streamable-http" },
        },
      },
      "cline_mcp_settings.json",
    );
    expect(entries.old).toEqual({ url: "http://localhost:6688/sse", timeout: 60, transport: "sse" });
    expect(entries.neu).toEqual({ url: "https://x.test/mcp", transport: "http" });
    expect(notes).toEqual([]);
  });

  it("svc mcp import reads Windsurf's serverUrl as url", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { ws: { serverUrl: "https://x.test/mcp", headers: { "X-Key": "k" } } } },
      "mcp_config.json",
    );
    expect(entries.ws).toEqual({ url: "https://x.test/mcp", headers: { "X-Key": "k" } });
    expect(notes).toEqual([]);
  });
});
