import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
});

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;

describe("svc mcp install, add and remove beside a running gateway", { timeout: 90_000 }, () => {
  it("says the running gateway connects the server at svc mcp reload, which then adds it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()), 0o600);
    gateway = await runForeground(home);
    const installed = await svc(
      home,
      ["mcp", "install", link("fx", { command: process.execPath, args: [STDIO_FIXTURE] })],
      { input: "y\n" },
    );
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(
      "Installed mcp_servers.fx.\nThe running gateway connects it with svc mcp reload.\n",
    );
    const reloaded = await svc(home, ["mcp", "reload"]);
    expect(reloaded.stdout).toContain("added: fx");
  });

  it("an unreadable gateway.pid does not fail an install, add or remove that was written: the note names it, exit 0", async () => {
    home = tempHome();
    mkdirSync(join(home.dir, "gateway.pid"));
    const config = { command: process.execPath, args: [STDIO_FIXTURE] };
    const [installed, added] = await Promise.all([
      svc(home, ["mcp", "install", link("fx", config)], { input: "y\n" }),
      svc(home, ["mcp", "add", "gx", "--", process.execPath, STDIO_FIXTURE]),
    ]);
    const removed = await svc(home, ["mcp", "remove", "gx"]);
    for (const res of [installed, added, removed]) {
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(
        `Note: whether a gateway is running is unknown (${join(home.dir, "gateway.pid")}: cannot be read (EISDIR`,
      );
    }
    expect(installed.stdout).toContain("Installed mcp_servers.fx.");
    expect(removed.stdout).toContain("Removed mcp_servers.gx");
  });
});
