import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

const cron = (...args: string[]) =>
  runInProcess(["cron", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

/** cron/jobs.json holding job j1 and, beside "jobs", "meta": an array `depth` levels deep around 1.50. */
function storeWithDeepMeta(depth: number): string {
  const text = oneJobStore({ name: "digest", prompt: "hi", next_run: "2099-01-01T00:00:00.000Z" });
  return `${text.slice(0, -1)},"meta":${"[".repeat(depth)}1.50${"]".repeat(depth)}}`;
}

describe("svc cron pause beside a top-level field nested thousands of levels deep (written by hand)", () => {
  it("is refused naming the field and its depth, the file unchanged, not with a bare 'Invalid string length'", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    const text = storeWithDeepMeta(25_000);
    const path = home.write("cron/jobs.json", text);
    const paused = await cron("pause", "j1");
    expect(paused.code).not.toBe(0);
    expect(paused.stderr).toContain(
      `${path}: nested too deep: the top-level field "meta" nests objects or arrays 25000 levels deep, more than svc can write back (5,000 levels at most) — flatten or remove that value by hand (the file is unchanged)`,
    );
    expect(paused.stderr).not.toContain("Invalid string length");
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});
