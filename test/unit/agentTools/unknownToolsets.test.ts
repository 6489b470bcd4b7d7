import { describe, expect, it } from "vitest";
import { unknownToolsetWarnings } from "../../../src/gateway/routeWarnings.js";

const KNOWN =
  "(known: svc-webhook, web_search, web_extract, vision_analyze, clarify, web, terminal, file, code_execution, browser, memory, mcp, no_mcp, or an mcp_servers name)";

describe("an unknown toolset name in a route's toolsets", () => {
  it("says that, dropped, it leaves a list naming no MCP server, whose runs are offered every enabled server", () => {
    expect(
      unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["githb"] }], ["github", "notes"]),
    ).toEqual([
      `config.yaml: r.toolsets: unknown toolset "githb" — did you mean github?; runs of the route drop it, so its runs are offered every enabled MCP server, as a route that names none is ${KNOWN}`,
    ]);
  });

  it("does not say so when the list still names a server (or no_mcp), or when there are no servers", () => {
    const plain = `config.yaml: r.toolsets: unknown toolset "web_serch" — did you mean web_search?; runs of the route drop it ${KNOWN}`;
    expect(
      unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["web_serch", "github"] }], ["github"]),
    ).toEqual([plain]);
    expect(
      unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["web_serch", "no_mcp"] }], ["github"]),
    ).toEqual([plain]);
    expect(unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["web_serch"] }], [])).toEqual([plain]);
  });
});
