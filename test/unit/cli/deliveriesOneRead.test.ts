import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { readPage } from "../../../src/cli/webhook/deliveries.js";
import { HISTORY_FILE, historyLine } from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * docs/cli.md: `svc webhook deliveries` gives the next page's note from the rows it lists, told apart by the
 * history line that made them. The gateway appends to the history while the command reads it: every read
 * of one listing is of the same lines, so a line appended between them shifts no row.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const base = Date.now() - 3_600_000 - (Date.now() % 1000);
const at = (ms: number) => new Date(base + ms).toISOString();

/** A history of 20 requests two seconds apart, and a hook that appends a newer one at each file opened. */
function busyHistory(): { dir: string; opened: (name: string) => void } {
  home = tempHome();
  const request = (id: string, time: string) =>
    historyLine({ kind: "request", id, at: time, route: "a", status: 202, outcome: "accepted" });
  const lines = Array.from({ length: 20 }, (_, i) => `${request(`d${i}`, at(i * 2000))}\n`);
  home.write("deliveries/history.jsonl", lines.join(""), 0o600);
  const dir = join(home.dir, "deliveries");
  let live = 0;
  const opened = (name: string) => {
    if (name === HISTORY_FILE)
      appendFileSync(join(dir, HISTORY_FILE), `${request(`live${live++}`, new Date().toISOString())}\n`);
  };
  return { dir, opened };
}

const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id);

it("the whole history, appended to while it is read: the last row shown is its ID's newest, and no note is given", () => {
  const { dir, opened } = busyHistory();
  const { readWhole, next } = readPage(dir, 3, 0, undefined, undefined, {}, { opened });
  expect(ids(readWhole)).toEqual(["d19", "d18", "d17", "d16"]);
  expect(next).toBeUndefined();
  // Past a --skip too (the row appended at the first read is the newest now): --before d16 lists the next page.
  const skipped = readPage(dir, 3, 2, undefined, undefined, {}, { opened });
  expect(ids(skipped.readWhole)).toEqual(["live0", "d19", "d18", "d17", "d16", "d15"]);
  expect(skipped.next).toBeUndefined();
});

it("a route filter, appended to while it is read: no row is taken for another, and no note is given", () => {
  const { dir, opened } = busyHistory();
  const { readWhole, next } = readPage(dir, 3, 0, { route: "a" }, "a", {}, { opened });
  expect(ids(readWhole)).toEqual(["d19", "d18", "d17", "d16"]);
  expect(next).toBeUndefined();
});
