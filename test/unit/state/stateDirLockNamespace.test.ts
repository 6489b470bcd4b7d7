import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { awaitForeignLock, LOCK_FILE, StateDirBusyError } from "../../../src/io/state/journal/dirLock.js";
import { Journal } from "../../../src/io/state/journal/journal.js";
import { FOREIGN_UNTOUCHED_MS, HEARTBEAT_MS } from "../../../src/io/stores/fileLock.js";
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

describe("a state directory lock of another PID namespace", () => {
  it.runIf(process.platform === "linux")(
    "touched lately, is kept and refuses the open, naming the namespace, when it was touched and what to do",
    () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
      // A pid that runs nowhere here (exited), written by a gateway in another namespace 2 s ago.
      const pid = spawnSync("true").pid as number;
      const lock = foreignLock(dir, pid, 2000);
      const refused = refusal(dir);
      expect(refused).toBeInstanceOf(StateDirBusyError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^the state directory ${dir} is in use by a gateway of another PID namespace \\(pid ${pid} there, pid:\\[4026530000\\]; this process runs in pid:\\[\\d+\\]: a container and its host, or two containers, share this SVC_HOME\\) — it touched ${join(dir, LOCK_FILE)} 2\\.\\d s ago, and a running gateway touches it every 5 s \\(one left untouched for 15 s is taken over as a killed gateway's\\): stop it where it runs, or use another SVC_HOME$`,
        ),
      );
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(lock);
    },
  );

  it.runIf(process.platform === "linux")(
    "left untouched for FOREIGN_UNTOUCHED_MS (its gateway killed, its container restarted in a new namespace), or dated that far ahead of the clock, is taken over",
    async () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
      const pid = spawnSync("true").pid as number;
      foreignLock(dir, pid, FOREIGN_UNTOUCHED_MS + 1000);
      const journal = openJournal(dir);
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${process.pid} `));
      await journal.close();
      foreignLock(dir, pid, -(FOREIGN_UNTOUCHED_MS + 1000));
      const again = openJournal(dir);
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${process.pid} `));
      await again.close();
    },
  );

  it.runIf(process.platform === "linux")(
    "touched moments ago is waited for, said once, and taken over once it stayed untouched; one touched during the wait is refused",
    async () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
      const lock = join(dir, LOCK_FILE);
      const pid = spawnSync("true").pid as number;
      foreignLock(dir, pid, 3000);
      const said: string[] = [];
      const sleeps: number[] = [];
      // A simulated clock: each sleep moves the time the lock's age is read on.
      vi.useFakeTimers({ toFake: ["Date"] });
      await awaitForeignLock(dir, {
        info: (line) => said.push(line),
        sleep: async (ms) => {
          sleeps.push(ms);
          vi.setSystemTime(Date.now() + ms);
        },
      });
      expect(said).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\\[state\\] ${lock} names a gateway of another PID namespace \\(pid ${pid} there, pid:\\[4026530000\\]; this process runs in pid:\\[\\d+\\]\\), which touched it 3\\.\\d s ago: waiting up to 12 s for it to stay untouched for 15 s, as a killed gateway's does \\(a container restarted after a SIGKILL or an OOM kill\\), to take it over — a running gateway touches it every 5 s, and this start is then refused$`,
          ),
        ),
      ]);
      expect(sleeps.length).toBeGreaterThanOrEqual(12);
      expect(sleeps.every((ms) => ms <= 1000)).toBe(true);
      const journal = openJournal(dir);
      expect(readFileSync(lock, "utf8")).toMatch(new RegExp(`^${process.pid} `));
      await journal.close();
      vi.useRealTimers();

      // A live gateway there touches it while this start waits: the wait ends at its next look, refused.
      const text = foreignLock(dir, pid, 3000);
      let looks = 0;
      await awaitForeignLock(dir, {
        info: () => {},
        sleep: async () => {
          looks += 1;
          if (looks === 4) untouchedFor(lock, 0);
        },
      });
      expect(looks).toBe(4);
      expect(refusal(dir)).toBeInstanceOf(StateDirBusyError);
      expect(readFileSync(lock, "utf8")).toBe(text);
    },
  );

  it.runIf(process.platform === "linux")(
    "is touched by its gateway every HEARTBEAT_MS while the journal is open, and no more once it is closed",
    async () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
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
    "a lock of this namespace whose pid is gone is taken over; the new one records the namespace",
    async () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
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
