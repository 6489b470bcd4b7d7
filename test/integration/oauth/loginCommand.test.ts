import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
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

/**
 * `svc <args>` in this process (test/helpers/inProcessCli.ts), with the worker's environment, the test's home
 * and the browser stand-in: the tests look at its output, exit code and files, and a process of its own
 * cost a node start and the OAuth and MCP modules' load per command.
 */
async function svc(args: string[], env: Record<string, string> = {}) {
  const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
  const { code, stdout, stderr } = await runInProcess(args, {
    ...Object.fromEntries(inherited),
    SVC_HOME: home.dir,
    BROWSER: `${process.execPath} ${FOLLOW}`,
    ...env,
  });
  return { code: code ?? -1, stdout, stderr };
}

const json = (file: string) => JSON.parse(readFileSync(join(home.dir, "mcp-tokens", file), "utf8"));

/** Spec 4: `svc mcp login <server> [--flow device or browser]`. */
// Each test runs two or three svc commands and logins through a browser stand-in (a node process each):
// beside CPU burners one test took longer than the default 30 s.
describe("svc mcp login", { timeout: 90_000 }, () => {
  it("--flow browser overrides oauth.flow: device for one login; a new login replaces the registration and keeps the metadata", async () => {
    home = tempHome();
    const as = await startFakeAs({ device: true });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    home.write(
      "config.yaml",
      `mcp_servers:\n  dev:\n    url: ${rs.url}\n    auth: oauth\n    oauth:\n      flow: device\n      cimd: false\n`,
    );
    // Without --flow the configured device flow needs a terminal: refused, nothing written.
    const refused = await svc(["mcp", "login", "dev"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/terminal/);

    // A running gateway keeps the server failed until its next retry, which its backoff may put minutes
    // away: the login says how it connects now, as svc mcp add does (here through the note of a gateway.pid
    // that cannot be read, which a test makes without starting a gateway).
    mkdirSync(join(home.dir, "gateway.pid"));
    const first = await svc(["mcp", "login", "dev", "--flow", "browser"], {
      SSH_CONNECTION: "",
      SSH_CLIENT: "",
      SSH_TTY: "",
    });
    expect(first.stdout).toContain(
      `dev: logged in\nNote: whether a gateway is running is unknown (${join(home.dir, "gateway.pid")}: cannot be read (EISDIR`,
    );
    expect(first.stdout).toContain("if one is, it reads the change with svc mcp reload.");
    rmSync(join(home.dir, "gateway.pid"), { recursive: true });
    expect(first.code).toBe(0);
    expect(json("dev.json")).toMatchObject({ flow: "browser", access_token: as.issued[0] });
    const firstClient = json("dev.client.json").client_id as string;
    expect(json("dev.meta.json").authorizationServerUrl).toBe(as.url);

    // Over SSH the page opened on another machine cannot redirect to this one's 127.0.0.1: a server that
    // offers the device flow gets it named at once, rather than after the login's five minutes.
    const second = await svc(["mcp", "login", "dev", "--flow", "browser"], {
      SSH_CONNECTION: "192.0.2.7 52100 192.0.2.1 22",
    });
    expect(second.code).toBe(0);
    expect(second.stdout + second.stderr).toMatch(
      /\(if no browser on this machine opens it — over SSH, a browser elsewhere cannot reach the redirect to http:\/\/127\.0\.0\.1:\d+\/callback here — stop with Ctrl-C and run `svc mcp login dev --flow device`, which this authorization server offers\)/,
    );
    expect(first.stdout + first.stderr).not.toContain("over SSH");
    expect(json("dev.json").access_token).toBe(as.issued[1]);
    expect(json("dev.client.json").client_id).not.toBe(firstClient);
    expect(json("dev.meta.json").authorizationServerUrl).toBe(as.url);
    expect(as.seen.filter((r) => r.path === "/device")).toEqual([]);
  });

  it("a command's warnings reach stderr: a refresh that got no OAuth answer says the current token is used", async () => {
    home = tempHome();
    const as = await startFakeAs({ refreshError: { status: 503, body: "upstream down" } });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    home.write(
      "config.yaml",
      `mcp_servers:\n  srv:\n    url: ${rs.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
    );
    expect((await svc(["mcp", "login", "srv"])).code).toBe(0);
    // The token enters its last minute: the next connect refreshes, gets a 503, and keeps the token.
    const tokens = json("srv.json");
    home.write(
      "mcp-tokens/srv.json",
      JSON.stringify({ ...tokens, obtained_at: Date.now() - 3600_000, expires_at: Date.now() + 40_000 }),
      0o600,
    );
    const tested = await svc(["mcp", "test", "srv"]);
    expect(tested.stderr).toContain("warning: srv: token refresh failed; using the current token");
    expect(tested.stderr).not.toMatch(/^\d{4}-\d\d-\d\dT/m);
  });

  it("rejects an unknown --flow value as a usage error", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  s:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n");
    const r = await svc(["mcp", "login", "s", "--flow", "magic"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--flow: expected device or browser, got "magic"/);
  });
});
