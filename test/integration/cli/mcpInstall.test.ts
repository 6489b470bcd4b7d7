import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;
const servers = () => parse(readFileSync(join(home.dir, "config.yaml"), "utf8"))?.mcp_servers;

describe("svc mcp install <link> (spec 4.1): confirmation answered on stdin", { timeout: 90_000 }, () => {
  it("installs after a piped yes, into a new config.yaml (0600) that keeps the webhook adapter of the embedded default on", async () => {
    home = tempHome();
    const res = await svc(
      home,
      ["mcp", "install", link("docs", { url: "https://docs.test/mcp", timeout: 30 })],
      {
        input: "y\n",
      },
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Install MCP server "docs"');
    expect(res.stdout).toContain("Installed mcp_servers.docs.");
    expect(servers()).toEqual({ docs: { url: "https://docs.test/mcp", timeout: 30 } });
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    // Without config.yaml the embedded default ran the webhook adapter; the new file must not turn it off.
    const list = await svc(home, ["webhook", "list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).not.toContain("not enabled");
  });

  it("a taken name is never overwritten: the next piped line renames, then yes installs", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  docs:\n    url: https://mine.test/mcp # keep\n");
    const res = await svc(home, ["mcp", "install", link("docs", { command: "npx", args: ["x"] })], {
      input: "docs2\nyes\n",
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('A server named "docs" already exists');
    expect(servers()).toEqual({
      docs: { url: "https://mine.test/mcp" },
      docs2: { command: "npx", args: ["x"] },
    });
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toContain("# keep");
  });

  it("no, or stdin closing before a yes, installs nothing and exits 1", async () => {
    home = tempHome();
    const original = "# mine\nmcp_servers:\n  docs:\n    url: https://mine.test/mcp\n";
    home.write("config.yaml", original);
    // One after another, so each runs in this worker (at once, two were processes of their own).
    const no = await svc(home, ["mcp", "install", link("other", { url: "https://o.test/" })], {
      input: "n\n",
    });
    const closedAtRename = await svc(home, ["mcp", "install", link("docs", { url: "https://o.test/" })], {
      input: "",
    });
    const closed = await svc(home, ["mcp", "install", link("other", { url: "https://o.test/" })], {
      input: "",
    });
    for (const r of [no, closedAtRename, closed]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("Cancelled; nothing was installed.");
    }
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
  });
});
