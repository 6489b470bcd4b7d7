import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findFirstSkill } from "../../../src/actors/agent/skills.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";

/**
 * A route's skill is read at each run. A SKILL.md that is a named pipe was read as a file: the read waited
 * for a writer on one of the few threads every file operation of the gateway shares, so each run of the
 * route held one for ever (and four such runs every journal write and store read). It is refused as not a
 * regular file instead, named as a skill that cannot be read, and the next listed skill is loaded.
 */

let home: TempHome;
let writer: ChildProcess | undefined;
afterEach(() => {
  if (writer?.pid !== undefined) signalProcess(writer.pid, "SIGKILL");
  writer = undefined;
  home.cleanup();
});

describe("a SKILL.md that is a named pipe", () => {
  it("is not read: named as unreadable, and the next listed skill is loaded", async () => {
    home = tempHome();
    home.write("skills/after/SKILL.md", "AFTER");
    const pipe = join(home.dir, "skills", "piped", "SKILL.md");
    home.write("skills/piped/.keep", "");
    execFileSync("mkfifo", [pipe]);
    // Feeds the pipe until the test ends, so a read that waits on it (the old behaviour) ends with this text.
    writer = spawn("sh", ["-c", `trap '' PIPE; while :; do printf FED > '${pipe}'; sleep 0.2; done`], {
      stdio: "ignore",
    });

    const found = await findFirstSkill(join(home.dir, "skills"), ["piped", "after"]);
    expect(found.skill).toEqual({ name: "after", text: "AFTER" });
    expect(found.unreadable).toEqual([
      {
        name: "piped",
        why: `${pipe} cannot be read (it is not a regular file: a named pipe) — write the skill's instructions in a file there`,
      },
    ]);
  });
});
