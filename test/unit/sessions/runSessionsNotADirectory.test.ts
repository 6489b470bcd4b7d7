import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { sessionWarnings } from "../../helpers/sessionWarnings.js";

let home: TempHome;
afterEach(() => home?.cleanup());

describe("run sessions whose directory cannot be made (a file in the place of sessions/)", () => {
  it("are reported once, saying what is in the way and what to do, not once per run with a bare ENOTDIR", async () => {
    home = tempHome();
    // Seen: one '[webhook] run session not recorded {"err":"Error: ENOTDIR: not a directory, mkdir …"}' per run.
    writeFileSync(join(home.dir, "sessions"), "x");
    const warnings = await sessionWarnings(home.dir, "default", ["d-1", "d-2", "d-3"]);
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
    const warnings = await sessionWarnings(home.dir, "home");
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
    const warnings = await sessionWarnings(home.dir);
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${sessions}: ${sessions} is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or remove the link (the gateway makes the directory); said once until a run is recorded again`,
      ],
    ]);
  });
});
