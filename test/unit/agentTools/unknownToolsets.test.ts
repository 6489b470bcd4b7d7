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
});
