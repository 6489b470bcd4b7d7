import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

describe("svc mcp short and alternative command names (ls, status, uninstall)", { timeout: 60_000 }, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          "notes-keeper": { command: "node", args: ["notes.mjs"], enabled: false },
          "issue-tracker": { command: "node", args: ["issues.mjs"], enabled: false },
        },
      }),
    );
  });
  afterAll(() => home.cleanup());
  const servers = (): string[] =>
    Object.keys(parse(readFileSync(join(home.dir, "config.yaml"), "utf8")).mcp_servers ?? {});

  it("ls lists as list does (as svc webhook ls and svc cron ls)", async () => {
    const listed = await svc(home, ["mcp", "ls", "--no-check"]);
    expect(listed.stderr).not.toMatch(/unknown command|Did you mean/);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/notes-keeper\s+stdio\s+skipped/);
  });

  it("status lists as list does, the servers' live state (not 'Did you mean ...?')", async () => {
    // What an operator asks for MCP servers' health; commander's nearest command to it was none.
    const status = await svc(home, ["mcp", "status", "--no-check"]);
    expect(status.stderr).not.toMatch(/unknown command|Did you mean/);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/notes-keeper\s+stdio\s+skipped/);
  });

  it("uninstall removes the server (not 'Did you mean install?')", async () => {
    const removed = await svc(home, ["mcp", "uninstall", "notes-keeper"]);
    expect(removed.stderr).not.toMatch(/unknown command|Did you mean/);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("Removed mcp_servers.notes-keeper");
    expect(servers()).toEqual(["issue-tracker"]);
  });
});
