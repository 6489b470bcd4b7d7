import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeAs, startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";

const FOLLOW = join(import.meta.dirname, "../../fakes/authServer/followBrowser.mjs");

let home: TempHome;
const closers: Array<() => Promise<void>> = [];
// The CLI's first load in this worker, outside any test's 30 s.
beforeAll(() => loadInProcessCli("mcp"), 120_000);
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  home?.cleanup();
});

/** The command's environment: the worker's, with the test's home and no browser unless given one. */
function svcEnv(env: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
  return { ...Object.fromEntries(inherited), SVC_HOME: home.dir, BROWSER: "", ...env };
}

/**
 * `svc <args>` in this process (test/helpers/inProcessCli.ts): its output, exit code and files are what the
 * tests look at, and a process of its own cost a node start and the OAuth and MCP modules' load each.
 */
async function svc(args: string[], env: Record<string, string> = {}) {
  const { code, stdout, stderr } = await runInProcess(args, svcEnv(env));
  return { code: code ?? -1, stdout, stderr };
}

/** `svc <args>` as a process of its own, for what is about the process: its stdin, its entry script. */
function svcProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
      env: svcEnv(env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.stdin.end();
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;

describe("svc mcp install / login / reauth", () => {
  it("install shows the config but writes nothing when stdin closes without an answer", async () => {
    home = tempHome();
    const original = "# my servers\nmcp_servers: {}\n";
    home.write("config.yaml", original);
    const r = await svcProcess([
      "mcp",
      "install",
      link("tools", { command: "npx", args: ["-y", "some-server"] }),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Install MCP server "tools"');
    expect(r.stdout).toContain("WARNING: this server runs a program");
    expect(r.stdout).toContain("Cancelled; nothing was installed.");
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
  });

  it("install rejects a bad link with the reason", async () => {
    home = tempHome();
    const r = await svc(["mcp", "install", link("bad name", { url: "https://x.test/" })]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /install link rejected: name "bad name" is not a valid server name: .* — " " is not one of them: write bad-name$/m,
    );
  });

  it("--register-handler writes the x-scheme-handler/svc desktop file under $XDG_DATA_HOME", async () => {
    home = tempHome();
    const r = await svcProcess(["mcp", "install", "--register-handler"], {
      XDG_DATA_HOME: join(home.dir, "xdg"),
      XDG_CONFIG_HOME: join(home.dir, "xdgc"),
      PATH: "/nonexistent",
    });
    expect(r.code).toBe(0);
    const file = join(home.dir, "xdg", "applications", "svc-mcp-install.desktop");
    const text = readFileSync(file, "utf8");
    expect(text).toContain("MimeType=x-scheme-handler/svc;");
    // The entry this svc was started with: the build's main.js, or main.ts through tsx.
    expect(text).toMatch(/^Exec=".*" ".*main\.(js|ts)" mcp install %u$/m);
    expect(r.stdout).toContain("xdg-mime not found");
  });

  it("login --flow device refuses without a terminal", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  srv:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n");
    const r = await svc(["mcp", "login", "srv", "--flow", "device"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/srv: the device login needs a terminal/);
  });

  it("login renders only the named server, with the profile's .env; another server's unset ${VAR} does not matter", async () => {
    home = tempHome();
    const as = await startFakeAs();
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    const port = new URL(rs.url).port;
    home.write(
      "config.yaml",
      "mcp_servers:\n  other:\n    url: https://${OTHER_HOST}/mcp\n    auth: oauth\n" +
        `  mine:\n    url: http://127.0.0.1:\${MINE_PORT}${new URL(rs.url).pathname}\n    auth: oauth\n    oauth: {cimd: false}\n`,
    );
    home.write("profiles/work/.env", `MINE_PORT=${port}\n`);
    const browser = `${process.execPath} ${FOLLOW}`;
    const r = await svc(["mcp", "login", "mine", "--profile", "work"], { BROWSER: browser });
    expect(r.stderr).not.toMatch(/OTHER_HOST/);
    expect(r.stdout).toContain("mine: logged in");
    expect(r.code).toBe(0);
    const mode = statSync(join(home.dir, "profiles", "work", "mcp-tokens", "mine.json")).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it("login is not stopped by a header's unset variable: it sends no header (only a connect fails closed on it)", async () => {
    home = tempHome();
    const as = await startFakeAs();
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    home.write(
      "config.yaml",
      `mcp_servers:\n  team:\n    url: ${rs.url}\n    auth: oauth\n    oauth: {cimd: false}\n    headers:\n      X-Team: "\${TEAM_HEADER_UNSET}"\n`,
    );
    const r = await svc(["mcp", "login", "team"], { BROWSER: `${process.execPath} ${FOLLOW}` });
    expect(r.stderr).not.toMatch(/TEAM_HEADER_UNSET/);
    expect(r.stdout).toContain("team: logged in");
    expect(r.code).toBe(0);
    expect(existsSync(join(home.dir, "mcp-tokens", "team.json"))).toBe(true);
  });

  it("login names the file and key when the server is not an oauth server", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  plain:\n    url: http://127.0.0.1:9/mcp\n");
    const r = await svc(["mcp", "login", "plain"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /config\.yaml: mcp_servers\.plain: has no auth: oauth — add auth: oauth to the entry/,
    );
  });

  it("login opens $BROWSER, clears a recorded document rejection, and saves tokens; reauth --all reports each server", async () => {
    home = tempHome();
    const as = await startFakeAs();
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    home.write(
      "config.yaml",
      `mcp_servers:\n  good:\n    url: ${rs.url}\n    auth: oauth\n    oauth:\n      cimd: false\n  down:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth:\n      cimd: false\n`,
    );
    home.write("mcp-tokens/good.cimd-off", "earlier rejection\n");
    const browser = `${process.execPath} ${FOLLOW}`;
    const login = await svc(["mcp", "login", "good"], { BROWSER: browser });
    expect(login.stderr).toContain("Open this URL to log in to good:");
    expect(login.stdout).toContain("good: logged in");
    expect(login.code).toBe(0);
    expect(existsSync(join(home.dir, "mcp-tokens", "good.cimd-off"))).toBe(false);
    const saved = JSON.parse(readFileSync(join(home.dir, "mcp-tokens", "good.json"), "utf8")) as {
      access_token: string;
    };
    expect(saved.access_token).toBe(as.issued[0]);

    const reauth = await svc(["mcp", "reauth", "--all"], { BROWSER: browser });
    expect(reauth.stdout).toContain("good: re-authorized");
    expect(reauth.stdout).toMatch(/down: failed — down: OAuth discovery failed — GET /);
    expect(reauth.code).toBe(1);
  });
});

/** The redirect URI of each authorization request the server saw. */
const sentRedirects = (as: FakeAs) =>
  as.seen.filter((s) => s.path === "/authorize").map((s) => s.query?.get("redirect_uri"));

/** A home whose `good` server has logged in (registering a client) at a fresh authorization server. */
async function loggedIn(exactRedirectUris: boolean): Promise<FakeAs> {
  home = tempHome();
  const as = await startFakeAs({ exactRedirectUris });
  closers.push(as.close);
  const rs = await startFakeResource([as.url]);
  closers.push(rs.close);
  home.write(
    "config.yaml",
    `mcp_servers:\n  good:\n    url: ${rs.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
  );
  const login = await svc(["mcp", "login", "good"], { BROWSER: `${process.execPath} ${FOLLOW}` });
  expect(login.stdout).toContain("good: logged in");
  return as;
}

describe("svc mcp reauth: the callback port of the registration it reuses", () => {
  it("listens on the port registered, so a server admitting only that exact redirect URI re-authorizes", async () => {
    const as = await loggedIn(true);
    const reauth = await svc(["mcp", "reauth", "good"], { BROWSER: `${process.execPath} ${FOLLOW}` });
    expect(reauth.stdout).toContain("good: re-authorized");
    expect(reauth.code).toBe(0);
    const [registered, again] = sentRedirects(as);
    expect(again).toBe(registered);
    expect(as.seen.filter((s) => s.path === "/register")).toHaveLength(1);
  });

  it("takes another loopback port when the registered one is busy, reusing the registration", async () => {
    const as = await loggedIn(false);
    const registered = new URL(sentRedirects(as)[0] ?? "");
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(Number(registered.port), "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => holder.close(() => resolve())));
    const reauth = await svc(["mcp", "reauth", "good"], { BROWSER: `${process.execPath} ${FOLLOW}` });
    expect(reauth.stdout).toContain("good: re-authorized");
    const again = new URL(sentRedirects(as)[1] ?? "");
    expect(again.port).not.toBe(registered.port);
    expect(again.pathname).toBe(registered.pathname);
    expect(as.seen.filter((s) => s.path === "/register")).toHaveLength(1);
  });
});
