import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;
const servers = () => Object.keys(parse(readFileSync(join(home.dir, "config.yaml"), "utf8")).mcp_servers);
const NOTE =
  "Note: a_b registers its tools as mcp__a_b__<tool>, as a.b does: a tool name both list is registered for a.b only (listed first in mcp_servers), the other's is skipped — give one of them another name to keep both servers' tools";

describe("a server whose name registers its tools under another server's prefix (a.b and a_b: mcp__a_b__*)", {
  timeout: 90_000,
}, () => {
  it("svc mcp install says so before the question: the name is free, but the tools would lose every name both list", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  a.b:\n    url: https://ab.test/mcp\n");
    const res = await svc(home, ["mcp", "install", link("a_b", { url: "https://other.test/mcp" })], {
      input: "n\n",
    });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(NOTE);
    // Said before the question, so the answer can take it into account.
    expect(res.stdout.indexOf(NOTE)).toBeLessThan(res.stdout.indexOf("Cancelled; nothing was installed."));
    expect(servers()).toEqual(["a.b"]);
  });

  it("svc mcp add and import say so once written, and not for a name of its own prefix", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  a.b:\n    url: https://ab.test/mcp\n");
    const added = await svc(home, ["mcp", "add", "a_b", "https://other.test/mcp"]);
    expect(added.code).toBe(0);
    expect(added.stderr).toContain(NOTE);
    const apart = await svc(home, ["mcp", "add", "a-c", "https://c.test/mcp"]);
    expect(apart.code).toBe(0);
    expect(apart.stderr).not.toContain("registers its tools as");
    expect(servers()).toEqual(["a.b", "a_b", "a-c"]);
    home.write("claude.json", JSON.stringify({ mcpServers: { "a-b": { url: "https://third.test/mcp" } } }));
    const imported = await svc(home, ["mcp", "import", join(home.dir, "claude.json")]);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain(
      "Note: a-b registers its tools as mcp__a_b__<tool>, as a.b and a_b do: a tool name more than one of them list is registered for a.b only (listed first in mcp_servers)",
    );
  });
});
