import { describe, expect, it } from "vitest";
import { shadowedToolsetWarnings } from "../../../src/gateway/routeWarnings.js";

describe("an MCP server named like a built-in toolset", () => {
  it("is named at start: its name picks it instead of the built-in, and the default set (routes without toolsets, cron jobs) names some", () => {
    const warnings = shadowedToolsetWarnings(["github", "terminal", "web_search"], "config.yaml");
    expect(warnings).toEqual([
      "[webhook] config.yaml: mcp_servers.terminal: the name is also a built-in toolset: in a route's toolsets it picks this server instead of the built-in terminal tool, and as a server name it leaves out every server the list does not name. Rename the server (e.g. terminal_mcp) to keep both",
      "[webhook] config.yaml: mcp_servers.web_search: the name is also a built-in toolset: in a route's toolsets it picks this server instead of the built-in web_search tool, and as a server name it leaves out every server the list does not name — the default set of routes without toolsets and of cron jobs names web_search too, so they get this server alone. Rename the server (e.g. web_search_mcp) to keep both",
    ]);
  });

  it("says nothing of other names (memory, browser: no built-in to lose)", () => {
    expect(shadowedToolsetWarnings(["github", "memory", "browser"], "config.yaml")).toEqual([]);
  });
});
