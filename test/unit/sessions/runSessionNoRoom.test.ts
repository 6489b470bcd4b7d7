import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const RESOURCES = pathToFileURL(svcModule("gateway/profileResources.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

describe("a run session that finds no room to be written", () => {
  it("is logged saying why and what makes room, naming the sessions directory (not the raw 'EFBIG: file too large, write')", async () => {
    home = tempHome();
    // A process whose files may not grow past 64 KiB (`ulimit -f`, as a disk that fills up): the
    // run's line (a 100 KiB prompt) cannot be written whole.
    const script = `
      import { createProfileResources } from ${JSON.stringify(RESOURCES)};
      const warn = (...args) => console.log(JSON.stringify(args));
      const resources = createProfileResources(${JSON.stringify(home.dir)}, { warn }, Date.now);
      resources.runJournal("default").record({
        route: "nospace-route", deliveryId: "d-1", prompt: "p".repeat(100 * 1024), reply: "done",
      });
      await new Promise((done) => setTimeout(done, 50));
      await resources.closeJournals();`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -f 64 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
    });
    const warnings = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown[]);
    expect(warnings[0]).toEqual([
      expect.stringMatching(
        /^\[webhook\] run session not recorded in .+\/sessions: the file would pass the size limit for files \(EFBIG\) — raise the limit \(ulimit -f\)$/,
      ),
    ]);
  }, 30_000);
});
