import { existsSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { RUN_JOURNAL_DIR, removeExpiredRunJournals } from "../../../src/io/sessions/runJournal.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2030-01-10T12:00:00Z");
const DAY = 86_400_000;

// A day journal dated after today (written while the clock was ahead, set back since) was kept until its
// date had passed: one dated next year held its prompts and replies for a year past the 7 days kept.
it("a run journal dated more than a day ahead is judged by its last change, and one changed in the future is kept 7 days from when it is found", () => {
  home = tempHome();
  const journal = (day: string, changed: Date) => {
    const path = home.write(`sessions/${RUN_JOURNAL_DIR}/${day}.jsonl`, '{"key":"webhook:gh:1"}\n');
    utimesSync(path, changed, changed);
    return path;
  };
  const tomorrow = journal("2030-01-11", NOW);
  const aheadWhenWritten = journal("2031-06-01", new Date("2031-06-01T08:00:00Z"));
  const changedLongAgo = journal("2031-07-01", new Date(NOW.getTime() - 9 * DAY));
  const changedLately = journal("2031-08-01", new Date(NOW.getTime() - 2 * DAY));
  const warnings: string[] = [];
  const sessions = join(home.dir, "sessions");
  removeExpiredRunJournals(sessions, NOW, (message) => warnings.push(message));
  expect([tomorrow, aheadWhenWritten, changedLongAgo, changedLately].map(existsSync)).toEqual([
    true,
    true,
    false,
    true,
  ]);
  expect(statSync(aheadWhenWritten).mtimeMs).toBe(NOW.getTime());
  expect(warnings).toEqual([
    `[webhook] run journal ${aheadWhenWritten} is dated after today (2030-01-10 by the gateway's clock, which was ahead when it was written): kept 7 days from now, then removed`,
  ]);
  // Said once: the next look finds it changed now, not in the future.
  removeExpiredRunJournals(sessions, new Date(NOW.getTime() + 7 * DAY), (message) => warnings.push(message));
  expect(warnings).toHaveLength(1);
  expect([tomorrow, aheadWhenWritten, changedLately].map(existsSync)).toEqual([true, true, false]);
  removeExpiredRunJournals(sessions, new Date(NOW.getTime() + 7 * DAY + 1), (message) =>
    warnings.push(message),
  );
  expect(existsSync(aheadWhenWritten)).toBe(false);
  // A journal a day ahead is today's tomorrow, dated as such: it goes 7 days past its date.
  expect(existsSync(tomorrow)).toBe(true);
});
