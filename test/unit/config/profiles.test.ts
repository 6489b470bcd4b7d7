import { afterEach, describe, expect, it } from "vitest";
import { profilesAmong } from "../../../src/config/paths.js";
import { existingProfiles } from "../../../src/io/profiles.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("which profiles exist", () => {
  it("the default profile comes first, then valid names sorted; invalid names and a 'default' dir are left out", () => {
    expect(profilesAmong([])).toEqual(["default"]);
    expect(profilesAmong(["work", "default", ".hidden", "a.b", "home", "work"])).toEqual([
      "default",
      "home",
      "work",
    ]);
  });

  it("reads the directories under <home>/profiles/, and a home without profiles/ has only the default", () => {
    home = tempHome();
    expect(existingProfiles(home.dir)).toEqual(["default"]);
    home.write("profiles/work/cron/jobs.json", "{}");
    home.write("profiles/home/.env", "");
    home.write("profiles/notes.txt", "a file, not a profile");
    expect(existingProfiles(home.dir)).toEqual(["default", "home", "work"]);
  });
});
