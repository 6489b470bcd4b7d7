import { existsSync, symlinkSync } from "node:fs";
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
});
