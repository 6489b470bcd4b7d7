import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

const mcp = (...args: string[]) =>
  runInProcess(["mcp", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

/**
 * `mcp_servers` lives in the one config.yaml every profile shares (docs/webhook.md, Profiles): a team
 * that adds "its" server with `--profile` is told how profiles differ instead of a bare unknown option.
 */
describe("svc mcp add / remove / import --profile", () => {
  it("is refused (exit 2, nothing written) saying that mcp_servers serve every profile and where a profile's own values go", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  gh:\n    command: echo\n", 0o600);
    const before = readFileSync(join(home.dir, "config.yaml"), "utf8");
    home.write("claude.json", JSON.stringify({ mcpServers: { fx: { command: "echo" } } }));
    for (const args of [
      ["add", "notes", "--profile", "work", "--", "echo", "hi"],
      ["remove", "gh", "--profile", "work"],
      ["import", join(home.dir, "claude.json"), "--profile", "work"],
    ]) {
      const out = await mcp(...args);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(
        `svc: unknown option '--profile': the mcp_servers of ${join(home.dir, "config.yaml")} serve every profile (one config.yaml for all) — run this without --profile; profile work's runs connect to them with their own values: its \${VAR}s in ${join(home.dir, "profiles", "work", ".env")}, its OAuth logins with svc mcp login <server> --profile work`,
      );
      expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(before);
    }
    expect(existsSync(join(home.dir, "profiles"))).toBe(false);
  });
});
