import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createProfileResources } from "../../../src/gateway/profileResources.js";
import type { Logger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("run sessions whose directory cannot be made (a file in the place of sessions/)", () => {
  it("are reported once, saying what is in the way and what to do, not once per run with a bare ENOTDIR", async () => {
    home = tempHome();
    // Seen: one '[webhook] run session not recorded {"err":"Error: ENOTDIR: not a directory, mkdir …"}' per run.
    writeFileSync(join(home.dir, "sessions"), "x");
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const resources = createProfileResources(home.dir, logger, Date.now);
    for (const id of ["d-1", "d-2", "d-3"]) {
      resources.runJournal("default").record({ route: "r", deliveryId: id, prompt: "p", reply: "done" });
      await turn();
    }
    await resources.closeJournals();
    const sessions = join(home.dir, "sessions");
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${sessions}: ${sessions} is a file, not a directory — move that file away (the gateway makes the directory); said once until a run is recorded again`,
      ],
    ]);
  });

  it("names a file further up, in the place of profiles/, for a named profile's runs", async () => {
    home = tempHome();
    // Seen: '[webhook] run session not recorded {"err":"Error: ENOTDIR: not a directory, mkdir …/profiles/home/sessions/webhook-runs"}'.
    const profiles = home.write("profiles", "a file where the profiles' directory goes");
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const resources = createProfileResources(home.dir, logger, Date.now);
    resources.runJournal("home").record({ route: "r", deliveryId: "d-1", prompt: "p", reply: "done" });
    await resources.closeJournals();
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${profiles}/home/sessions: ${profiles} is a file, not a directory — move that file away (the gateway makes the directory); said once until a run is recorded again`,
      ],
    ]);
  });

  // Seen: "… <h>/sessions is a file, not a directory — move that file away" of sessions -> /dev/null, no file to move.
  it("names a link to a device in sessions/'s place as the link to change", async () => {
    home = tempHome();
    const sessions = join(home.dir, "sessions");
    symlinkSync("/dev/null", sessions);
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const resources = createProfileResources(home.dir, logger, Date.now);
    resources.runJournal("default").record({ route: "r", deliveryId: "d-1", prompt: "p", reply: "done" });
    await resources.closeJournals();
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${sessions}: ${sessions} is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or remove the link (the gateway makes the directory); said once until a run is recorded again`,
      ],
    ]);
  });
});
