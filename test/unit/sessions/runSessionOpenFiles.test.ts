import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const RESOURCES = pathToFileURL(svcModule("gateway/profileResources.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

describe("a run session recorded by a process at its limit on open files", () => {
  it("is logged naming the limit and how to raise it (not the raw 'EMFILE: too many open files, open …')", async () => {
    home = tempHome();
    // A process under `ulimit -n 64` that holds every descriptor its limit leaves, then records a run:
    // the day's journal cannot be opened.
    const script = `
      import { openSync, closeSync } from "node:fs";
      import { createProfileResources } from ${JSON.stringify(RESOURCES)};
      const warn = (...args) => console.log(JSON.stringify(args));
      const resources = createProfileResources(${JSON.stringify(home.dir)}, { warn }, Date.now);
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      resources.runJournal("default").record({ route: "r", deliveryId: "d-1", prompt: "p", reply: "done" });
      for (const fd of held) closeSync(fd);
      await resources.closeJournals();`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -n 64 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
    });
    const warnings = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown[]);
    expect(warnings).toEqual([
      [
        expect.stringMatching(
          /^\[webhook\] run session not recorded in .+\/sessions: too many open files \(EMFILE: this process has as many open as its limit allows\) — raise its open-file limit \(ulimit -n; .+\); said once until a run is recorded again$/,
        ),
      ],
    ]);
  }, 30_000);
});
