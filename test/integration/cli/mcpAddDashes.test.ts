import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp add without -- before a server command that has options", () => {
  it("refuses the server's option as before, saying that the command goes after -- (no argument quoted back)", async () => {
    home = tempHome();
    const res = await svc(home, [
      "mcp",
      "add",
      "files",
      "npx",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/srv/notes",
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      "error: unknown option '-y' — the server's command and its options go after --, so that svc does not read them as its own: svc mcp add files -- npx ...\n",
    );
    expect(res.stderr).not.toContain("server-filesystem");
    expect(existsSync(join(home.dir, "config.yaml"))).toBe(false);
  });

  it("leaves commander's did-you-mean of svc's own option, and an unknown option before the command, as they were", async () => {
    home = tempHome();
    const nearMiss = await svc(home, ["mcp", "add", "files", "npx", "--forse"]);
    expect(nearMiss.code).toBe(2);
    expect(nearMiss.stderr).toContain("error: unknown option '--forse'\n(Did you mean --force?)");
    expect(nearMiss.stderr).not.toContain("go after --");
    const before = await svc(home, ["mcp", "add", "files", "--verbose", "npx"]);
    expect(before.code).toBe(2);
    expect(before.stderr).toContain("error: unknown option '--verbose'\n");
    expect(before.stderr).not.toContain("go after --");
  });

  it("with --, the same line adds the server", async () => {
    home = tempHome();
    const res = await svc(home, [
      "mcp",
      "add",
      "files",
      "--",
      "npx",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/srv/notes",
    ]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Added mcp_servers.files");
  });
});
