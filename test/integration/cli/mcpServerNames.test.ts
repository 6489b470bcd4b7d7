import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome();
  home.write("config.yaml", "mcp_servers:\n  docs:\n    url: https://docs.test/mcp\n");
});
afterAll(() => home.cleanup());

describe("svc mcp tools|test|call with a name that is not configured", { timeout: 90_000 }, () => {
  it("constructor, toString or hasOwnProperty are unknown servers (not Object.prototype members said to be disabled)", async () => {
    const results = await svcEach(home, [
      ["mcp", "tools", "constructor"],
      ["mcp", "test", "toString"],
      ["mcp", "call", "hasOwnProperty", "x"],
    ]);
    for (const [res, name] of results.map(
      (r, i) => [r, ["constructor", "toString", "hasOwnProperty"][i]] as const,
    )) {
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`no MCP server named "${name}" in `);
      expect(res.stderr).toContain("(known: docs)");
      expect(res.stderr).not.toContain("enabled");
    }
  });

  it("with no config.yaml at all, the refusal says there is none (an SVC_HOME set to another directory shows there)", async () => {
    const empty = tempHome();
    try {
      const results = await svcEach(empty, [
        ["mcp", "tools", "docs"],
        ["mcp", "call", "docs", "search"],
        ["mcp", "remove", "docs"],
      ]);
      for (const res of results) {
        expect(res.code).toBe(2);
        expect(res.stderr).toContain(
          `no MCP server named "docs": there is no ${empty.dir}/config.yaml (svc mcp add docs -- <command> creates it with the server)`,
        );
      }
    } finally {
      empty.cleanup();
    }
  });

  it("reload --wait takes a number of seconds", async () => {
    const res = await svc(home, ["mcp", "reload", "--wait", "soon"]);
    expect(res).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--wait: expected a number of seconds greater than 0, got "soon"'),
    });
  });
});
