import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const JOURNAL = pathToFileURL(svcModule("io/sessions/runJournal.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

// Before opening a day's journal, svc read its last byte (to end a torn line) with a blocking open for
// reading: on a named pipe in the journal's place that open waits for a writer, so the first run of the
// day held the gateway's one thread for good. Run in a process of its own, which the test can give up on.
it("a named pipe in the place of the day's journal does not hold the gateway: the run is said not recorded, naming the pipe", async () => {
  home = tempHome();
  const dir = join(home.dir, "webhook-runs");
  mkdirSync(dir);
  execFileSync("mkfifo", [join(dir, "2026-11-22.jsonl")]);
  const script = `
    import { createRunJournal } from ${JSON.stringify(JOURNAL)};
    const journal = createRunJournal(${JSON.stringify(home.dir)}, (err) => console.log(String(err.message)),
      () => new Date("2026-11-22T10:00:00Z"));
    journal.record({ route: "r", deliveryId: "d-1", prompt: "p", reply: "done" });
    await journal.close();`;
  const run = await execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script], {
    cwd: resolve(import.meta.dirname, "../../.."),
    timeout: 3000,
    reject: false,
  });
  expect(run.timedOut).toBe(false);
  expect(run.stdout.trim()).toBe(
    `${join(dir, "2026-11-22.jsonl")} is a named pipe that no program reads (ENXIO) — start the program that reads it first, or move the pipe away (svc then writes a file there)`,
  );
});
