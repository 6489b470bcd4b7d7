import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome();
});
afterAll(() => home.cleanup());

describe("usage errors exit 2 (docs/cli.md), help exits 0", { timeout: 90_000 }, () => {
  it("a missing command or subcommand prints the usage on stderr and exits 2", async () => {
    const results = await Promise.all([[], ["webhook"], ["mcp"], ["cron"]].map((args) => svc(home, args)));
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("Usage: svc");
    }
  });

  it("--help and help <command> print the usage on stdout and exit 0", async () => {
    const [top, group, helpCommand] = await Promise.all([
      svc(home, ["--help"]),
      svc(home, ["webhook", "--help"]),
      svc(home, ["help", "mcp"]),
    ]);
    for (const r of [top, group, helpCommand]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: svc");
    }
    expect(group.stdout).toMatch(/subscribe[\s\S]*list[\s\S]*remove[\s\S]*test/);
    expect(helpCommand.stdout).toMatch(/login[\s\S]*reauth[\s\S]*install/);
  });
});
