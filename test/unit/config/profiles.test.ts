import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { profileNameProblem, profilesAmong, svcPaths } from "../../../src/config/paths.js";
import { existingProfiles, unusableProfileEntries } from "../../../src/io/profiles.js";
import { parseSubscription } from "../../../src/io/stores/subscriptions.js";
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

  it("counts a symbolic link to a directory as a profile (its cron jobs are scheduled), not a link to nothing", () => {
    home = tempHome();
    home.write("elsewhere/work/cron/jobs.json", "{}");
    home.write("profiles/home/.env", "");
    symlinkSync(join(home.dir, "elsewhere/work"), join(home.dir, "profiles/work"));
    symlinkSync(join(home.dir, "gone"), join(home.dir, "profiles/broken"));
    symlinkSync(join(home.dir, "profiles/home/.env"), join(home.dir, "profiles/afile"));
    expect(existingProfiles(home.dir)).toEqual(["default", "home", "work"]);
  });

  it("names a profile entry that is a link to nothing or a file, and nothing else", () => {
    home = tempHome();
    expect(unusableProfileEntries(home.dir)).toEqual([]);
    home.write("elsewhere/ok/.env", "");
    home.write("profiles/home/.env", "");
    home.write("profiles/notes.txt", "not a profile name: left alone");
    const file = home.write("profiles/plain", "a file where a profile's directory goes");
    symlinkSync(join(home.dir, "elsewhere/ok"), join(home.dir, "profiles/ok"));
    symlinkSync(join(home.dir, "moved"), join(home.dir, "profiles/work"));
    expect(unusableProfileEntries(home.dir)).toEqual([
      `${file} is not a directory — profile plain's runs, cron jobs and MCP logins cannot use it: move the file away (a profile is the directory ${file}/)`,
      `${home.dir}/profiles/work: a symbolic link to ${home.dir}/moved, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link`,
    ]);
  });
});

describe("profiles/ itself a file or a link to nothing", () => {
  it("is named, with what to do, as an entry under it would be (the cron scheduler's line says only that it cannot list it)", () => {
    home = tempHome();
    const profiles = home.write("profiles", "a file where the profiles' directory goes");
    const cannot =
      "the named profiles' runs, cron jobs and MCP logins cannot use it (every named profile's directory is under it)";
    expect(unusableProfileEntries(home.dir)).toEqual([
      `${profiles} is not a directory — ${cannot}: move the file away`,
    ]);
    rmSync(profiles);
    symlinkSync(join(home.dir, "moved"), profiles);
    expect(unusableProfileEntries(home.dir)).toEqual([
      `${profiles}: a symbolic link to ${home.dir}/moved, which is not a directory (missing or moved) — ${cannot}: restore the directory it points to, or remove the link`,
    ]);
  });
});

describe("a name that cannot be a profile is refused with the whole rule, or its length", () => {
  const rule = 'profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit)';
  const long = "a".repeat(65);

  it("names the start rule for -x and _x, and the length for 65 letters, which use only allowed characters", () => {
    expect(profileNameProblem("work")).toBeUndefined();
    expect(profileNameProblem("a".repeat(64))).toBeUndefined();
    expect(profileNameProblem("-x")).toBe(rule);
    expect(profileNameProblem("_x")).toBe(rule);
    expect(profileNameProblem(long)).toBe("65 characters long — a profile name has at most 64: shorten it");
    expect(() => svcPaths("/h", "-x")).toThrow(`profile name "-x" is not valid: ${rule}`);
    expect(() => svcPaths("/h", long)).toThrow("is not valid: 65 characters long");
  });

  it("says the same for a subscription record's profile (and a config.yaml route's, same schema)", () => {
    const parsed = parseSubscription("subs.json", "r", { secret: "s", profile: long });
    expect(parsed).toEqual({
      ok: false,
      problems: ["subs.json: r.profile: 65 characters long — a profile name has at most 64: shorten it"],
    });
  });
});
