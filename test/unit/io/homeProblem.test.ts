import { chmodSync, mkdirSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { loadConfig } from "../../../src/config/load.js";
import { dataDirsProblem } from "../../../src/io/dataDirsWritable.js";
import {
  assertHomeWritable,
  gatewayDirProblem,
  homeNotWritable,
  homeProblem,
} from "../../../src/io/homeWritable.js";
import { unusableProfileEntries } from "../../../src/io/profiles.js";
import { resolveScript } from "../../../src/io/scripts.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

/**
 * An SVC_HOME that is a file, or a symbolic link to a directory that is gone (a dotfiles checkout moved
 * away), was refused by the gateway as 'cannot be written (ENOENT/EEXIST: ...) — fix its owner or
 * permissions', which neither is about, and svc config check said ok.
 */
describe("an SVC_HOME that cannot be the data directory", () => {
  it("a file in its place is never svc's to move: SVC_HOME is what to set", async () => {
    dir = tempHome();
    const home = dir.write("svc-home", "");
    const problem = `${home}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory`;
    expect(homeProblem(home)).toBe(problem);
    expect(() => assertHomeWritable(home)).toThrow(problem);
    // Alone: not followed by the store and the cron jobs failing under it (ENOTDIR) as a second problem.
    const report = await checkConfig({ home, env: {} });
    expect(report.problems).toEqual([problem]);
    expect(report.warnings).toEqual([]);
  });

  it("a symbolic link to nothing names its target", async () => {
    dir = tempHome();
    const home = join(dir.dir, "link");
    symlinkSync(join(dir.dir, "moved-away"), home);
    const problem = `${home}: SVC_HOME is a symbolic link to ${join(dir.dir, "moved-away")}, which does not exist — create that directory, or set SVC_HOME to another one`;
    expect(() => assertHomeWritable(home)).toThrow(problem);
    expect((await checkConfig({ home, env: {} })).problems).toContain(problem);
  });

  // Seen: below a link to nothing, no problem (the start then failed on mkdir's ENOENT); below a file, "SVC_HOME
  // cannot be written (ENOTDIR …) — … fix its owner or permissions".
  it("one below a link to nothing, a link to a file or a file names that name", () => {
    dir = tempHome();
    const file = dir.write("f1", "");
    const made = (at: string, is: string) =>
      `${join(at, "a", ".svc")}: SVC_HOME cannot be made: ${at}, on the way to it, is ${is}, or set SVC_HOME to another one`;
    // Two links to nothing, the last named after where they lead.
    symlinkSync(join(dir.dir, "nowhere"), join(dir.dir, "l1"));
    symlinkSync("l1", join(dir.dir, "dang"));
    expect(homeProblem(join(dir.dir, "dang", "a", ".svc"))).toBe(
      made(
        join(dir.dir, "dang"),
        `a symbolic link to ${join(dir.dir, "nowhere")} (by way of ${join(dir.dir, "l1")}), which does not exist — create that directory`,
      ),
    );
    // A file on the way is no more svc's to move than a device: SVC_HOME is what to set.
    expect(homeProblem(join(file, "a", ".svc"))).toBe(
      `${join(file, "a", ".svc")}: SVC_HOME cannot be made: ${file}, on the way to it, is a file, not a directory — set SVC_HOME to another one`,
    );
    symlinkSync("f1", join(dir.dir, "lf"));
    expect(homeProblem(join(dir.dir, "lf", "a", ".svc"))).toBe(
      made(
        join(dir.dir, "lf"),
        `a symbolic link to ${file}, which is a file, not a directory — point the link at a directory`,
      ),
    );
    // Below a directory reached through a link: missing, made at start.
    mkdirSync(join(dir.dir, "real"));
    symlinkSync("real", join(dir.dir, "to-real"));
    expect(homeProblem(join(dir.dir, "to-real", "a", ".svc"))).toBeUndefined();
  });

  // Seen: "… is a symbolic link to <dir>/f1/x, which does not exist — create that directory", which cannot be.
  it("one below a link, or a link itself, whose target lies below a file names that file: no directory can be made there", () => {
    dir = tempHome();
    const file = dir.write("f1", "");
    const dang = join(dir.dir, "dang2");
    symlinkSync("f1/x", dang);
    const below = `a symbolic link to ${join(file, "x")}, which cannot be made: ${file}, on the way to it, is a file, not a directory — point the link at a directory`;
    expect(homeProblem(join(dang, ".svc"))).toBe(
      `${join(dang, ".svc")}: SVC_HOME cannot be made: ${dang}, on the way to it, is ${below}, or set SVC_HOME to another one`,
    );
    expect(homeProblem(dang)).toBe(`${dang}: SVC_HOME is ${below}, or set SVC_HOME to another one`);
    // By way of a link to the file.
    symlinkSync("f1", join(dir.dir, "lf"));
    symlinkSync("lf/x", join(dir.dir, "dang3"));
    expect(homeProblem(join(dir.dir, "dang3", ".svc"))).toBe(
      `${join(dir.dir, "dang3", ".svc")}: SVC_HOME cannot be made: ${join(dir.dir, "dang3")}, on the way to it, is a symbolic link to ${join(dir.dir, "lf", "x")}, which cannot be made: ${join(dir.dir, "lf")}, on the way to it, is a symbolic link to ${file}, which is a file, not a directory — point the link at a directory, or set SVC_HOME to another one`,
    );
    // A logs link so (seen: "cannot be written (ENOTDIR …) — … fix its owner or permissions").
    const home = join(dir.dir, "home");
    mkdirSync(home);
    symlinkSync("../f1/x", join(home, "logs"));
    expect(gatewayDirProblem(home)).toBe(
      `${join(home, "logs")}: a symbolic link to ${join(file, "x")}, which cannot be made: ${file}, on the way to it, is a file, not a directory — the gateway keeps its log (gateway.log) there: point the link at a directory, or remove the link (the gateway makes the directory)`,
    );
  });

  it("a missing one (made at start) and a writable directory are fine", () => {
    dir = tempHome();
    expect(homeProblem(join(dir.dir, "not-yet", "home"))).toBeUndefined();
    mkdirSync(join(dir.dir, "home"));
    chmodSync(join(dir.dir, "home"), 0o700);
    expect(homeProblem(join(dir.dir, "home"))).toBeUndefined();
  });
});

// Seen: each called "a symbolic link into a loop of links", though no link in the chain leads back.
describe("a chain of more than 40 links with no loop in it (ELOOP, as for a loop)", () => {
  /** `<dir>/l0 -> l1 -> … -> l40 -> <dir>/real`: 41 links, one more than the system follows. */
  function longChain(): string {
    mkdirSync(join(dir.dir, "real"));
    symlinkSync(join(dir.dir, "real"), join(dir.dir, "l40"));
    for (let i = 39; i >= 0; i--) symlinkSync(`l${i + 1}`, join(dir.dir, `l${i}`));
    return join(dir.dir, "l0");
  }

  it("is said to be a loop of links, or a chain of more than 40: SVC_HOME, one below it, logs/, sessions/, a profile", () => {
    dir = tempHome();
    const l0 = longChain();
    expect(homeProblem(l0)).toBe(
      `${l0}: SVC_HOME is a symbolic link into a loop of links, or a chain of more than 40 — point the link at a directory, or set SVC_HOME to another one`,
    );
    expect(homeProblem(join(l0, ".svc"))).toBe(
      `${join(l0, ".svc")}: SVC_HOME is in a loop of links, or a chain of more than 40, on the way to it (${l0}) — point that link at a directory, or set SVC_HOME to another one`,
    );
    const home = join(dir.dir, "home");
    mkdirSync(home);
    symlinkSync(l0, join(home, "logs"));
    expect(gatewayDirProblem(home)).toBe(
      `${join(home, "logs")}: a symbolic link into a loop of links, or a chain of more than 40 — the gateway keeps its log (gateway.log) there: point the link at a directory, or remove the link (the gateway makes the directory)`,
    );
    const other = join(dir.dir, "other");
    mkdirSync(other);
    symlinkSync(l0, join(other, "sessions"));
    expect(dataDirsProblem(other)).toBe(
      `${join(other, "sessions")}: a symbolic link into a loop of links, or a chain of more than 40 — the gateway keeps its run sessions there: point the link at a directory, or remove the link`,
    );
    mkdirSync(join(other, "profiles"));
    symlinkSync(l0, join(other, "profiles", "work"));
    expect(unusableProfileEntries(other)).toEqual([
      `${join(other, "profiles", "work")}: a symbolic link into a loop of links, or a chain of more than 40 — profile work's runs, cron jobs and MCP logins cannot use it: point the link at a directory, or remove the link`,
    ]);
  });

  // Seen: "is a symbolic link into a loop of links (no file at its end)" and "the scripts directory is a symbolic link
  // into a loop of links", though no link in the chain leads back.
  it("a config.yaml, a .env or a route's scripts directory linked into it is said so too", async () => {
    dir = tempHome();
    const l0 = longChain();
    const home = join(dir.dir, "home");
    mkdirSync(home);
    const into = "is a symbolic link into a loop of links, or a chain of more than 40 (no file at its end)";
    symlinkSync(l0, join(home, "config.yaml"));
    expect(() => loadConfig({ home, env: {} })).toThrow(`${join(home, "config.yaml")}: ${into} — `);
    unlinkSync(join(home, "config.yaml"));
    symlinkSync(l0, join(home, ".env"));
    expect(() => loadConfig({ home, env: {} })).toThrow(`${join(home, ".env")}: ${into} — `);
    symlinkSync(l0, join(home, "scripts"));
    expect(await resolveScript(join(home, "scripts"), "x.sh")).toEqual({
      why: "script not found: the scripts directory is a symbolic link into a loop of links, or a chain of more than 40",
    });
  });
});

describe("the advice of an SVC_HOME that refuses a write", () => {
  const refused = (code: string) => Object.assign(new Error(`${code}: refused, open '/srv/svc/x'`), { code });
  it("names the cause: a read-only file system, a full disk, else its owner or permissions", () => {
    expect(homeNotWritable("/srv/svc", refused("EROFS")).message).toContain(
      "stores there: it is on a read-only file system: remount it read-write, or set SVC_HOME",
    );
    expect(homeNotWritable("/srv/svc", refused("ENOSPC")).message).toContain(
      "stores there: free disk space (or raise the user's quota), or set SVC_HOME",
    );
    expect(homeNotWritable("/srv/svc", refused("EACCES")).message).toContain(
      "stores there: fix its owner or permissions (or free disk space), or set SVC_HOME",
    );
  });
});
