import { appendFileSync, mkdirSync, readFileSync, renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createProfileResources } from "../../../src/gateway/profileResources.js";
import { ROTATION_CHECK_MS } from "../../../src/io/batchedWriter.js";
import type { Logger } from "../../../src/io/log.js";
import { RUN_JOURNAL_DIR } from "../../../src/io/sessions/runJournal.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => {
  vi.useRealTimers();
  home?.cleanup();
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The day's run journal replaced by a directory while the gateway runs, then put back: the reopen said
 * `run session not recorded {"err":"Error: EISDIR: …"}`, and once the file was back (a line cut short at its
 * end) the first run recorded was appended to that cut line, unreadable with it; a start ends such a line.
 */
describe("a day's run journal reopened after a directory held its name", () => {
  it("says the directory is in the way and what to do, and ends the cut last line before the next run's", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    home = tempHome();
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const resources = createProfileResources(home.dir, logger, Date.now);
    const journal = resources.runJournal("default");
    const record = async (id: string) => {
      journal.record({ route: "r", deliveryId: id, prompt: `p ${id}`, reply: `r ${id}` });
      await turn();
    };
    await record("before");
    const dir = join(home.dir, "sessions", RUN_JOURNAL_DIR);
    const file = join(dir, `${new Date().toISOString().slice(0, 10)}.jsonl`);
    const aside = join(home.dir, "aside.jsonl");
    // Moved away with a line cut short at its end, and a directory made in its place.
    appendFileSync(file, '{"key":"webhook:r:cut","entr');
    renameSync(file, aside);
    mkdirSync(file);
    vi.advanceTimersByTime(ROTATION_CHECK_MS);
    await record("lost");
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${join(home.dir, "sessions")}: ${file}: it is a directory: move it away (the gateway writes the day's journal there); said once until a run is recorded again`,
      ],
    ]);
    // Fixed: the directory removed, the file put back.
    rmdirSync(file);
    renameSync(aside, file);
    vi.advanceTimersByTime(ROTATION_CHECK_MS);
    await record("after");
    await resources.closeJournals();
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0] as string).delivery_id).toBe("before");
    expect(lines[1]).toBe('{"key":"webhook:r:cut","entr');
    expect(JSON.parse(lines[2] as string).delivery_id).toBe("after");
    expect(lines[3]).toBe("");
  });
});
