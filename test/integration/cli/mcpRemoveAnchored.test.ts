import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * `svc mcp remove` of an entry whose anchor another entry uses rewrote the whole config.yaml in the yaml
 * library's layout (two-space indents, `[ y ]`, one space before every comment): only the entry removed and
 * the alias that takes the anchored copy change now.
 */

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp remove of an entry another entry aliases", { timeout: 60_000 }, () => {
  it("keeps the layout of the rest of the file: the first alias holds the copy, the second still points at it", async () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      [
        "# MCP servers of this host",
        "mcp_servers:",
        "    a: &base   # the shared runner",
        "        command: node",
        "        args:   [x]",
        "",
        "    b:     *base      # same as a",
        "    c:",
        "        <<:  *base",
        "        args: [y]     # its own",
        "",
        "agent:",
        "    provider: echo    # for tests",
        "",
      ].join("\n"),
    );
    const removed = await svc(home, ["mcp", "remove", "a"]);
    expect(removed.stderr).toBe("");
    expect(removed.code).toBe(0);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "# MCP servers of this host",
        "mcp_servers:",
        "    b:     &base      # same as a",
        "      command: node",
        "      args: [ x ]",
        "    c:",
        "        <<:  *base",
        "        args: [y]     # its own",
        "",
        "agent:",
        "    provider: echo    # for tests",
        "",
      ].join("\n"),
    );
  });
});
