import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";

let home: TempHome;
afterEach(() => home.cleanup());

const mcp = (...args: string[]) =>
  runInProcess(["mcp", ...args], { SVC_HOME: home.dir, HOME: home.dir, PATH: process.env.PATH ?? "" });

/** One stdio server whose `env` tool shows T, rendered from `${T}` of the profile's own `.env`. */
function homeWithTwoProfiles(): void {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: { fx: { command: process.execPath, args: [STDIO_FIXTURE], env: { T: "${T}" } } },
    }),
    0o600,
  );
  home.write(".env", "T=default-value\n", 0o600);
  home.write("profiles/work/.env", "T=work-value\n", 0o600);
}

/**
 * A named profile's runs connect with its own `.env` and OAuth logins (docs/mcp.md, Interpolation): with
 * `--profile`, `svc mcp call`, `tools` and `test` connect as that profile's runs do, so a login made with
 * `svc mcp login <server> --profile work`, or a value in `profiles/work/.env`, can be checked from the shell.
 */
describe("svc mcp call / tools / test --profile", () => {
  it("call renders the server's ${VAR}s from the named profile's .env, and without --profile from the default one", async () => {
    homeWithTwoProfiles();
    const work = await mcp("call", "fx", "env", "--args", '{"name":"T"}', "--profile", "work");
    expect(work).toMatchObject({ code: 0, stdout: "work-value\n" });
    const plain = await mcp("call", "fx", "env", "--args", '{"name":"T"}');
    expect(plain).toMatchObject({ code: 0, stdout: "default-value\n" });
  }, 60_000);

  it("test and test --all check the server with the named profile's values, warning of a ${VAR} only the default profile sets", async () => {
    homeWithTwoProfiles();
    home.write(".env", "T=default-value\nONLY_DEFAULT=x\n", 0o600);
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          fx: { command: process.execPath, args: [STDIO_FIXTURE], env: { T: "${T}", D: "${ONLY_DEFAULT}" } },
        },
      }),
      0o600,
    );
    const one = await mcp("test", "fx", "--profile", "work");
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("connected in");
    expect(one.stderr).toContain("${ONLY_DEFAULT}");
    expect(one.stderr).toContain(join(home.dir, "profiles", "work", ".env"));
    const all = await mcp("test", "--all", "--profile", "work");
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/fx\s+stdio\s+ok/);
    const tools = await mcp("tools", "fx", "--profile", "work");
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/mcp__fx__env\s+env/);
    // The connect's tool cache is the profile's, as the gateway's connections of that profile keep it.
    expect(existsSync(join(home.dir, "profiles", "work", "mcp-cache"))).toBe(true);
  }, 60_000);

  it("tools --profile judges the server's trust from the named profile's .env, as that profile's runs do", async () => {
    homeWithTwoProfiles();
    home.write(
      "config.yaml",
      stringify({
        agent: { provider: "command", command: ["cat"] },
        mcp_servers: { fx: { command: process.execPath, args: [STDIO_FIXTURE], trust: "${TRUST}" } },
      }),
      0o600,
    );
    home.write(".env", "TRUST=full\n", 0o600);
    home.write("profiles/work/.env", "TRUST=untrusted\n", 0o600);
    const work = await mcp("tools", "fx", "--profile", "work");
    expect(work.code).toBe(0);
    expect(work.stdout).toMatch(
      /Refused in runs \(untrusted server, no readOnlyHint, gateway\.approvals: deny\): .*mcp__fx__write_note/,
    );
    const plain = await mcp("tools", "fx");
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain("Refused in runs");
  }, 60_000);

  it("an invalid profile name is refused (exit 2) naming it, and list says where a profile's servers are checked", async () => {
    homeWithTwoProfiles();
    const bad = await mcp("call", "fx", "env", "--profile", "a/b");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('profile name "a/b" is not valid');
    const list = await mcp("list", "--profile", "work");
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(
      "svc mcp list shows the default profile's connections — for profile work's: svc mcp test --all --profile work",
    );
    // A reload covers every profile: said, rather than commander's bare "unknown option".
    const reload = await mcp("reload", "--profile", "work");
    expect(reload.code).toBe(2);
    expect(reload.stderr).toBe(
      `svc: unknown option '--profile': a reload covers every profile — each profile with open connections is reloaded with its own .env, in a "Profile <name>" section of the summary; run svc mcp reload without --profile\n`,
    );
  }, 60_000);
});
