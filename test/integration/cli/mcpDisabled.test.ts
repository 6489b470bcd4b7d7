import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp on a server with enabled: false (spec 2.1: no connection, entry stays)", {
  timeout: 90_000,
}, () => {
  it("tools says which file and key disable it and how to turn it on; nothing is spawned", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ mcp_servers: { off: { command: process.execPath, args: [SERVER], enabled: false } } }),
    );
    const res = await svc(home, ["mcp", "tools", "off"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `${join(home.dir, "config.yaml")}: mcp_servers.off.enabled is false — set enabled: true to use it`,
    );
    expect(res.stderr).not.toContain("fixture legacy ready");
  });

  it("call says it as tools and test do, naming the file and the key", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ mcp_servers: { off: { command: process.execPath, args: [SERVER], enabled: false } } }),
    );
    const res = await svc(home, ["mcp", "call", "off", "echo", "--args", '{"text":"hi"}']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `svc: ${join(home.dir, "config.yaml")}: mcp_servers.off.enabled is false — set enabled: true to use it\n`,
    );
  });

  it("test refuses it before it says it is testing it: no Testing line for a server it does not start", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ mcp_servers: { off: { command: process.execPath, args: [SERVER], enabled: false } } }),
    );
    const res = await svc(home, ["mcp", "test", "off"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      `svc: ${join(home.dir, "config.yaml")}: mcp_servers.off.enabled is false — set enabled: true to use it\n`,
    );
  });

  it("list without a gateway counts no tools for it, even with a schema cache from an earlier connect", async () => {
    home = tempHome();
    const write = (enabled: boolean) =>
      home.write(
        "config.yaml",
        stringify({ mcp_servers: { off: { command: process.execPath, args: [SERVER], enabled } } }),
      );
    write(true);
    expect((await svc(home, ["mcp", "tools", "off"])).code).toBe(0);
    write(false);
    const res = await svc(home, ["mcp", "list", "--no-check"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/off\s+stdio\s+skipped\s+0\s+no\s+yes\s+enabled: false\n/);
  });
});
