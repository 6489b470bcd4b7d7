import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { homeProblem } from "../../../src/io/homeWritable.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import {
  AS_ROOT,
  OTHER_USER,
  ownedTempDirs,
  svcAsUser,
  svcAsUserOneProcess,
} from "../../helpers/svcAsUser.js";
import { svc, svcOneProcess } from "./svc.js";

/**
 * With SVC_HOME unset the data directory is `~/.svc`, below HOME: a service account's HOME is often `/dev/null` or
 * `/nonexistent`. Seen: "/dev/null/.svc: SVC_HOME cannot be made: /dev/null, on the way to it, is a file, not a
 * directory — move that file away, or set SVC_HOME to another one", advice to move /dev/null, about an SVC_HOME
 * nobody set.
 */

let home: TempHome | undefined;
afterEach(() => home?.cleanup());
const ownDir = ownedTempDirs();
svcAsUserOneProcess();
svcOneProcess();

/** SVC_HOME unset (an empty one counts as unset), HOME as given. */
const fromHome = (dir: string) => ({ HOME: dir, SVC_HOME: "" });

describe("a HOME that cannot hold ~/.svc is named as HOME", { timeout: 60_000 }, () => {
  it("HOME=/dev/null: config check, gateway run and cron create name HOME as a device, and never advise moving it", async () => {
    home = tempHome();
    const problem =
      "HOME is /dev/null (a device, not a directory), so svc has no home of its own: set SVC_HOME to a directory this user can write";
    const env = fromHome("/dev/null");
    // Each outside the worker (timeoutMs): os.homedir() reads the process's own HOME, not a test's process.env.
    const check = await svc(home, ["config", "check"], { env, timeoutMs: 20_000 });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(problem);
    expect(check.stderr).not.toContain("move that file away");
    const run = await svc(home, ["gateway", "run", "--port", "0"], { env, timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`svc: ${problem}\n`);
    const create = await svc(home, ["cron", "create", "--name", "a", "--schedule", "1h", "--prompt", "x"], {
      env,
      timeoutMs: 20_000,
    });
    expect(create.code).toBe(1);
    expect(create.stderr.startsWith(`svc: ${problem} (`)).toBe(true);
  });

  it("a HOME below a device, a named pipe as HOME and a HOME linked to /dev/null say what each is", () => {
    home = tempHome();
    const fifo = join(home.dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const linked = join(home.dir, "devlink");
    symlinkSync("/dev/null", linked);
    const tail = "so svc has no home of its own";
    const own = "set SVC_HOME to a directory this user can write";
    expect(homeProblem("/dev/null/x/.svc", fromHome("/dev/null/x"))).toBe(
      `HOME is /dev/null/x, and /dev/null, on the way to it, is a device, not a directory, ${tail}: ${own}`,
    );
    expect(homeProblem(join(fifo, ".svc"), fromHome(fifo))).toBe(
      `HOME is ${fifo} (a named pipe, not a directory), ${tail}: ${own}`,
    );
    expect(homeProblem(join(linked, ".svc"), fromHome(linked))).toBe(
      `HOME is ${linked} (a symbolic link to /dev/null, which is a device, not a directory), ${tail}: point the link at a directory, or ${own}`,
    );
  });

  it("an SVC_HOME set to a device, or below one or a link to one, is never told to move it", () => {
    home = tempHome();
    const fifo = join(home.dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const linked = join(home.dir, "devlink");
    symlinkSync("/dev/null", linked);
    const set = { SVC_HOME: "set", HOME: home.dir };
    expect(homeProblem("/dev/null", set)).toBe(
      "/dev/null: SVC_HOME is a device, not a directory — set SVC_HOME to a directory",
    );
    expect(homeProblem(fifo, set)).toBe(
      `${fifo}: SVC_HOME is a named pipe, not a directory — set SVC_HOME to a directory`,
    );
    expect(homeProblem("/dev/null/.svc", set)).toBe(
      "/dev/null/.svc: SVC_HOME cannot be made: /dev/null, on the way to it, is a device, not a directory — set SVC_HOME to another one",
    );
    expect(homeProblem(join(linked, ".svc"), set)).toBe(
      `${join(linked, ".svc")}: SVC_HOME cannot be made: ${linked}, on the way to it, is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or set SVC_HOME to another one`,
    );
  });

  // Seen: "/nonexistent/.svc: SVC_HOME does not exist and cannot be made: … (mkdir -p /nonexistent/.svc && chown …)".
  it.runIf(AS_ROOT)("a HOME that is not there (/nonexistent) is named as HOME, not to be made", async () => {
    const base = ownDir();
    const closed = join(base, "root-owned");
    mkdirSync(closed);
    const gone = join(closed, "nonexistent");
    const check = await svcAsUser(base, ["config", "check"], undefined, fromHome(gone));
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `HOME is ${gone}, which does not exist, and this user (nobody) may not create directories in ${closed} (EACCES), so svc has no home of its own: set SVC_HOME to a directory this user can write`,
    );
    expect(check.stderr).not.toContain("mkdir -p");
  });

  // Seen: "/.svc: SVC_HOME does not exist and cannot be made: this user (nobody) may not create directories in / (EACCES)
  // — create it as a user who can … (mkdir -p /.svc && chown nobody /.svc)", about an SVC_HOME nobody set.
  it.runIf(AS_ROOT)(
    "a HOME that is there but this user cannot write in (/, a /var/www of root's) is named as HOME",
    async () => {
      const base = ownDir();
      const www = join(base, "www");
      mkdirSync(www);
      for (const dir of ["/", www]) {
        const problem = `HOME is ${dir}, where this user (nobody) may not create directories (EACCES), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
        const check = await svcAsUser(base, ["config", "check"], undefined, fromHome(dir));
        expect(check.code).toBe(1);
        expect(check.stderr).toContain(problem);
        expect(check.stderr).not.toContain("SVC_HOME does not exist");
        const run = await svcAsUser(base, ["gateway", "run", "--port", "0"], 10_000, fromHome(dir));
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(`svc: ${problem}\n`);
      }
    },
  );

  // Seen (sudo -u nobody keeping HOME): "<dir>/me/.svc: SVC_HOME cannot be written (EACCES …) — … fix its owner or
  // permissions …", about an SVC_HOME nobody set, whose fix would hand uid 1234's tokens, sessions and journal over.
  it.runIf(AS_ROOT)(
    "a ~/.svc there that this user cannot write is named under HOME, and given away only when root's in its own HOME",
    async () => {
      const base = ownDir();
      const me = join(base, "me");
      const dotSvc = join(me, ".svc");
      mkdirSync(dotSvc, { recursive: true, mode: 0o700 });
      chownSync(me, 1234, 1234);
      chownSync(dotSvc, 1234, 1234);
      chmodSync(me, 0o755);
      const problem = `HOME is ${me}, and ${dotSvc} (owned by uid 1234) cannot be written by this user (nobody, uid 65534), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
      const check = await svcAsUser(base, ["config", "check"], undefined, fromHome(me));
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(problem);
      expect(check.stderr).not.toContain("SVC_HOME cannot be written");
      expect(check.stderr).not.toContain("chown");
      const run = await svcAsUser(base, ["gateway", "run", "--port", "0"], 10_000, fromHome(me));
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`svc: ${problem}\n`);
      // root's .svc in this user's own HOME: a root run's leftover, to be given to this user.
      const own = join(base, "own");
      const rootSvc = join(own, ".svc");
      mkdirSync(rootSvc, { recursive: true, mode: 0o700 });
      chownSync(own, OTHER_USER, OTHER_USER);
      const given = `HOME is ${own}, and ${rootSvc} (owned by uid 0) cannot be written by this user (nobody, uid 65534), so svc has no home of its own: give it to this user (chown -R nobody ${rootSvc}, as root: a root run's leftover), or set SVC_HOME to a directory this user can write`;
      const left = await svcAsUser(base, ["gateway", "run", "--port", "0"], 10_000, fromHome(own));
      expect(left.code).toBe(1);
      expect(left.stderr).toBe(`svc: ${given}\n`);
    },
  );

  // Seen (sudo -u nobody keeping HOME): svc cron list said "HOME is <dir>/me, and <dir>/me/.svc (owned by uid 1234)
  // cannot be written …, so svc has no home of its own: set SVC_HOME … (<dir>/me/.svc/cron/jobs.json: cannot be read
  // … give it to this user: chown -R nobody <dir>/me/.svc (as root))", offering uid 1234's home away after all.
  it.runIf(AS_ROOT)(
    "the stores of another user's ~/.svc are never offered to be given away (cron list, webhook list)",
    async () => {
      const base = ownDir();
      const me = join(base, "me");
      const dotSvc = join(me, ".svc");
      mkdirSync(join(dotSvc, "cron"), { recursive: true, mode: 0o700 });
      writeFileSync(join(dotSvc, "cron", "jobs.json"), "{}", { mode: 0o600 });
      writeFileSync(join(dotSvc, "config.yaml"), "webhooks: {}\n", { mode: 0o600 });
      for (const path of [
        me,
        dotSvc,
        join(dotSvc, "cron"),
        join(dotSvc, "cron", "jobs.json"),
        join(dotSvc, "config.yaml"),
      ])
        chownSync(path, 1234, 1234);
      chmodSync(me, 0o755);
      chmodSync(dotSvc, 0o700);
      const problem = `HOME is ${me}, and ${dotSvc} (owned by uid 1234) cannot be written by this user (nobody, uid 65534), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
      for (const args of [
        ["cron", "list"],
        ["webhook", "list"],
      ]) {
        const listed = await svcAsUser(base, args, 20_000, fromHome(me));
        expect(listed.code).toBe(1);
        expect(listed.stderr).toContain(problem);
        expect(listed.stderr).not.toContain("chown");
        expect(listed.stderr).toContain(
          "cannot be looked into by this user (nobody, uid 65534): it is another user's, not this user's to take: set SVC_HOME",
        );
      }
    },
  );

  // Seen (sudo keeping HOME=<dir>/me, uid 1234's, where a root run left .svc): the start said "… (owned by uid 0) …
  // so svc has no home of its own: set SVC_HOME …", and svc cron list's note "give it to this user: chown -R nobody
  // <dir>/me/.svc (as root)", offering root's .svc in uid 1234's HOME away.
  it.runIf(AS_ROOT)(
    "root's ~/.svc is given to this user in its own HOME only, never in another user's (cron list)",
    async () => {
      const base = ownDir();
      const me = join(base, "me");
      const dotSvc = join(me, ".svc");
      mkdirSync(join(dotSvc, "cron"), { recursive: true, mode: 0o700 });
      writeFileSync(join(dotSvc, "cron", "jobs.json"), "{}", { mode: 0o600 });
      chownSync(me, 1234, 1234);
      chmodSync(me, 0o755);
      chmodSync(dotSvc, 0o700);
      const problem = `HOME is ${me}, and ${dotSvc} (owned by uid 0) cannot be written by this user (nobody, uid 65534), so svc has no home of its own: set SVC_HOME to a directory this user can write`;
      const others = await svcAsUser(base, ["cron", "list"], 20_000, fromHome(me));
      expect(others.code).toBe(1);
      expect(others.stderr).toContain(problem);
      expect(others.stderr).toContain(
        "cannot be looked into by this user (nobody, uid 65534): it is another user's, not this user's to take: set SVC_HOME",
      );
      expect(others.stderr).not.toContain("chown");
      // The same HOME this user's own: root's .svc there is a root run's leftover, given.
      chownSync(me, OTHER_USER, OTHER_USER);
      const own = await svcAsUser(base, ["cron", "list"], 20_000, fromHome(me));
      expect(own.code).toBe(1);
      expect(own.stderr).toContain(`give it to this user: chown -R nobody ${dotSvc} (as root)`);
      expect(own.stderr).not.toContain("another user's");
    },
  );
});
