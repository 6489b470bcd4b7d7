import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AS_ROOT,
  gatewayRunAsUser,
  OTHER_USER,
  ownedTempDirs,
  svcAsUser,
  svcAsUserOneProcess,
} from "../../helpers/svcAsUser.js";

/**
 * A `sessions/` (or any data directory) made by root — `sudo svc gateway run` once, a volume restored as
 * root — while svc runs as another user: the gateway started, listened, and then failed each run's record
 * with its own EACCES. The start is now refused once, naming each directory and the one `chown -R` that
 * fixes them; `svc config check` says the same.
 */

const ownDir = ownedTempDirs();
svcAsUserOneProcess();

/** The user name svcAsUser's command runs as. */
const USER = AS_ROOT ? "nobody" : userInfo().username;
const UID = AS_ROOT ? OTHER_USER : process.getuid?.();

/**
 * svc config check of `home`, as svcAsUser's user, names `problem` (exit 1), and svc gateway run is refused
 * with it alone (exit 1; killed past 10 s, should it start after all).
 */
async function expectRefusedOnce(home: string, problem: string): Promise<void> {
  const check = await svcAsUser(home, ["config", "check"]);
  expect(check.code).toBe(1);
  expect(check.stderr).toContain(problem);
  const run = await svcAsUser(home, ["gateway", "run", "--port", "0"], 10_000);
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(`svc: ${problem}\n`);
}

describe("a data directory this user cannot write", { timeout: 30_000 }, () => {
  it.runIf(AS_ROOT)(
    "root's directories and files in sessions/ and a profile's cron/ refuse the start once, with the chown -R that fixes them",
    async () => {
      const home = ownDir();
      const sessions = join(home, "sessions");
      mkdirSync(join(sessions, "webhook-runs"), { recursive: true, mode: 0o755 });
      writeFileSync(join(sessions, "webhook-runs", "2026-12-04.jsonl"), "", { mode: 0o644 });
      const cron = join(home, "profiles", "work", "cron");
      mkdirSync(cron, { recursive: true, mode: 0o755 });
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      chownSync(join(home, "profiles", "work"), OTHER_USER, OTHER_USER);
      // The profile's sessions/ is this user's, but a file in it is root's.
      const workSessions = join(home, "profiles", "work", "sessions");
      mkdirSync(workSessions, { mode: 0o700 });
      chownSync(workSessions, OTHER_USER, OTHER_USER);
      const rootFile = join(workSessions, "index.json");
      writeFileSync(rootFile, "{}", { mode: 0o644 });
      const problem = `${sessions} (owned by uid 0), ${workSessions} (${rootFile}, owned by uid 0), ${cron} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${sessions} ${workSessions} ${cron} (as root), then start it again`;
      // Checked first: a gateway that started all the same would run on.
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(problem);
      const run = await svcAsUser(home, ["gateway", "run", "--port", "0"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`svc: ${problem}\n`);
    },
  );

  it.runIf(AS_ROOT)(
    "past 20,000 entries: the start checks each directory on its own budget, and svc config check checks every entry",
    async () => {
      // In memory where there is such a file system: 20,000 entries take ~10 s to make on a busy disk.
      const home = ownDir("svc-test-", existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
      // A logs/ of this user's with more entries than the start looks at in one directory.
      const logs = join(home, "logs");
      mkdirSync(logs);
      chownSync(logs, OTHER_USER, OTHER_USER);
      // Symbolic links: entries the check counts (and leaves alone), made ~10x faster than files.
      for (let i = 0; i < 20_001; i++) symlinkSync("gateway.log", join(logs, `gateway.log.${i}`));
      // root's file in the default profile's cron/, looked at after logs/.
      const cron = join(home, "cron");
      mkdirSync(cron);
      chownSync(cron, OTHER_USER, OTHER_USER);
      const jobs = join(cron, "jobs.json");
      writeFileSync(jobs, "{}", { mode: 0o644 });
      // root's file among logs/'s own entries, wherever the directory lists it.
      const rootLog = join(logs, "gateway.log.root");
      writeFileSync(rootLog, "", { mode: 0o644 });
      const check = await svcAsUser(home, ["config", "check"]);
      const run = await svcAsUser(home, ["gateway", "run", "--port", "0"], 10_000);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${logs} (${rootLog}, owned by uid 0), ${cron} (${jobs}, owned by uid 0): cannot be written by this user`,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${cron} (${jobs}, owned by uid 0)`);
    },
  );

  // Seen: check exit 0 and the gateway started, then each run warned "run session not recorded … EACCES".
  it.runIf(AS_ROOT)(
    "a profile's directory of root's this user may not look into refuses the start once, naming it",
    async () => {
      const home = ownDir();
      const work = join(home, "profiles", "work");
      mkdirSync(work, { recursive: true, mode: 0o700 });
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      const problem = `${work} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${work} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: check exit 0 and the gateway started, while a profile's directory (not a link) with the same was refused.
  it.runIf(AS_ROOT)(
    "a profile's directory that is a symbolic link (a dotfiles checkout) is checked as one that is not",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      const work = join(base, "dotfiles", "work");
      mkdirSync(join(home, "profiles"), { recursive: true });
      mkdirSync(work, { recursive: true });
      for (const dir of [home, join(home, "profiles"), join(base, "dotfiles"), work])
        chownSync(dir, OTHER_USER, OTHER_USER);
      symlinkSync(work, join(home, "profiles", "work"));
      // root's, made through the link by a run as root.
      const sessions = join(home, "profiles", "work", "sessions");
      mkdirSync(sessions, { mode: 0o755 });
      const problem = `${sessions} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${sessions} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: check and start refused "…/profiles/lost+found (owned by uid 0): cannot be written by this user".
  it.runIf(AS_ROOT)(
    "a directory of root's under profiles/ whose name is no profile's (lost+found) is none of the gateway's: the check passes",
    async () => {
      const home = ownDir();
      const profiles = join(home, "profiles");
      mkdirSync(join(profiles, "work"), { recursive: true });
      chownSync(profiles, OTHER_USER, OTHER_USER);
      chownSync(join(profiles, "work"), OTHER_USER, OTHER_USER);
      mkdirSync(join(profiles, "lost+found"), { mode: 0o700 });
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).not.toContain("lost+found");
      expect(check.stderr).not.toContain("cannot be written");
      expect(check.code).toBe(0);
    },
  );

  // Seen: check and start refused "…/state (…/state/lost+found, owned by uid 0): cannot be written by this user".
  it.runIf(AS_ROOT)(
    "a lost+found of root's at the top of state/ and logs/ (each a volume of its own) is none of the gateway's: the check passes and the gateway starts",
    async () => {
      const home = ownDir();
      for (const name of ["state", "logs"]) {
        mkdirSync(join(home, name));
        chownSync(join(home, name), OTHER_USER, OTHER_USER);
        // As mkfs.ext4 leaves it at the top of a file system: root's, mode 0700.
        mkdirSync(join(home, name, "lost+found"), { mode: 0o700 });
      }
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).not.toContain("lost+found");
      expect(check.stderr).not.toContain("cannot be written");
      expect(check.code).toBe(0);
      const run = await gatewayRunAsUser(home);
      expect(run.stderr).toBe("");
      expect(run.listened).toBe(true);
      expect(run.code).toBe(0);
    },
  );

  // Only at the top: deeper down, a directory of that name is no file system's own, and is checked as any other.
  it.runIf(AS_ROOT)("a lost+found of root's below the top of a data directory is checked", async () => {
    const home = ownDir();
    const runs = join(home, "sessions", "webhook-runs");
    mkdirSync(runs, { recursive: true });
    chownSync(join(home, "sessions"), OTHER_USER, OTHER_USER);
    chownSync(runs, OTHER_USER, OTHER_USER);
    mkdirSync(join(runs, "lost+found"), { mode: 0o700 });
    const check = await svcAsUser(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${join(home, "sessions")} (${join(runs, "lost+found")}, owned by uid 0): cannot be written by this user`,
    );
  });

  // Seen: check exit 0 and the gateway started, then each run warned "run session not recorded … EACCES … mkdir".
  it.runIf(AS_ROOT)(
    "a data directory linked into a directory of root's this user may not look into refuses the start, naming that directory",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const priv = join(base, "private");
      mkdirSync(join(priv, "sessions"), { recursive: true, mode: 0o700 });
      chmodSync(priv, 0o700);
      symlinkSync(join(priv, "sessions"), join(home, "sessions"));
      // Only to be looked into: private is none of svc's, and a chown -R would give away all it holds.
      const problem = `${join(home, "sessions")}: on the way to it, ${priv} (owned by uid 0) cannot be looked into by this user (${USER}, uid ${UID}) — the gateway keeps its run sessions there: let this user look into it (chmod o+x ${priv}, as its owner or root), or point the link at a directory this user can reach, then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: "on the way to it, /root (owned by uid 0) cannot be looked into by this user — … let this user look into it
  // (chmod o+x /root, as its owner or root)": the system's own directory opened to every user, to show a file.
  it.runIf(AS_ROOT && (statSync("/root").mode & 0o001) === 0)(
    "a data directory linked into /root names it as the system's, not to be opened, with the link to point elsewhere",
    async () => {
      const home = ownDir();
      symlinkSync("/root/.bashrc", join(home, "state"));
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${join(home, "state")}: on the way to it, /root (owned by uid 0) cannot be looked into by this user (${USER}, uid ${UID}) — the gateway keeps its journal of accepted runs there: /root is one of the system's own directories, not to be opened to this user: point the link at a directory this user can reach, then start it again`,
      );
      expect(check.stderr).not.toContain("chmod");
    },
  );

  // Seen: "<base>/ea-lnk: cannot be written by this user … chmod -R u+rwX <base>/ea-lnk", the link reached on the
  // way named, with a chmod that cannot change it; a direct sessions -> ../priv/deep/sessions named priv.
  it.runIf(AS_ROOT)(
    "a data directory linked by way of a second link into a directory of root's names that directory, not the link",
    async () => {
      const base = ownDir();
      const home = join(base, "h");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const priv = join(base, "priv");
      mkdirSync(join(priv, "deep", "sessions"), { recursive: true });
      chmodSync(priv, 0o700);
      symlinkSync("priv/deep", join(base, "ea-lnk"));
      symlinkSync("../ea-lnk/sessions", join(home, "sessions"));
      const problem = `${join(home, "sessions")}: on the way to it, ${priv} (owned by uid 0) cannot be looked into by this user (${USER}, uid ${UID}) — the gateway keeps its run sessions there: let this user look into it (chmod o+x ${priv}, as its owner or root), or point the link at a directory this user can reach, then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: "<home>/profiles/work (owned by uid 0): … chown -R nobody <home>/profiles/work", which changes the link only.
  it.runIf(AS_ROOT)(
    "a profile's directory that is a symbolic link to a directory of root's this user may not look into names that directory",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(join(home, "profiles"), { recursive: true });
      chownSync(home, OTHER_USER, OTHER_USER);
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      const work = join(base, "dotfiles-work");
      mkdirSync(work, { mode: 0o700 });
      symlinkSync(work, join(home, "profiles", "work"));
      const problem = `${work} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${work} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: "Warning: <home>/profiles/work: a symbolic link to <dir>/priv/work, which is not a directory (missing or
  // moved) — … restore the directory it points to" and ok (exit 0); the gateway started, and each run warned "run
  // session not recorded … EACCES … mkdir". A cron link so: that warning, then a refusal naming priv.
  it.runIf(AS_ROOT)(
    "a profile's directory or a cron directory linked into a directory this user may not look into is no link to nothing: the start is refused naming that directory",
    async () => {
      const base = ownDir();
      const home = join(base, "h");
      mkdirSync(join(home, "profiles"), { recursive: true });
      chownSync(home, OTHER_USER, OTHER_USER);
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      const priv = join(base, "priv");
      mkdirSync(join(priv, "work", "sessions"), { recursive: true });
      chmodSync(priv, 0o700);
      symlinkSync(join(priv, "work"), join(home, "profiles", "work"));
      const closed = `${priv} (owned by uid 0) cannot be looked into by this user`;
      const letIn = `let this user look into it (chmod o+x ${priv}, as its owner or root)`;
      const problem = `${join(home, "profiles", "work", "sessions")}: on the way to it, ${closed} (${USER}, uid ${UID}) — the gateway keeps its run sessions there: ${letIn}, or point the link at a directory this user can reach, then start it again`;
      await expectRefusedOnce(home, problem);
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).not.toContain("missing or moved");

      // The default profile's cron directory, linked into priv too: its store's warning names priv as well.
      rmSync(join(home, "profiles", "work"));
      mkdirSync(join(priv, "cron"));
      symlinkSync("../priv/cron", join(home, "cron"));
      const cron = join(home, "cron");
      const warning = `Warning: ${cron}: a symbolic link to ${join(priv, "cron")}, which this user (${USER}, uid ${UID}) cannot get to: ${closed} — the default profile's cron jobs cannot be kept there: ${letIn}, or remove the link (svc makes the directory)`;
      const cronCheck = await svcAsUser(home, ["config", "check"]);
      expect(cronCheck.code).toBe(1);
      expect(cronCheck.stderr).toContain(warning);
      expect(cronCheck.stderr).toContain(
        `${cron}: on the way to it, ${closed} (${USER}, uid ${UID}) — the gateway keeps its cron jobs there: ${letIn}, or point the link at a directory this user can reach, then start it again`,
      );
      expect(cronCheck.stderr).not.toContain("missing or moved");
      const list = await svcAsUser(home, ["cron", "list"]);
      expect(list.code).toBe(2);
      expect(list.stderr).toContain(warning.replace("Warning: ", "svc: "));
    },
  );

  // Seen (after 79a93b8c): no warning for the link, and svc cron list --profile work "<home>/profiles/work/cron/jobs.json:
  // cannot be read (EACCES …) — … give it to that user (chown) and chmod 600 …", a file that may not be there, priv
  // never named; a cron/jobs.json linked into priv the same.
  it.runIf(AS_ROOT)(
    "a profile linked into a directory this user may not look into is warned of, and its cron store names that directory",
    async () => {
      const base = ownDir();
      const home = join(base, "h");
      mkdirSync(join(home, "profiles"), { recursive: true });
      chownSync(home, OTHER_USER, OTHER_USER);
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      const priv = join(base, "priv");
      mkdirSync(join(priv, "work"), { recursive: true });
      chmodSync(priv, 0o700);
      const work = join(home, "profiles", "work");
      symlinkSync(join(priv, "work"), work);
      const closed = `${priv} (owned by uid 0) cannot be looked into by this user`;
      const letIn = `let this user look into it (chmod o+x ${priv}, as its owner or root)`;
      const unusable = `${work}: a symbolic link to ${join(priv, "work")}, which this user (${USER}, uid ${UID}) cannot get to: ${closed} — profile work's runs, cron jobs and MCP logins cannot use it: ${letIn}, or remove the link`;
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).toContain(`Warning: ${unusable}`);
      const list = await svcAsUser(home, ["cron", "list", "--profile", "work"]);
      expect(list.code).toBe(2);
      expect(list.stderr).toBe(`svc: ${unusable}\n`);
      const create = await svcAsUser(home, [
        ...["cron", "create", "--profile", "work", "--name", "x", "--schedule", "every 1h", "--prompt", "hi"],
      ]);
      expect(create.code).toBe(2);
      expect(create.stderr).toBe(`svc: ${unusable}\n`);

      // The default profile's jobs.json linked into priv: the store's refusal names priv, and no chmod 600.
      rmSync(work);
      const cron = join(home, "cron");
      mkdirSync(cron);
      chownSync(cron, OTHER_USER, OTHER_USER);
      symlinkSync(join(priv, "jobs.json"), join(cron, "jobs.json"));
      const jobs = await svcAsUser(home, ["cron", "list"]);
      expect(jobs.code).not.toBe(0);
      expect(jobs.stderr).toContain(
        `${join(cron, "jobs.json")}: cannot be read (EACCES: permission denied, open '${join(cron, "jobs.json")}') — on the way to it, ${closed} (${USER}, uid ${UID}): ${letIn}`,
      );
      expect(jobs.stderr).not.toContain("chmod 600");
    },
  );

  // Seen: "<home>/sessions (<home>/sessions/webhook-runs, owned by uid 0): … chown -R nobody <home>/sessions (as root)",
  // which changes the link alone: chown -R follows no link named on its command line.
  it.runIf(AS_ROOT)(
    "a data directory that is a symbolic link is named with where it leads, and the chown -R names that",
    async () => {
      const base = ownDir();
      const home = join(base, "h");
      const sess = join(base, "data", "sess");
      mkdirSync(join(sess, "webhook-runs"), { recursive: true });
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      chownSync(sess, OTHER_USER, OTHER_USER);
      symlinkSync("../data/sess", join(home, "sessions"));
      const problem = `${join(home, "sessions")} → ${sess} (${join(sess, "webhook-runs")}, owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${sess} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
      // The link's target itself root's: named, and given.
      const priv = join(base, "priv");
      mkdirSync(priv);
      symlinkSync("../priv", join(home, "deliveries"));
      const both = `${join(home, "deliveries")} → ${priv} (owned by uid 0), ${join(home, "sessions")} → ${sess} (${join(sess, "webhook-runs")}, owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${priv} ${sess} (as root), then start it again`;
      await expectRefusedOnce(home, both);
    },
  );

  // Seen: "<home>/deliveries → <dir>/varlog (owned by uid 0): … chown -R nobody <dir>/varlog (as root)": with
  // deliveries -> /var/log, the system's logs given away.
  it.runIf(AS_ROOT)(
    "a data directory linked into another user's directory holding what svc does not keep there is never given away",
    async () => {
      const base = ownDir();
      const home = join(base, "h");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const varlog = join(base, "varlog");
      mkdirSync(join(varlog, "apt"), { recursive: true });
      mkdirSync(join(varlog, "journal"));
      writeFileSync(join(varlog, "syslog"), "", { mode: 0o640 });
      symlinkSync(varlog, join(home, "deliveries"));
      const problem = `${join(home, "deliveries")} → ${varlog}: cannot be written by this user (${USER}, uid ${UID}) — ${varlog} (owned by uid 0) is not svc's own and holds apt/, which svc does not keep there, so it is not to be given away: point the link at a directory of svc's own that this user can write, then start it again`;
      await expectRefusedOnce(home, problem);
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).not.toContain("chown");
    },
  );

  // Seen: "<home>/sessions → <dir>/srv/sessions: … <dir>/srv/sessions (owned by uid 0) is not svc's own and holds
  // what svc does not keep there": a directory holding only what a root run of svc wrote, refused its chown -R.
  it.runIf(AS_ROOT)(
    "a data directory linked into root's directory holding only what svc writes there is given to this user",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const srv = join(base, "srv");
      const sessions = join(srv, "sessions");
      mkdirSync(join(sessions, "webhook-runs"), { recursive: true });
      writeFileSync(join(sessions, "run-1.json"), "{}", { mode: 0o600 });
      writeFileSync(join(sessions, "index.json.lock"), "", { mode: 0o600 });
      symlinkSync(sessions, join(home, "sessions"));
      const deliveries = join(srv, "deliveries");
      mkdirSync(deliveries);
      writeFileSync(join(deliveries, "history.jsonl"), "", { mode: 0o600 });
      symlinkSync(deliveries, join(home, "deliveries"));
      const problem = `${join(home, "deliveries")} → ${deliveries} (owned by uid 0), ${join(home, "sessions")} → ${sessions} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${deliveries} ${sessions} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
      // One entry svc does not keep there makes it shared, and that entry is named.
      writeFileSync(join(deliveries, "notes.txt"), "");
      const shared = `${join(home, "deliveries")} → ${deliveries}: cannot be written by this user (${USER}, uid ${UID}) — ${deliveries} (owned by uid 0) is not svc's own and holds notes.txt, which svc does not keep there, so it is not to be given away`;
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).toContain(shared);
      expect(check.stderr).not.toContain(`chown -R ${USER} ${deliveries}`);
    },
  );

  // Seen: an empty directory of root's with mode 0700, which this user cannot list, said to hold "what svc does not
  // keep there".
  it.runIf(AS_ROOT)(
    "a data directory linked into a directory this user cannot list says what it holds is unknown",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const closed = join(base, "closed");
      mkdirSync(closed, { mode: 0o700 });
      symlinkSync(closed, join(home, "deliveries"));
      const problem = `${join(home, "deliveries")} → ${closed}: cannot be written by this user (${USER}, uid ${UID}) — ${closed} (owned by uid 0) cannot be looked into by this user, so what it holds is unknown: if it holds only svc's data, give it to this user: chown -R ${USER} ${closed} (as root); else point the link at a directory of svc's own that this user can write; then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  // Seen: "svc cron list": "on the way to it, <home>/cron (owned by uid 0) cannot be looked into by this user …:
  // let this user look into it (chmod o+x <home>/cron, …)", after which jobs.json (root's, 0600) still cannot be read.
  it.runIf(AS_ROOT)(
    "a closed directory of svc's own on the way to a store is to be given to this user, not looked into",
    async () => {
      const home = ownDir();
      const cron = join(home, "cron");
      mkdirSync(cron, { mode: 0o700 });
      writeFileSync(join(cron, "jobs.json"), '{"version":1,"jobs":[]}', { mode: 0o600 });
      const given = `on the way to it, ${cron} (owned by uid 0) cannot be looked into by this user (${USER}, uid ${UID}): give it to this user: chown -R ${USER} ${cron} (as root)`;
      const list = await svcAsUser(home, ["cron", "list"]);
      expect(list.code).not.toBe(0);
      expect(list.stderr).toContain(given);
      expect(list.stderr).not.toContain("chmod o+x");
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).not.toContain("chmod o+x");
      // A profile's directory of root's with mode 0700, as docs/operations.md gives it.
      rmSync(cron, { recursive: true });
      const work = join(home, "profiles", "work");
      mkdirSync(join(work, "cron"), { recursive: true });
      chownSync(join(home, "profiles"), OTHER_USER, OTHER_USER);
      chmodSync(work, 0o700);
      const workList = await svcAsUser(home, ["cron", "list", "--profile", "work"]);
      expect(workList.code).not.toBe(0);
      expect(workList.stderr).toContain(`chown -R ${USER} ${work} (as root)`);
      expect(workList.stderr).not.toContain("chmod o+x");
    },
  );

  // Seen: sessions -> /usr and workspaces -> /home got "give them to this user: chown -R nobody /home /usr (as
  // root)": /usr's bin/, lib/, share/ passed for platforms' directories of sessions/, and a user's home for a
  // run's workspace.
  it.runIf(AS_ROOT)(
    "a data directory linked to one of the system's directories is never offered to be given away",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      symlinkSync("/usr", join(home, "sessions"));
      symlinkSync("/home", join(home, "workspaces"));
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${join(home, "sessions")} → /usr: cannot be written by this user (${USER}, uid ${UID}) — /usr (owned by uid 0) is one of the system's own directories, so it is not to be given away: point the link at a directory of svc's own that this user can write, then start it again`,
      );
      expect(check.stderr).toContain(
        `${join(home, "workspaces")} → /home: cannot be written by this user (${USER}, uid ${UID}) — /home (owned by uid 0) is one of the system's own directories, so it is not to be given away`,
      );
      expect(check.stderr).not.toContain("chown");
    },
  );

  it.runIf(AS_ROOT)(
    "a data directory linked to a directory whose subdirectories hold what svc does not keep there is not given away",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      // Like /usr/local: bin/ and share/, named as a platform's directory of sessions/ could be.
      const local = join(base, "local");
      mkdirSync(join(local, "bin"), { recursive: true });
      writeFileSync(join(local, "bin", "tool"), "", { mode: 0o755 });
      mkdirSync(join(local, "share"));
      symlinkSync(local, join(home, "sessions"));
      // Like a /home: a user's directory where a profile's directory of workspaces would be, with a dotfile in it.
      const users = join(base, "users");
      mkdirSync(join(users, "alice"), { recursive: true });
      writeFileSync(join(users, "alice", ".bashrc"), "");
      symlinkSync(users, join(home, "workspaces"));
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${join(home, "sessions")} → ${local}: cannot be written by this user (${USER}, uid ${UID}) — ${local} (owned by uid 0) is not svc's own and holds bin/tool, which svc does not keep there, so it is not to be given away`,
      );
      expect(check.stderr).toContain(
        `${join(home, "workspaces")} → ${users}: cannot be written by this user (${USER}, uid ${UID}) — ${users} (owned by uid 0) is not svc's own and holds alice/.bashrc, which svc does not keep there, so it is not to be given away`,
      );
      expect(check.stderr).not.toContain("chown");
      // A platform's directory holding only transcripts, and a run's workspace, are svc's: given to this user.
      rmSync(join(local, "bin"), { recursive: true });
      rmSync(join(local, "share"), { recursive: true });
      mkdirSync(join(local, "slack"));
      writeFileSync(join(local, "slack", "C01.jsonl"), "", { mode: 0o600 });
      rmSync(join(users, "alice"), { recursive: true });
      // As a root run lays them out: workspaces/<profile>/<route>_<id>-<hash>/, whatever the run left in it.
      const run = join(users, "default", "gh_push-1-0123456789ab");
      mkdirSync(join(run, ".git"), { recursive: true });
      writeFileSync(join(run, "out.txt"), "");
      mkdirSync(join(users, "work", "cron_nightly-fedcba987654-2"), { recursive: true });
      const given = await svcAsUser(home, ["config", "check"]);
      expect(given.stderr).toContain(`give them to this user: chown -R ${USER} ${users} ${local} (as root)`);
      // A profile's directory holding what no run is named: shared.
      writeFileSync(join(users, "default", "notes.txt"), "");
      const notes = await svcAsUser(home, ["config", "check"]);
      expect(notes.stderr).toContain(
        `${users} (owned by uid 0) is not svc's own and holds default/notes.txt, which svc does not keep there`,
      );
    },
  );

  // Seen: sessions -> a directory of root's holding webhook/gh/<id>.jsonl, as svc wrote webhook runs before
  // 282beccf: "… is not svc's own and holds webhook/gh/, which svc does not keep there, so it is not to be given away".
  it.runIf(AS_ROOT)(
    "a data directory linked to root's sessions of an older layout (webhook/<route>/<id>.jsonl) is given to this user",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const sessions = join(base, "sessions");
      mkdirSync(join(sessions, "webhook", "gh"), { recursive: true });
      writeFileSync(join(sessions, "webhook", "gh", "d-1.jsonl"), "", { mode: 0o600 });
      writeFileSync(join(sessions, "index.json"), "{}", { mode: 0o600 });
      symlinkSync(sessions, join(home, "sessions"));
      const problem = `${join(home, "sessions")} → ${sessions} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${sessions} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
      // A route's directory holding what svc never wrote there: shared.
      writeFileSync(join(sessions, "webhook", "gh", "notes.txt"), "");
      const check = await svcAsUser(home, ["config", "check"]);
      expect(check.stderr).toContain(
        `${sessions} (owned by uid 0) is not svc's own and holds webhook/gh/notes.txt, which svc does not keep there`,
      );
      expect(check.stderr).not.toContain("chown");
    },
  );

  // Seen: a service account svc (HOME /var/lib/svc, its own) with state -> /var/lib/svc holding root's LOCK and
  // journal, and .ssh/authorized_keys and app/bin/svc of root's: "give them to this user: chown -R svc /var/lib/svc
  // (as root)", handing the account root's keys and binaries, since a target of this user's was given unlooked.
  it.runIf(AS_ROOT)(
    "a data directory linked to this user's own directory holding root's files svc does not keep there is not given away",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      // This user's, as a service account's home is: root's journal, keys and binary in it.
      const own = join(base, "varlibsvc");
      mkdirSync(join(own, ".ssh"), { recursive: true, mode: 0o700 });
      chownSync(own, OTHER_USER, OTHER_USER);
      writeFileSync(join(own, ".ssh", "authorized_keys"), "ssh-ed25519 AAAA root", { mode: 0o600 });
      mkdirSync(join(own, "app", "bin"), { recursive: true });
      writeFileSync(join(own, "app", "bin", "svc"), "", { mode: 0o755 });
      writeFileSync(join(own, "LOCK"), "", { mode: 0o644 });
      writeFileSync(join(own, "journal-000001.seg"), "", { mode: 0o644 });
      symlinkSync(own, join(home, "state"));
      const problem = `${join(home, "state")} → ${own} (${join(own, ".ssh")}, owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — ${own} (owned by uid ${UID}) is not svc's own and holds .ssh/, which svc does not keep there, so it is not to be given away: point the link at a directory of svc's own that this user can write, then start it again`;
      await expectRefusedOnce(home, problem);
      // Holding only what svc writes there (root's journal), it is given.
      rmSync(join(own, ".ssh"), { recursive: true });
      rmSync(join(own, "app"), { recursive: true });
      const given = await svcAsUser(home, ["config", "check"]);
      expect(given.stderr).toContain(`give them to this user: chown -R ${USER} ${own} (as root)`);
    },
  );

  // Seen: logs -> a directory of root's holding gateway.log (docs/operations.md's logs -> /var/log/svc) said
  // "<home>/logs: cannot be written (EACCES …) — the gateway keeps its log (gateway.log) there: fix its owner or
  // permissions", naming the link, where a chown changes the link alone.
  it.runIf(AS_ROOT)(
    "a logs/ or state/ linked to a directory of root's is named with where it leads, and the chown -R names that",
    async () => {
      const base = ownDir();
      const home = join(base, "home");
      mkdirSync(home);
      chownSync(home, OTHER_USER, OTHER_USER);
      const logs = join(base, "varlogsvc");
      mkdirSync(logs);
      writeFileSync(join(logs, "gateway.log"), "", { mode: 0o644 });
      symlinkSync(logs, join(home, "logs"));
      const state = join(base, "varlibsvc");
      mkdirSync(state);
      writeFileSync(join(state, "LOCK"), "", { mode: 0o644 });
      symlinkSync(state, join(home, "state"));
      const problem = `${join(home, "logs")} → ${logs} (owned by uid 0), ${join(home, "state")} → ${state} (owned by uid 0): cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: give them to this user: chown -R ${USER} ${logs} ${state} (as root), then start it again`;
      await expectRefusedOnce(home, problem);
    },
  );

  it("a directory of this user's closed to writing is refused with the chmod that fixes it", async () => {
    const home = ownDir();
    const deliveries = join(home, "deliveries");
    mkdirSync(deliveries, { mode: 0o500 });
    if (AS_ROOT) chownSync(deliveries, OTHER_USER, OTHER_USER);
    const problem = `${deliveries}: cannot be written by this user (${USER}, uid ${UID}) — the gateway keeps its sessions, stores and logs there: make them writable: chmod -R u+rwX ${deliveries}, then start it again`;
    const check = await svcAsUser(home, ["config", "check"]);
    const run = check.code === 1 ? await svcAsUser(home, ["gateway", "run", "--port", "0"]) : undefined;
    chmodSync(deliveries, 0o700);
    expect(check.stderr).toContain(problem);
    expect(run?.code).toBe(1);
    expect(run?.stderr).toBe(`svc: ${problem}\n`);
  });
});
