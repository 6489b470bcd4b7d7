import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runEachInProcess } from "../../helpers/inProcessCli.js";

beforeAll(() => loadInProcessCli("cron"), 180_000);

let home: TempHome;
beforeAll(() => {
  home = tempHome();
});
afterAll(() => home.cleanup());

const each = <const T extends readonly (readonly string[])[]>(...argsList: T) =>
  runEachInProcess(argsList, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

describe("svc cron create with a schedule or prompt not in quotes", { timeout: 90_000 }, () => {
  it("names the option the stray words follow and the quotes to write (was: too many arguments ... Expected 0 arguments but got 4)", async () => {
    const [schedule, globbed, prompt, operand, name] = await each(
      ["cron", "create", "--name", "n", "--schedule", "0", "9", "*", "*", "1-5", "--prompt", "hi"],
      // What the shell passes for `--schedule */5 * * * *` in a directory holding a.txt and b.txt.
      ["cron", "create", "--name", "n", "--schedule", "*/5", "a.txt", "b.txt", "--prompt", "hi"],
      ["cron", "create", "--name=n", "--schedule=@daily", "--prompt", "summarize", "the", "news"],
      ["cron", "create", "nightly", "--name", "n", "--schedule", "@daily", "--prompt", "hi"],
      // A job name is one word: no quotes to advise.
      ["cron", "create", "--name", "my", "job", "--schedule", "@daily", "--prompt", "hi"],
    );
    for (const r of [schedule, globbed, prompt, operand, name]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("Usage: svc cron create");
    }
    expect(schedule.stderr.split("\n")[0]).toBe(
      'error: --schedule takes one value, and 4 more words followed it ("9", "*", "*", "1-5") — write the whole value in quotes, as in --schedule "0 9 * * 1-5" (unquoted, the shell splits it into words and turns each * into the names of the files in the working directory)',
    );
    expect(globbed.stderr).toContain('and 2 more words followed it ("a.txt", "b.txt")');
    // A prompt may hold what is not to be shown: its words are counted, not repeated.
    expect(prompt.stderr.split("\n")[0]).toBe(
      'error: --prompt takes one value, and 2 more words followed it — write the whole value in quotes, as in --prompt "Summarize the open pull requests" (unquoted, the shell splits it into words)',
    );
    expect(prompt.stderr).not.toContain('"news"');
    // A word before any option's value is no unquoted value: commander's own line.
    for (const r of [operand, name]) expect(r.stderr).toContain("error: too many arguments for 'create'");
    expect(existsSync(join(home.dir, "cron", "jobs.json"))).toBe(false);
  });

  it("a * the shell turned into the names of many files shows a few of them and counts the rest, not a screenful", async () => {
    const files = Array.from({ length: 200 }, (_, i) => `file-${i}.txt`);
    const [globbed] = await each([
      "cron",
      "create",
      "--name",
      "n",
      "--schedule",
      "0",
      ...files,
      "--prompt",
      "hi",
    ]);
    expect(globbed.code).toBe(2);
    const first = globbed.stderr.split("\n")[0] ?? "";
    expect(first).toContain(
      'error: --schedule takes one value, and 200 more words followed it ("file-0.txt", "file-1.txt", "file-2.txt", "file-3.txt", "file-4.txt", … 195 more) — write the whole value in quotes',
    );
    expect(first).not.toContain("file-5.txt");
  });
});
