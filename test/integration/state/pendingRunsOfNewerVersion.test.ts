import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { stateDir } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { importPendingRunsFile } from "../../../src/state/pendingRunsImport.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = 1_000;

function reporting() {
  const said: string[] = [];
  return {
    said,
    report: {
      onPendingUnreadable: (file: string, movedTo: string, err: unknown) =>
        said.push(`unreadable ${file} -> ${movedTo}: ${String(err)}`),
      onPendingEntriesKept: (_file: string, count: number, problem: string) =>
        said.push(`kept ${count}: ${problem}`),
    },
  };
}

async function importInto(file: string, report: ReturnType<typeof reporting>["report"]) {
  const store = new LocalStateStore({ dir: stateDir(home.dir), now: () => T0 });
  const taken = await importPendingRunsFile(file, new Set(), store, report);
  await store.close();
  const reopened = new LocalStateStore({ dir: stateDir(home.dir), now: () => T0 });
  const { runs } = reopened.recover();
  await reopened.close();
  return { taken, runs };
}

/**
 * Importing a newer version's webhook-pending-runs.json dropped what this version does not know without a
 * word: a run's unknown fields (stripped before the run was journaled) and the file's unknown top-level
 * keys (the file was removed once its runs were in the journal).
 */
it("keeps a run's fields of a newer version with the run it journals", async () => {
  home = tempHome();
  const file = join(home.dir, "webhook-pending-runs.json");
  home.write(
    "webhook-pending-runs.json",
    JSON.stringify({ version: 1, runs: [{ ...pendingRun("newer-1"), sandbox: { image: "x" } }] }),
  );
  const { said, report } = reporting();
  const { taken, runs } = await importInto(file, report);
  expect(said).toEqual([]);
  expect(taken).toEqual([{ ...pendingRun("newer-1"), sandbox: { image: "x" } }]);
  expect(runs).toEqual([{ ...pendingRun("newer-1"), sandbox: { image: "x" } }]);
  expect(existsSync(file)).toBe(false);
});

it("moves a file with a top-level key of a newer version aside, whole, and says so; none of its runs is taken", async () => {
  home = tempHome();
  const file = join(home.dir, "webhook-pending-runs.json");
  const text = JSON.stringify({ version: 1, runs: [pendingRun("newer-2")], groups: [{ key: "g" }] });
  home.write("webhook-pending-runs.json", text);
  const { said, report } = reporting();
  const { taken, runs } = await importInto(file, report);
  expect(taken).toEqual([]);
  expect(runs).toEqual([]);
  expect(existsSync(file)).toBe(false);
  const aside = readdirSync(home.dir).filter((name) =>
    name.startsWith("webhook-pending-runs.json.unreadable-"),
  );
  expect(aside).toHaveLength(1);
  expect(readFileSync(join(home.dir, aside[0] as string), "utf8")).toBe(text);
  expect(said).toEqual([
    `unreadable ${file} -> ${join(home.dir, aside[0] as string)}: SvcError: ${file}: holds "groups", a key this version of svc does not know (written by a newer version)`,
  ]);
});
