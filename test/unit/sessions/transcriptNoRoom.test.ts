import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const STORE = pathToFileURL(svcModule("io/sessions/store.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

describe("a chat transcript that finds no room for a mirrored entry", () => {
  it("is left as it was (no cut-off line for the next entry to join) and the failure names the file", async () => {
    home = tempHome();
    // A process whose files may not grow past 64 KiB (`ulimit -f`, as a disk that fills up): a 100 KiB
    // entry is written only in part, and the kernel reports the short count, not an error.
    const script = `
      import { SessionStore } from ${JSON.stringify(STORE)};
      const store = new SessionStore(${JSON.stringify(join(home.dir, "sessions"))});
      const record = await store.openChat("telegram", "42");
      await store.append(record.key, [{ role: "user", content: "first" }]);
      try {
        await store.append(record.key, [{ role: "assistant", content: "x".repeat(100 * 1024) }]);
        console.log("appended");
      } catch (err) {
        console.log("refused: " + err.message);
      }
      await store.append(record.key, [{ role: "assistant", content: "after" }]);
      console.log(JSON.stringify(store.entries(record.key).map((entry) => entry.content)));`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -f 64 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
    });
    const transcript = join(home.dir, "sessions", "telegram", "42.jsonl");
    expect(stdout.trim().split("\n")).toEqual([
      `refused: cannot append to ${transcript}: the file would pass the size limit for files (EFBIG) — raise the limit (ulimit -f); the transcript is left as it was`,
      JSON.stringify(["first", "after"]),
    ]);
    expect(readFileSync(transcript, "utf8").split("\n").filter(Boolean)).toHaveLength(2);
  }, 30_000);
});
