import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  awaitForeignLock,
  LOCK_FILE,
  StateDirBusyError,
  StateDirTakenOver,
} from "../../../src/io/state/journal/dirLock.js";
import { Journal, SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { FOREIGN_UNTOUCHED_MS, HEARTBEAT_MS } from "../../../src/io/stores/fileLock.js";
import { journalErrorLine } from "../../../src/state/gatewayState.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * The state directory's LOCK names its gateway's pid; seen from another PID namespace (a gateway on the
 * host, one started in a container on the same SVC_HOME) that pid is another process or none, and the
 * lock was taken over as a dead gateway's: two gateways on one journal. The lock now records its
 * namespace, and one of another namespace is judged by when its gateway last touched it: a gateway touches
 * its lock every HEARTBEAT_MS, and one killed in a container (whose restart is a new namespace) leaves it
 * untouched, to be taken over once FOREIGN_UNTOUCHED_MS have passed (before, never: the restarted container
 * was refused until the file was removed by hand).
 */

let home: TempHome;
afterEach(() => {
  vi.useRealTimers();
  home.cleanup();
});

/** A state directory in a new temporary home (removed after the test). */
function stateDir(): string {
  home = tempHome();
  const dir = join(home.dir, "state");
  mkdirSync(dir);
  return dir;
}

/** A lock written by a gateway of another namespace (pid `pid` there), untouched for `ms`. */
function foreignLock(dir: string, pid: number, ms: number): string {
  const text = `${pid} 12345 their-token pid:[4026530000]\n`;
  writeFileSync(join(dir, LOCK_FILE), text, { mode: 0o600 });
  untouchedFor(join(dir, LOCK_FILE), ms);
  return text;
}

function untouchedFor(path: string, ms: number): void {
  const at = new Date(Date.now() - ms);
  utimesSync(path, at, at);
}

function refusal(dir: string): unknown {
  try {
    openJournal(dir);
  } catch (err) {
    return err;
  }
  return undefined;
}

const openJournal = (dir: string) =>
  new Journal(
    { dir },
    () => {},
    () => [],
  );

/** A journal on `dir` with what it reports: its errors and its problems. */
function watchedJournal(dir: string) {
  const errors: unknown[] = [];
  const problems: unknown[] = [];
  const journal = new Journal(
    { dir, onError: (err) => errors.push(err), onProblem: (problem) => problems.push(problem) },
    () => {},
    () => [],
  );
  return { journal, errors, problems };
}

describe("a state directory lock of another PID namespace", () => {
  it.runIf(process.platform === "linux")(
    "touched lately, is kept and refuses the open, naming the namespace, when it was touched and what to do",
    () => {
      const dir = stateDir();
      // A pid that runs nowhere here (exited), written by a gateway in another namespace 2 s ago.
      const pid = spawnSync("true").pid as number;
      const lock = foreignLock(dir, pid, 2000);
      const refused = refusal(dir);
      expect(refused).toBeInstanceOf(StateDirBusyError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^the state directory ${dir} is in use by a gateway of another PID namespace \\(pid ${pid} there, pid:\\[4026530000\\]; this process runs in pid:\\[\\d+\\]: a container and its host, or two containers, share this SVC_HOME\\) — it touched ${join(dir, LOCK_FILE)} 2\\.\\d s ago by this process's clock, and this process has not seen it left untouched for 15 s \\(a running gateway touches it every 5 s; one this process watched stay untouched that long is taken over as a killed gateway's\\): stop it where it runs, or use another SVC_HOME$`,
        ),
      );
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(lock);
    },
  );

  it.runIf(process.platform === "linux")(
    "dated long ago or far ahead of the clock, is refused at its first sight and taken over once this process has seen it untouched for FOREIGN_UNTOUCHED_MS of its monotonic clock",
    async () => {
      const dir = stateDir();
      const pid = spawnSync("true").pid as number;
      vi.useFakeTimers({ toFake: ["performance"] });
      for (const ms of [FOREIGN_UNTOUCHED_MS + 1000, -(FOREIGN_UNTOUCHED_MS + 1000)]) {
        const text = foreignLock(dir, pid, ms);
        expect(refusal(dir)).toBeInstanceOf(StateDirBusyError);
        vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS - 1);
        expect(refusal(dir)).toBeInstanceOf(StateDirBusyError);
        expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(text);
        vi.advanceTimersByTime(1);
        const journal = openJournal(dir);
        expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${process.pid} `));
        await journal.close();
      }
    },
  );

  it.runIf(process.platform === "linux")(
    "touched moments ago is waited for, said once, and taken over once it stayed untouched; one touched during the wait is refused",
    async () => {
      const dir = stateDir();
      const lock = join(dir, LOCK_FILE);
      const pid = spawnSync("true").pid as number;
      foreignLock(dir, pid, 3000);
      const said: string[] = [];
      const sleeps: number[] = [];
      // A simulated clock: each sleep moves the monotonic clock the wait is timed on, and the system clock.
      vi.useFakeTimers({ toFake: ["performance", "Date"] });
      await awaitForeignLock(dir, {
        info: (line) => said.push(line),
        sleep: async (ms) => {
          sleeps.push(ms);
          vi.advanceTimersByTime(ms);
        },
      });
      expect(said).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\\[state\\] ${lock} names a gateway of another PID namespace \\(pid ${pid} there, pid:\\[4026530000\\]; this process runs in pid:\\[\\d+\\]\\): waiting up to 15 s for it to stay untouched for 15 s while this start watches it, as a killed gateway's does \\(a container restarted after a SIGKILL or an OOM kill\\), to take it over — a running gateway touches it every 5 s, and this start is then refused$`,
          ),
        ),
      ]);
      expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(FOREIGN_UNTOUCHED_MS);
      expect(sleeps.every((ms) => ms <= 1000)).toBe(true);
      const journal = openJournal(dir);
      expect(readFileSync(lock, "utf8")).toMatch(new RegExp(`^${process.pid} `));
      await journal.close();

      // A live gateway there touches it while this start waits: the wait ends at its next look, refused.
      const text = foreignLock(dir, pid, 3000);
      let looks = 0;
      await awaitForeignLock(dir, {
        info: () => {},
        sleep: async (ms) => {
          looks += 1;
          vi.advanceTimersByTime(ms);
          if (looks === 4) untouchedFor(lock, 0);
        },
      });
      expect(looks).toBe(4);
      expect(refusal(dir)).toBeInstanceOf(StateDirBusyError);
      expect(readFileSync(lock, "utf8")).toBe(text);
    },
  );

  it.runIf(process.platform === "linux")(
    "a live gateway's lock is not taken over when this process's clock was stepped by more than FOREIGN_UNTOUCHED_MS either way (NTP at boot, a VM resumed): it is watched, and its heartbeat refuses the start",
    async () => {
      const dir = stateDir();
      const lock = join(dir, LOCK_FILE);
      const pid = spawnSync("true").pid as number;
      vi.useFakeTimers({ toFake: ["performance", "Date"] });
      for (const step of [FOREIGN_UNTOUCHED_MS + 5000, -(FOREIGN_UNTOUCHED_MS + 5000)]) {
        // Touched by its gateway just now, by its clock; this process's clock then reads `step` off.
        const text = foreignLock(dir, pid, 0);
        vi.setSystemTime(Date.now() + step);
        const said: string[] = [];
        let looks = 0;
        await awaitForeignLock(dir, {
          info: (line) => said.push(line),
          sleep: async (ms) => {
            looks += 1;
            vi.advanceTimersByTime(ms);
            // Its heartbeat, HEARTBEAT_MS later by its own clock.
            if (looks === 5) {
              const beat = new Date(statSync(lock).mtimeMs + HEARTBEAT_MS);
              utimesSync(lock, beat, beat);
            }
          },
        });
        expect(said).toEqual([expect.stringContaining("waiting up to 15 s")]);
        expect(looks).toBe(5);
        const refused = refusal(dir);
        expect(refused).toBeInstanceOf(StateDirBusyError);
        expect(readFileSync(lock, "utf8")).toBe(text);
        vi.setSystemTime(Date.now() - step);
      }
    },
  );

  it.runIf(process.platform === "linux")(
    "is touched by its gateway every HEARTBEAT_MS while the journal is open, and no more once it is closed",
    async () => {
      const dir = stateDir();
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      const journal = openJournal(dir);
      const lock = join(dir, LOCK_FILE);
      untouchedFor(lock, 60_000);
      const setBack = statSync(lock).mtimeMs;
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(statSync(lock).mtimeMs).toBeGreaterThan(setBack + 50_000);
      await journal.close();
      expect(existsSync(lock)).toBe(false);
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it.runIf(process.platform === "linux")(
    "found by its gateway's heartbeat naming another gateway (taken over while this one was paused): said once as an error, and the journal accepts nothing more",
    async () => {
      const dir = stateDir();
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      const { journal, errors } = watchedJournal(dir);
      const lock = join(dir, LOCK_FILE);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(errors).toEqual([]);
      expect(journal.accepting()).toBe(true);
      // A gateway of another namespace took it over, judging this one killed.
      const theirs = "77 12345 their-token pid:[4026530000]\n";
      writeFileSync(lock, theirs);
      vi.advanceTimersByTime(3 * HEARTBEAT_MS);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(StateDirTakenOver);
      expect(journal.accepting()).toBe(false);
      // Nothing is written any more: what is appended is refused (its request answered 503).
      journal.append({ k: "after" });
      await expect(journal.durable()).rejects.toBeInstanceOf(StateDirTakenOver);
      expect(journalErrorLine(dir, errors[0]).message).toBe(
        `[state] ${lock} no longer names this gateway: another gateway (pid 77 of pid:[4026530000]) took the state directory over while this one ran, judging it killed — this gateway was paused or hung (docker pause, SIGSTOP, a VM suspended) for more than 15 s where the other could not check its pid, or the file was replaced by hand; that gateway replayed this journal and runs what it holds, so requests here answer 503 from now on (their senders retry) and no run starts here any more (the runs queued here, a coalescing group's and a fired cron job's included, are that gateway's, and this gateway's cron schedule is stopped; a run under way goes on) — stop this gateway with kill ${process.pid} (svc gateway stop may find the other one's gateway.pid and stop that one) and leave the other running`,
      );
      await journal.close();
      // Not this gateway's to remove.
      expect(readFileSync(lock, "utf8")).toBe(theirs);
    },
  );

  // The real order: while this gateway is paused (none of its timers fires) the other one takes the lock,
  // replays the journal and rotates it (its segment past this one's, this one's removed); once this one
  // resumes, its look (due every SEGMENT_CHECK_MS) comes before its heartbeat (every HEARTBEAT_MS).
  for (const released of [false, true])
    it.runIf(process.platform === "linux")(
      `taken over while paused, ${released ? "the other gateway stopped since (its lock released)" : "the other gateway still running"}: the resumed journal's first look says it taken over, once, and it stays so: no segment made again, no lock taken, no relocation said, nothing accepted`,
      async () => {
        const dir = stateDir();
        vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout", "Date"] });
        const { journal, errors, problems } = watchedJournal(dir);
        const lock = join(dir, LOCK_FILE);
        await vi.advanceTimersByTimeAsync(HEARTBEAT_MS);
        // Paused: the other gateway takes the lock, rotates the journal into the segment past this one's.
        const ours = join(dir, "journal-000001.seg");
        const theirs = join(dir, "journal-000002.seg");
        const theirLock = "77 12345 their-token pid:[4026530000]\n";
        writeFileSync(lock, theirLock);
        writeFileSync(theirs, readFileSync(ours));
        rmSync(ours);
        if (released) rmSync(lock);
        // Resumed: the look comes first.
        await vi.advanceTimersByTimeAsync(SEGMENT_CHECK_MS);
        expect(errors).toEqual([expect.any(StateDirTakenOver)]);
        expect(problems).toEqual([]);
        expect(journal.accepting()).toBe(false);
        const said = journalErrorLine(dir, errors[0]).message;
        if (released)
          expect(said).toBe(
            `[state] ${lock} no longer names this gateway: another gateway took the state directory over while this one ran, judging it killed, and has released it since (it stopped; ${theirs} is its segment, and this gateway's is gone) — this gateway was paused or hung (docker pause, SIGSTOP, a VM suspended) for more than 15 s where the other could not check its pid; that gateway replayed this journal and ran what it holds, so requests here answer 503 from now on (their senders retry), no run starts here any more (the runs queued here, a coalescing group's and a fired cron job's included, are that gateway's, and this gateway's cron schedule is stopped; a run under way goes on), and this gateway neither takes the lock again nor writes a segment beside that one's — stop this gateway with kill ${process.pid}, then start it again: the start replays what the other gateway left`,
          );
        else
          expect(said).toContain(
            "another gateway (pid 77 of pid:[4026530000]) took the state directory over",
          );
        // Its heartbeat, later looks and the other gateway's stop change nothing.
        await vi.advanceTimersByTimeAsync(3 * HEARTBEAT_MS);
        if (!released) rmSync(lock);
        await vi.advanceTimersByTimeAsync(10 * SEGMENT_CHECK_MS);
        await journal.rotated();
        expect(existsSync(lock)).toBe(false);
        expect(readdirSync(dir).filter((name) => name.startsWith("journal-"))).toEqual([
          "journal-000002.seg",
        ]);
        expect(errors).toHaveLength(1);
        expect(problems).toEqual([]);
        expect(journal.accepting()).toBe(false);
        await journal.close();
        expect(existsSync(lock)).toBe(false);
      },
    );

  it.runIf(process.platform === "linux")(
    "its segment and lock removed by hand with no other segment there (rm state/*): not taken over, the directory's journal is made again and locked",
    async () => {
      const dir = stateDir();
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout", "Date"] });
      const { journal, errors, problems } = watchedJournal(dir);
      const lock = join(dir, LOCK_FILE);
      for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true });
      await vi.advanceTimersByTimeAsync(SEGMENT_CHECK_MS);
      await journal.rotated();
      expect(errors).toEqual([]);
      expect(problems).toEqual([expect.objectContaining({ file: join(dir, "journal-000001.seg") })]);
      expect(readdirSync(dir).filter((name) => name.startsWith("journal-"))).toEqual(["journal-000002.seg"]);
      expect(readFileSync(lock, "utf8")).toMatch(new RegExp(`^${process.pid} `));
      expect(journal.accepting()).toBe(true);
      await journal.close();
    },
  );

  it.runIf(process.platform === "linux")(
    "a lock of this namespace whose pid is gone is taken over; the new one records the namespace",
    async () => {
      const dir = stateDir();
      const pid = spawnSync("true").pid as number;
      writeFileSync(join(dir, LOCK_FILE), `${pid} 12345 their-token ${readlinkSync("/proc/self/ns/pid")}\n`, {
        mode: 0o600,
      });
      const journal = openJournal(dir);
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(
        new RegExp(
          `^${process.pid} \\S+ \\S+ ${readlinkSync("/proc/self/ns/pid").replace(/[[\]]/g, "\\$&")}\\n$`,
        ),
      );
      await journal.close();
    },
  );
});
