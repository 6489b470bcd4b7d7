import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/** A cron store reached through a chain of symbolic links, or a `cron` link to a file: what svc cron names. */

let home: TempHome;
afterEach(() => home.cleanup());

const create = ["cron", "create", "--name", "triage", "--schedule", "every 30s", "--prompt", "hi"];

describe("svc cron with its store behind a chain of symbolic links", () => {
  it("a jobs.json linked by way of another link into a directory that is not there names where it leads and the directory missing", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    mkdirSync(join(home.dir, "cron"));
    mkdirSync(join(home.dir, "links"));
    const unmounted = join(home.dir, "unmounted");
    symlinkSync(join(unmounted, "jobs.json"), join(home.dir, "links", "j2"));
    const jobs = join(home.dir, "cron", "jobs.json");
    symlinkSync("../links/j2", jobs);
    // Seen: "a symbolic link to …/links/j2, in a directory that is not there (missing or moved)", though
    // links/ is there.
    const said = `svc: ${jobs}: a symbolic link to ${unmounted}/jobs.json (by way of ${home.dir}/links/j2), whose directory ${unmounted} is not there (missing or moved) — the default profile's cron jobs are kept in the file it points to: restore that directory, or remove the link (svc makes the file)\n`;
    for (const args of [["cron", "list"], create]) {
      const refused = await svc(home, args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(said);
    }
    expect(existsSync(unmounted)).toBe(false);

    // Back: the job is written where the chain leads, the links kept.
    mkdirSync(unmounted);
    expect((await svc(home, create)).code).toBe(0);
    expect(readFileSync(join(unmounted, "jobs.json"), "utf8")).toContain('"name": "triage"');
    expect((await svc(home, ["cron", "list"])).stdout).toContain("triage");
  });

  it("a cron directory linked by way of another link to nothing names where it leads", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    const cron = join(home.dir, "cron");
    symlinkSync("l1", cron);
    symlinkSync("nowhere", join(home.dir, "l1"));
    const listed = await svc(home, ["cron", "list"]);
    expect(listed.code).toBe(2);
    // Seen: "a symbolic link to …/l1, which is not a directory (missing or moved)".
    expect(listed.stderr).toBe(
      `svc: ${cron}: a symbolic link to ${home.dir}/nowhere (by way of ${home.dir}/l1), which is not a directory (missing or moved) — the default profile's cron jobs cannot be kept there: restore the directory it points to, or remove the link (svc makes the directory)\n`,
    );
    expect(existsSync(join(home.dir, "nowhere"))).toBe(false);
  });

  it("a cron directory in a loop of links reached through a name on the way, or past the system's 40 links by a `..` in a link's text, is said to be a loop, not missing", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    const cron = join(home.dir, "cron");
    const loop = `svc: ${cron}: a symbolic link into a loop of links, or a chain of more than 40 — the default profile's cron jobs cannot be kept there: point the link at a directory, or remove the link (svc makes the directory)\n`;
    // `ln -s loopdir loopdir; ln -s loopdir/cron cron`. Seen: "a symbolic link to <home>/loopdir/cron, which is
    // not a directory (missing or moved) — …: restore the directory it points to".
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync("loopdir/cron", cron);
    expect(await svc(home, ["cron", "list"])).toMatchObject({ code: 2, stderr: loop });
    // cron -> links/l2 -> … -> l40 -> lnk/../../cron-data, lnk -> sub: 41 links as the system counts them
    // (ELOOP), cron-data there or not. Seen: "… (missing or moved) — …: restore the directory it points to", and
    // once made, the same.
    unlinkSync(cron);
    mkdirSync(join(home.dir, "links", "sub"), { recursive: true });
    symlinkSync("sub", join(home.dir, "links", "lnk"));
    symlinkSync("lnk/../../cron-data", join(home.dir, "links", "l40"));
    for (let i = 39; i >= 2; i--) symlinkSync(`l${i + 1}`, join(home.dir, "links", `l${i}`));
    symlinkSync("links/l2", cron);
    expect(await svc(home, ["cron", "list"])).toMatchObject({ code: 2, stderr: loop });
    mkdirSync(join(home.dir, "cron-data"));
    expect(await svc(home, create)).toMatchObject({ code: 2, stderr: loop });
    expect(existsSync(join(home.dir, "cron-data", "jobs.json"))).toBe(false);
  });

  it("a cron directory, or a profile's directory, linked to a file is said to be one, not missing", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    const notes = home.write("notes.txt", "a file, not a directory");
    const cron = join(home.dir, "cron");
    symlinkSync(notes, cron);
    const direct = await svc(home, ["cron", "list"]);
    expect(direct.code).toBe(2);
    // Seen: "a symbolic link to …/notes.txt, which is not a directory (missing or moved) — …: restore the
    // directory it points to", though the file is there.
    expect(direct.stderr).toBe(
      `svc: ${cron}: a symbolic link to ${notes}, which is a file, not a directory — the default profile's cron jobs cannot be kept there: point the link at a directory, or remove the link (svc makes the directory)\n`,
    );

    const work = join(home.dir, "profiles", "work");
    mkdirSync(join(home.dir, "profiles"));
    symlinkSync(join(home.dir, "l1"), work);
    symlinkSync(notes, join(home.dir, "l1"));
    const profiled = await svc(home, [...create, "--profile", "work"]);
    expect(profiled.code).toBe(2);
    expect(profiled.stderr).toBe(
      `svc: ${work}: a symbolic link to ${notes} (by way of ${home.dir}/l1), which is a file, not a directory — profile work's runs, cron jobs and MCP logins cannot use it: point the link at a directory, or remove the link\n`,
    );
    expect(readFileSync(notes, "utf8")).toBe("a file, not a directory");
  });

  it("a cron directory whose link goes up (`..`) after a name that is a link is judged, and written, where the system reads it", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    // `ln -s sub/deep lnk; ln -s lnk/../cron-data cron`: cron is sub/cron-data (lnk/.. is sub/), not a file
    // cron-data beside it, which the link's text collapsed names.
    mkdirSync(join(home.dir, "sub", "deep"), { recursive: true });
    symlinkSync("sub/deep", join(home.dir, "lnk"));
    home.write("cron-data", "a file the link does not lead to");
    const cron = join(home.dir, "cron");
    symlinkSync("lnk/../cron-data", cron);
    const listed = await svc(home, ["cron", "list"]);
    expect(listed.code).toBe(2);
    // Seen: "a symbolic link to <home>/cron-data, which is a file, not a directory — …: point the link at a directory".
    expect(listed.stderr).toBe(
      `svc: ${cron}: a symbolic link to ${home.dir}/sub/cron-data, which is not a directory (missing or moved) — the default profile's cron jobs cannot be kept there: restore the directory it points to, or remove the link (svc makes the directory)\n`,
    );
    mkdirSync(join(home.dir, "sub", "cron-data"));
    expect((await svc(home, create)).code).toBe(0);
    expect(readFileSync(join(home.dir, "sub", "cron-data", "jobs.json"), "utf8")).toContain(
      '"name": "triage"',
    );
  });

  it("a profile directory whose link goes up (`..`) after a name that is a link names where the system reads it", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    // profiles/work -> ../lnk/../work, lnk -> elsewhere/deep: profiles/work is elsewhere/work, not <home>/work.
    mkdirSync(join(home.dir, "elsewhere", "deep"), { recursive: true });
    symlinkSync("elsewhere/deep", join(home.dir, "lnk"));
    home.write("work", "a file the link does not lead to");
    mkdirSync(join(home.dir, "profiles"));
    const work = join(home.dir, "profiles", "work");
    symlinkSync("../lnk/../work", work);
    const refused = await svc(home, [...create, "--profile", "work"]);
    expect(refused.code).toBe(2);
    // Seen: "a symbolic link to <home>/work, which is a file, not a directory".
    expect(refused.stderr).toBe(
      `svc: ${work}: a symbolic link to ${home.dir}/elsewhere/work, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link\n`,
    );
    mkdirSync(join(home.dir, "elsewhere", "work"));
    expect((await svc(home, [...create, "--profile", "work"])).code).toBe(0);
    expect(readFileSync(join(home.dir, "elsewhere", "work", "cron", "jobs.json"), "utf8")).toContain(
      '"triage"',
    );
  });

  it("a jobs.json whose link goes up (`..`) after a name that is a link is written where the system reads it, not refused", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    // cron/jobs.json -> lnk/../store/jobs.json, cron/lnk -> ../else/deep: the file is else/store/jobs.json.
    mkdirSync(join(home.dir, "cron"));
    mkdirSync(join(home.dir, "else", "deep"), { recursive: true });
    mkdirSync(join(home.dir, "else", "store"));
    symlinkSync("../else/deep", join(home.dir, "cron", "lnk"));
    const jobs = join(home.dir, "cron", "jobs.json");
    symlinkSync("lnk/../store/jobs.json", jobs);
    // Seen: refused, "a symbolic link to <home>/cron/store/jobs.json, whose directory <home>/cron/store is not there".
    const created = await svc(home, create);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(readFileSync(join(home.dir, "else", "store", "jobs.json"), "utf8")).toContain('"name": "triage"');
    expect(existsSync(join(home.dir, "cron", "store"))).toBe(false);
    expect((await svc(home, ["cron", "list"])).stdout).toContain("triage");
  });
});
