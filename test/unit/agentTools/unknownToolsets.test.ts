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

  it("a server's name as its tools' registered names write it (a_b for a-b) is pointed to the server, also when shorter than four characters", () => {
    expect(unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["a_b"] }], ["a-b", "notes"])).toEqual([
      `config.yaml: r.toolsets: unknown toolset "a_b" — did you mean a-b? (toolsets name a server as mcp_servers writes it; a_b is how its tools' registered names write it, mcp__a_b__<tool>); runs of the route drop it, so its runs are offered every enabled MCP server, as a route that names none is ${KNOWN}`,
    ]);
    expect(
      unknownToolsetWarnings(
        [{ at: "config.yaml: r", toolsets: ["web_fetch", "notes"] }],
        ["web.fetch", "notes"],
      ),
    ).toEqual([
      `config.yaml: r.toolsets: unknown toolset "web_fetch" — did you mean web.fetch? (toolsets name a server as mcp_servers writes it; web_fetch is how its tools' registered names write it, mcp__web_fetch__<tool>); runs of the route drop it ${KNOWN}`,
    ]);
  });

  it("a tool's registered name (mcp__<server>__<tool>) is pointed to its server and to tools.include", () => {
    expect(
      unknownToolsetWarnings([{ at: "config.yaml: r", toolsets: ["mcp__notes__add"] }], ["notes", "github"]),
    ).toEqual([
      `config.yaml: r.toolsets: unknown toolset "mcp__notes__add" — did you mean notes? (toolsets name MCP servers; to offer only this tool, list it in mcp_servers.notes.tools.include: [add]); runs of the route drop it, so its runs are offered every enabled MCP server, as a route that names none is ${KNOWN}`,
    ]);
    // The server's name as its tools' names write it (web.fetch: mcp__web_fetch__…); the longest server
    // prefix decides (mcp__a__b__x is a__b's x, not a's b__x).
    expect(
      unknownToolsetWarnings(
        [{ at: "config.yaml: r", toolsets: ["mcp__web_fetch__get", "mcp__a__b__x", "a"] }],
        ["a", "a__b", "web.fetch"],
      ),
    ).toEqual([
      `config.yaml: r.toolsets: unknown toolset "mcp__web_fetch__get" — did you mean web.fetch? (toolsets name MCP servers; to offer only this tool, list it in mcp_servers.web.fetch.tools.include: [get]); runs of the route drop it ${KNOWN}`,
      `config.yaml: r.toolsets: unknown toolset "mcp__a__b__x" — did you mean a__b? (toolsets name MCP servers; to offer only this tool, list it in mcp_servers.a__b.tools.include: [x]); runs of the route drop it ${KNOWN}`,
    ]);
  });
});
