import { existsSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

const cron = (...args: string[]) =>
  runInProcess(["cron", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });
const create = ["create", "--name", "a", "--schedule", "@daily", "--prompt", "hi", "--profile"];

describe("svc cron --profile <name> whose profiles/<name> cannot be its directory", () => {
  it("refuses, naming the entry, where the link points and what to do, and writes nothing through the link", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    const file = home.write("profiles/plain", "a file where a profile's directory goes");
    symlinkSync(join(home.dir, "moved/work"), join(home.dir, "profiles/work"));

    const linked = await cron(...create, "work");
    expect(linked.code).toBe(2);
    expect(linked.stderr).toBe(
      `svc: ${home.dir}/profiles/work: a symbolic link to ${home.dir}/moved/work, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link\n`,
    );
    expect(existsSync(join(home.dir, "moved"))).toBe(false);

    const plain = await cron(...create, "plain");
    expect(plain.code).toBe(2);
    expect(plain.stderr).toBe(
      `svc: ${file} is not a directory — profile plain's runs, cron jobs and MCP logins cannot use it: move the file away (a profile is the directory ${file}/)\n`,
    );
    expect((await cron("list", "--profile", "work")).code).toBe(2);
  });

  it("refuses when profiles/ itself is a file or a link to nothing, rather than a raw ENOTDIR from mkdir", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    // Seen: "svc: ENOTDIR: not a directory, mkdir '<home>/profiles/work/cron'" (exit 1).
    const profiles = home.write("profiles", "a file where the profiles' directory goes");
    const filed = await cron(...create, "work");
    expect(filed.code).toBe(2);
    expect(filed.stderr).toBe(
      `svc: ${profiles} is not a directory — profile work's runs, cron jobs and MCP logins cannot use it (every named profile's directory is under it): move the file away\n`,
    );
    expect((await cron("list", "--profile", "work")).code).toBe(2);
    expect((await cron(...create.slice(0, -1))).code).toBe(0); // the default profile's store is not under it

    rmSync(profiles);
    symlinkSync(join(home.dir, "moved/profiles"), profiles);
    const linked = await cron(...create, "work");
    expect(linked.code).toBe(2);
    expect(linked.stderr).toBe(
      `svc: ${profiles}: a symbolic link to ${home.dir}/moved/profiles, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it (every named profile's directory is under it): restore the directory it points to, or remove the link\n`,
    );
    expect(existsSync(join(home.dir, "moved"))).toBe(false);
  });
});
