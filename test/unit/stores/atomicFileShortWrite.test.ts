import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const ATOMIC = pathToFileURL(svcModule("io/stores/atomicFile.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * A process whose files may not grow past 64 KiB (`ulimit -f`, as a disk that fills up mid-write): the
 * kernel writes what fits and reports the short count, and only the next write fails (EFBIG).
 */
function writeUnderSizeLimit(file: string, bytes: number) {
  // Written by writeFileAtomic, then by writeFileAtomicAsync (its write on libuv's threads): a line each.
  const script = `
    import { writeFileAtomic, writeFileAtomicAsync } from ${JSON.stringify(ATOMIC)};
    const data = JSON.stringify({ big: "x".repeat(${bytes}) });
    for (const write of [() => writeFileAtomic(${JSON.stringify(file)}, data),
                         () => writeFileAtomicAsync(${JSON.stringify(file)}, Buffer.from(data))]) {
      try {
        await write();
        console.log("written");
      } catch (err) {
        console.log("refused: " + err.code + ": " + err.message);
      }
    }`;
  const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
  return execa("bash", ["-c", 'ulimit -f 64 && exec "$@"', "bash", ...node], {
    cwd: resolve(import.meta.dirname, "../../.."),
  });
}

describe("writeFileAtomic when the system writes only part of the data", () => {
  it("keeps the old store whole, leaves no temp file and says why, naming the file (a cut-off copy was renamed over it)", async () => {
    home = tempHome();
    const store = home.write("webhook_subscriptions.json", '{"kept-record-marker": {}}\n');
    const { stdout } = await writeUnderSizeLimit(store, 100 * 1024);
    const refused = `refused: store_unwritable: cannot write ${store}: the file would pass the size limit for files (EFBIG) — the file is unchanged; raise the limit (ulimit -f), then run the command again`;
    expect(stdout.trim().split("\n")).toEqual([refused, refused]);
    expect(readFileSync(store, "utf8")).toBe('{"kept-record-marker": {}}\n');
    expect(readdirSync(home.dir)).toEqual(["webhook_subscriptions.json"]);
  }, 30_000);

  it("writes a store that fits under the same limit (the limit alone refuses nothing)", async () => {
    home = tempHome();
    const store = join(home.dir, "cron-jobs.json");
    const { stdout } = await writeUnderSizeLimit(store, 32 * 1024);
    expect(stdout.trim().split("\n")).toEqual(["written", "written"]);
    expect((JSON.parse(readFileSync(store, "utf8")) as { big: string }).big).toHaveLength(32 * 1024);
  }, 30_000);
});
