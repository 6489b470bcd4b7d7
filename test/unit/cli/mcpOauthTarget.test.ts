import { describe, expect, it } from "vitest";
import { oauthTargetProblem } from "../../../src/cli/mcp/oauthTarget.js";
import { mcpServersSchema } from "../../../src/config/sections/mcp.js";

const servers = mcpServersSchema.parse({
  ok: { url: "https://x.test/mcp", auth: "oauth" },
  off: { url: "https://x.test/mcp", auth: "oauth", enabled: false },
  plain: { url: "https://x.test/mcp" },
  local: { command: "npx" },
});

/**
 * `svc mcp login|reauth <server>` said "no enabled server with auth: oauth by that name" for every
 * server it cannot log in to: one that exists but is disabled, one without auth: oauth, a typo. Each now
 * gets its own reason and what to change.
 */
describe("svc mcp login / reauth: why a server cannot be logged in to", () => {
  it("an enabled auth: oauth url server can", () => {
    expect(oauthTargetProblem(servers, "ok")).toBeUndefined();
  });

  it("names a disabled server, one without auth: oauth, a command server and an unknown name apart", () => {
    expect(oauthTargetProblem(servers, "off")).toBe(
      "is disabled (enabled: false) — set enabled: true to log in",
    );
    expect(oauthTargetProblem(servers, "plain")).toMatch(
      /^has no auth: oauth — add auth: oauth to the entry/,
    );
    expect(oauthTargetProblem(servers, "local")).toMatch(/^is a command \(stdio\) server/);
    expect(oauthTargetProblem(servers, "okk")).toBe(
      "no MCP server by that name (known: ok, off, plain, local)",
    );
    expect(oauthTargetProblem(servers, "constructor")).toMatch(/^no MCP server by that name/);
    expect(oauthTargetProblem({}, "x")).toBe("no MCP server by that name (mcp_servers is empty)");
  });
});
