import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

const svc = (svcHome: string, ...args: string[]) =>
  runInProcess(args, { SVC_HOME: svcHome, HOME: home.dir, PATH: process.env.PATH ?? "" });

// In-process: each command fails at its first file, before anything is started.
describe("a command whose SVC_HOME cannot hold its files", () => {
  it("a symbolic link to a directory that is gone is named, with the fix, instead of a bare ENOENT from mkdir", async () => {
    home = tempHome();
    const link = join(home.dir, "svc-home");
    symlinkSync(join(home.dir, "moved-away"), link);
    const subscribe = await svc(link, "webhook", "subscribe", "ci");
    expect(subscribe.code).toBe(1);
    expect(subscribe.stderr).toBe(
      `svc: ${link}: SVC_HOME is a symbolic link to ${join(home.dir, "moved-away")}, which does not exist — create that directory, or set SVC_HOME to another one (ENOENT: no such file or directory, mkdir '${link}')\n`,
    );
  });

  it("a file in its place is named instead of 'cannot be read (ENOTDIR ...)'", async () => {
    home = tempHome();
    const file = home.write("svc-home", "");
    const subscribe = await svc(file, "webhook", "subscribe", "ci");
    expect(subscribe.code).toBe(1);
    expect(subscribe.stderr).toContain(
      `svc: ${file}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory (${file}/webhook_subscriptions.json: cannot be read (ENOTDIR`,
    );
    // A config.yaml edit makes SVC_HOME first (mkdir -p: EEXIST on a file).
    for (const args of [
      ["mcp", "add", "fs", "--", "node", "server.js"],
      ["gateway", "setup", "--non-interactive"],
    ]) {
      const edit = await svc(file, ...args);
      expect(edit.code).toBe(1);
      expect(edit.stderr).toBe(
        `svc: ${file}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory (EEXIST: file already exists, mkdir '${file}')\n`,
      );
    }
    // svc mcp remove edits config.yaml without loading the configuration: the missing file is named by why.
    const remove = await svc(file, "mcp", "remove", "fs");
    expect(remove).toMatchObject({
      code: 1,
      stderr: `svc: ${file}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory\n`,
    });
    // A usage error is still the usage error.
    const bad = await svc(file, "webhook", "subscribe", "bad name");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"bad name" is not a valid route name');
  });
});
