import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

// In-process: the server's url (port 9, which fetch refuses at once) ends each login at its discovery,
// after the warning; cimd: false keeps the callback off the pinned ports other tests use.
const mcp = (...args: string[]) =>
  runInProcess(["mcp", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

describe("svc mcp login / reauth --profile with a name one letter from an existing profile", () => {
  it("warns before the login that the tokens go to a new profile, naming the profile meant; other names pass silently", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "mcp_servers:\n  o:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth: { cimd: false }\n",
    );
    home.write("profiles/work/.env", "");
    const typo = await mcp("login", "o", "--profile", "wrok");
    expect(typo.stderr).toContain(
      `warning: profile wrok has no directory (${join(home.dir, "profiles", "wrok")} would be new) — did you mean work? The tokens of this login are stored for profile wrok, and only routes and cron jobs bound to wrok use them; for work: svc mcp login o --profile work\n`,
    );
    const reauth = await mcp("reauth", "--all", "--profile", "defualt");
    expect(reauth.stderr).toContain("did you mean default? ");
    expect(reauth.stderr).toContain("for default: svc mcp reauth --all\n");

    // Nothing to log out of in the misspelt profile: the one meant is named, as svc cron names it.
    const logout = await mcp("logout", "o", "--profile", "wrok");
    expect(logout.code).toBe(1);
    expect(logout.stderr).toBe(
      `svc: o: not logged in for profile wrok — no saved login at ${join(home.dir, "profiles", "wrok", "mcp-tokens", "o.json")} (profile wrok has no directory — did you mean work? svc mcp logout o --profile work)\n`,
    );

    for (const profile of ["work", "personal"]) {
      const plain = await mcp("login", "o", "--profile", profile);
      expect(plain.code).toBe(1);
      expect(plain.stderr).not.toContain("did you mean");
    }
  });

  it("a profile whose directory is a link to nothing (or a file) is refused before any login or connect, naming it and the fix", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "mcp_servers:\n  o:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth: { cimd: false }\n",
    );
    home.write("profiles/.keep", "");
    const moved = join(home.dir, "dotfiles", "work");
    symlinkSync(moved, join(home.dir, "profiles", "work"));
    home.write("profiles/notes", "a file where the directory goes");
    const linked = `${join(home.dir, "profiles", "work")}: a symbolic link to ${moved}, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link`;
    for (const args of [
      ["login", "o", "--profile", "work"],
      ["reauth", "o", "--profile", "work"],
      ["logout", "o", "--profile", "work"],
      ["test", "o", "--profile", "work"],
      ["call", "o", "t", "--profile", "work"],
    ]) {
      const out = await mcp(...args);
      expect(out.code, args.join(" ")).toBe(2);
      expect(out.stderr, args.join(" ")).toBe(`svc: ${linked}\n`);
    }
    const file = await mcp("login", "o", "--profile", "notes");
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(
      `${join(home.dir, "profiles", "notes")} is not a directory — profile notes's runs, cron jobs and MCP logins cannot use it`,
    );
    // Nothing was written through the link: the directory it pointed to was not made.
    expect(existsSync(moved)).toBe(false);
  });
});
