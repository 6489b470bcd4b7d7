import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

/**
 * A directory where one of a login's files goes (a `mkdir -p` of the wrong path, a restore that made one)
 * failed with a bare `EISDIR` (`svc mcp test`), made `svc mcp logout` fail and keep the tokens, and made
 * `svc mcp login` fail with `Path is a directory: rm returned EISDIR`: no file named, no fix.
 */

let home: TempHome;
afterEach(() => home.cleanup());

const fix = "it is a directory: move it away (svc keeps this store in a file of that name)";
const mcp = (...args: string[]) =>
  runInProcess(["mcp", ...args], { SVC_HOME: home.dir, HOME: home.dir, PATH: process.env.PATH ?? "" });
const file = (name: string) => join(home.dir, "mcp-tokens", name);

/** A home with `gh` (auth: oauth) on a port nothing answers: no command here gets as far as a request. */
function oauthHome(): void {
  home = tempHome();
  home.write("config.yaml", "mcp_servers:\n  gh:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n");
}

const savedLogin = JSON.stringify({
  access_token: "at",
  token_type: "Bearer",
  issuer: "http://127.0.0.1:9",
  flow: "browser",
});

describe("a directory in the place of a file under mcp-tokens/", { timeout: 60_000 }, () => {
  it("the tokens file: svc mcp test names it and the fix (exit 1)", async () => {
    oauthHome();
    mkdirSync(file("gh.json"), { recursive: true });
    const test = await mcp("test", "gh");
    expect(test.code).toBe(1);
    expect(test.stderr).toBe(
      `svc: mcp_servers.gh: ${file("gh.json")}: cannot be read (EISDIR: illegal operation on a directory, read) — ${fix}\n`,
    );
  });

  it("the cached discovery: svc mcp logout takes it as absent and removes the tokens; svc mcp login names it", async () => {
    oauthHome();
    home.write("mcp-tokens/gh.json", savedLogin, 0o600);
    mkdirSync(file("gh.meta.json"));
    const logout = await mcp("logout", "gh");
    expect(logout).toMatchObject({
      code: 0,
      stdout: `gh: logged out — ${file("gh.json")} removed\n`,
      stderr:
        "warning: gh: the grant was not revoked (no saved metadata of http://127.0.0.1:9); it stays valid at its authorization server until it expires — revoke it there if it may have leaked\n",
    });
    expect(existsSync(file("gh.json"))).toBe(false);

    // Discovery could not write it either: the login stops before it, naming the file.
    const login = await mcp("login", "gh");
    expect(login.code).toBe(1);
    expect(login.stderr).toBe(
      `svc: ${file("gh.meta.json")}: cannot be read (EISDIR: illegal operation on a directory, read) — ${fix}\n`,
    );
  });

  it("the document client's rejection marker: svc mcp login names it and the fix (exit 1)", async () => {
    oauthHome();
    mkdirSync(file("gh.cimd-off"), { recursive: true });
    const login = await mcp("login", "gh");
    expect(login.code).toBe(1);
    expect(login.stderr).toBe(
      `svc: ${file("gh.cimd-off")}: it is a directory: move it away (svc keeps this marker in a file of that name)\n`,
    );
  });
});
