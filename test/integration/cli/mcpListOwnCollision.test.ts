import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

const NAMED = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"));

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp list --no-check: a server whose own tools register under one name (x-y and x_y)", {
  timeout: 60_000,
}, () => {
  it("shows the collision in DETAIL, as the gateway's status of the server (and of it lazy) does", async () => {
    home = tempHome();
    const server = { command: process.execPath, args: [NAMED, "x-y", "x_y", "z"] };
    home.write("config.yaml", stringify({ mcp_servers: { fx: server, lz: { ...server, lazy: true } } }));
    // The connects of the check write each server's schema cache.
    expect((await svc(home, ["mcp", "list"])).stdout).toMatch(/fx\s+stdio\s+ok \(2 tools\)/);
    const list = await svc(home, ["mcp", "list", "--no-check"]);
    expect(list.code).toBe(0);
    for (const name of ["fx", "lz"])
      expect(list.stdout).toMatch(
        new RegExp(
          `${name}\\s+stdio\\s+(stopped|lazy)\\s+2\\s+(no|yes)\\s+yes\\s+collision: ${name}: "x_y" and "x-y" both register as mcp__${name}__x_y; "x_y" is skipped\\n`,
        ),
      );
  });
});
