import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const link = (name: string) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from('{"url":"https://docs.test/mcp"}').toString("base64url")}`;

describe("svc mcp install: a name the configuration cannot hold (spec 4.1)", { timeout: 90_000 }, () => {
  it("__proto__ matches the name pattern but is refused (it was written, then never loaded); as a new name too", async () => {
    home = tempHome();
    const direct = await svc(home, ["mcp", "install", link("__proto__")], { input: "y\n" });
    expect(direct.code).toBe(1);
    expect(direct.stderr).toContain(
      'install link rejected: name "__proto__" cannot be used as a server name',
    );
    expect(existsSync(join(home.dir, "config.yaml"))).toBe(false);

    home.write("config.yaml", "mcp_servers:\n  docs:\n    url: https://mine.test/mcp\n");
    const renamed = await svc(home, ["mcp", "install", link("docs")], { input: "__proto__\ndocs2\ny\n" });
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toContain('Not a valid name: name "__proto__" cannot be used as a server name');
    expect(renamed.stdout).toContain("Installed mcp_servers.docs2.");
    const list = await svc(home, ["mcp", "list", "--no-check"]);
    expect(list.stdout).toMatch(/^docs2 /m);
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).not.toContain("__proto__");
  });

  it("a taken name answered with y (yes | svc mcp install) cancels instead of installing a server named y; endless invalid names stop", async () => {
    home = tempHome();
    const original = "mcp_servers:\n  docs:\n    url: https://mine.test/mcp\n";
    home.write("config.yaml", original);
    const yes = await svc(home, ["mcp", "install", link("docs")], { input: "y\n".repeat(50) });
    const invalid = await svc(home, ["mcp", "install", link("docs")], { input: "a b\n".repeat(50) });
    expect(yes.code).toBe(1);
    expect(yes.stdout).toContain('Cancelled; nothing was installed ("y" answers yes/no');
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain("Cancelled after three invalid names; nothing was installed.");
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
  });

  it("a name that starts with - (the pattern allows it) is installed with how to name it to commands: after --", async () => {
    home = tempHome();
    const res = await svc(home, ["mcp", "install", link("-lead")], { input: "y\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      "Installed mcp_servers.-lead.\nIts name starts with -: give it to commands after --, as in svc mcp test -- -lead\n",
    );
    const list = await svc(home, ["mcp", "list", "--no-check"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^-lead /m);
  });
});
