import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createShutdownSaver } from "../../../src/actors/pendingRuns.js";
import type { QueuedRun } from "../../../src/actors/runs.js";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const run = (id: string, prompt = `prompt ${id}`): QueuedRun => ({
  routeName: "pr",
  route: {} as QueuedRun["route"],
  profile: "default",
  event: "push",
  deliveryId: id,
  prompt,
  extra: {},
  receivedAt: 0,
});

describe("saving the unfinished runs during a stop", () => {
  it("a checkpoint that adds no run to the last save is skipped (a full queue takes seconds to write); a new or changed run is written; the final save always is", () => {
    home = tempHome();
    const file = join(home.dir, "webhook-pending-runs.json");
    const save = createShutdownSaver(readPendingRuns, writePendingRuns, file);
    const saved = () => readPendingRuns(file).runs.map((r) => r.deliveryId);

    save([run("a"), run("b"), run("c")]);
    const first = statSync(file).ino;
    // `a` finished meanwhile: nothing new, the file (a superset) stays.
    save([run("b"), run("c")], { onlyWhenNew: true });
    expect(statSync(file).ino).toBe(first);
    expect(saved()).toEqual(["a", "b", "c"]);
    // A run accepted meanwhile, or one whose prompt changed (a coalescing group that took one more event).
    save([run("b"), run("c"), run("d")], { onlyWhenNew: true });
    expect(saved()).toEqual(["b", "c", "d"]);
    save([run("b"), run("c", "[Coalesced ...]\n\nprompt c"), run("d")], { onlyWhenNew: true });
    expect(readPendingRuns(file).runs.find((r) => r.deliveryId === "c")?.prompt).toContain("Coalesced");
    // The final save writes what is left, here nothing: the file goes.
    save([]);
    expect(existsSync(file)).toBe(false);
  });
});
