import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
let dotfiles: string;
afterEach(() => {
  home.cleanup();
  rmSync(dotfiles, { recursive: true, force: true });
});

/** `$SVC_HOME/<name>` as a symlink into a dotfiles directory holding `text`; returns the real file. */
function linked(name: string, text: string): string {
  const real = join(dotfiles, name);
  writeFileSync(real, text, { mode: 0o600 });
  symlinkSync(real, join(home.dir, name));
  return real;
}

describe("config.yaml, .env and the subscription store kept as symlinks (a dotfiles repository)", {
  timeout: 90_000,
}, () => {
  it("setup, mcp install and webhook subscribe update the linked files and keep the links", async () => {
    home = tempHome();
    dotfiles = mkdtempSync(join(tmpdir(), "svc-dotfiles-"));
    const config = linked(
      "config.yaml",
      "# mine\nplatforms:\n  webhook:\n    enabled: false\n    port: 9000\n",
    );
    const env = linked(".env", "# keep\nOTHER=1\n");
    const store = linked("webhook_subscriptions.json", "{}\n");
    const setup = await svc(home, ["gateway", "setup", "--non-interactive", "--enable", "--port", "9100"]);
    expect(setup.code).toBe(0);
    const link = `svc://mcp/install?name=docs&config=${Buffer.from('{"url":"https://docs.test/mcp"}').toString("base64url")}`;
    expect((await svc(home, ["mcp", "install", link], { input: "y\n" })).code).toBe(0);
    expect((await svc(home, ["webhook", "subscribe", "gh"])).code).toBe(0);
    for (const name of ["config.yaml", ".env", "webhook_subscriptions.json"])
      expect(lstatSync(join(home.dir, name)).isSymbolicLink()).toBe(true);
    expect(readFileSync(config, "utf8")).toMatch(/# mine[\s\S]*enabled: true[\s\S]*port: 9100[\s\S]*docs:/);
    expect(readFileSync(env, "utf8")).toMatch(/^# keep\nOTHER=1\nWEBHOOK_ENABLED=true\nWEBHOOK_PORT=9100\n/);
    expect(Object.keys(JSON.parse(readFileSync(store, "utf8")))).toEqual(["gh"]);
  });
});
