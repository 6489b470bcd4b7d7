import { describe, expect, it } from "vitest";
import { detail } from "../../../src/cli/mcp/statusDetail.js";
import type { ServerStatus } from "../../../src/io/mcp/statusFile.js";

const status = (extra: Partial<ServerStatus>): ServerStatus => ({
  name: "e",
  transport: "stdio",
  state: "connected",
  toolCount: 0,
  lazy: false,
  cached: true,
  collisions: [],
  ...extra,
});

const NO_MATCH =
  'mcp_servers.e.tools.include: "get_x" matches no tool of this server — filters use the server\'s own names: did you mean "get-x"?';

describe("svc mcp list DETAIL with a gateway running", () => {
  it("names a listing's warning (a tools.include entry matching nothing, which left the server no tool)", () => {
    expect(detail(status({ warnings: [NO_MATCH] }))).toBe(`warning: ${NO_MATCH}`);
    expect(detail(status({ warnings: [NO_MATCH, "another"] }))).toBe(
      `2 warnings: ${NO_MATCH}; … (svc mcp tools e lists them)`,
    );
  });

  it("an error, a disabled server and collisions come first; nothing to say is empty", () => {
    expect(detail(status({ lastError: "boom", warnings: [NO_MATCH] }))).toBe("mcp_servers.e: boom");
    expect(detail(status({ state: "skipped" }))).toBe("enabled: false");
    expect(detail(status({ collisions: ["c1"], warnings: [NO_MATCH] }))).toBe("collision: c1");
    expect(detail(status({ warnings: [] }))).toBe("");
    expect(detail(status({}))).toBe("");
  });

  it("names the server in a reconnecting server's error as in a failed one's (and as the gateway log does)", () => {
    const closed = "the connection closed: the server process exited (code 1)";
    expect(detail(status({ state: "reconnecting", lastError: closed }))).toBe(`mcp_servers.e: ${closed}`);
    const failed = "mcp_servers.e: command not found: x — check command (and PATH)";
    expect(detail(status({ state: "failed", lastError: failed }))).toBe(failed);
    expect(detail(status({ state: "failed", lastError: "e: the login expired" }))).toBe(
      "mcp_servers.e: the login expired",
    );
  });
});
