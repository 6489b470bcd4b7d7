import { describe, expect, it } from "vitest";
import { noOauthServersProblem, oauthTargetProblem } from "../../../src/cli/mcp/oauthTarget.js";
import { mcpServersSchema } from "../../../src/config/sections/mcp.js";
import { withWrittenOrder } from "../../../src/config/serverOrder.js";

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

  it("lists the known servers in the order config.yaml writes them, a name that reads as a number included", () => {
    const written = withWrittenOrder(
      mcpServersSchema.parse({ b: { url: "https://x.test/mcp" }, "7": { url: "https://x.test/mcp" } }),
      ["b", "7"],
    );
    expect(oauthTargetProblem(written, "x")).toBe("no MCP server by that name (known: b, 7)");
  });
});

describe("svc mcp reauth --all with nothing to re-authorize", () => {
  it("names the disabled auth: oauth servers instead of saying none is configured", () => {
    const onlyOff = mcpServersSchema.parse({
      off: { url: "https://x.test/mcp", auth: "oauth", enabled: false },
      plain: { url: "https://x.test/mcp" },
    });
    expect(noOauthServersProblem(onlyOff)).toBe(
      "no enabled mcp_servers entry has auth: oauth (disabled: off) — set enabled: true to re-authorize it",
    );
  });

  it("says how to turn OAuth on when no entry has auth: oauth", () => {
    const none = mcpServersSchema.parse({ plain: { url: "https://x.test/mcp" }, local: { command: "npx" } });
    expect(noOauthServersProblem(none)).toMatch(/^no mcp_servers entry has auth: oauth — add auth: oauth/);
    expect(noOauthServersProblem({})).toMatch(/^no mcp_servers entry has auth: oauth/);
  });
});
