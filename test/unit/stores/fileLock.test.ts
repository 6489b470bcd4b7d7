import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs, {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { processStartTime } from "../../../src/io/processAlive.js";
import { writeFileAtomicAsync } from "../../../src/io/stores/atomicFile.js";
import {
  FOREIGN_UNTOUCHED_MS,
  HEARTBEAT_MS,
  heartbeat,
  untouchedFor,
  withFileLock,
  withFileLockSync,
} from "../../../src/io/stores/fileLock.js";
import { processState, spawnUnreaped } from "../../helpers/process.js";

const dirs: string[] = [];
function store(): { path: string; lock: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "svc-lock-"));
  dirs.push(dir);
  const path = join(dir, "store.json");
  return { path, lock: `${path}.lock`, dir };
}
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid as number;
}

describe("cross-process file lock", () => {
  it("releasing leaves alone a lock another process took over meanwhile (it is not ours any more)", async () => {
    const { path, lock } = store();
    await withFileLock(path, () => {
      // Held past staleMs: another process judged it stale, removed it and holds its own now.
      rmSync(lock);
      writeFileSync(lock, "424242");
    });
    expect(readFileSync(lock, "utf8")).toBe("424242");

    rmSync(lock);
    withFileLockSync(path, () => {
      rmSync(lock);
      writeFileSync(lock, "434343");
    });
    expect(readFileSync(lock, "utf8")).toBe("434343");
  });

  it("releasing removes its own lock", async () => {
    const { path, lock } = store();
    expect(await withFileLock(path, () => existsSync(lock))).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it("a lock left by a process that died is taken over, and no renamed-aside file stays behind", async () => {
    const { path, lock, dir } = store();
    writeFileSync(lock, String(deadPid()));
    const old = new Date(Date.now() - 5000);
    utimesSync(lock, old, old);
    expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a lock left by a process that died, dated ahead of the clock (set back since), is taken over", async () => {
    const { path, lock } = store();
    writeFileSync(lock, `${deadPid()} 12345 deadbeefdeadbeef`);
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(lock, ahead, ahead);
    expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
    writeFileSync(lock, `${deadPid()} 12345 deadbeefdeadbeef`);
    utimesSync(lock, ahead, ahead);
    expect(withFileLockSync(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
  });

  it("a stale lock that cannot be moved aside is reported at once, not waited for as if another process held it", () => {
    // Moving it aside fails the same way at every attempt: on a read-only file system (EROFS) or a
    // directory this user cannot write (EACCES); here its aside name is longer than a file name may be.
    const dir = mkdtempSync(join(tmpdir(), "svc-lock-"));
    dirs.push(dir);
    const path = join(dir, "s".repeat(245));
    writeFileSync(`${path}.lock`, String(deadPid()));
    const old = new Date(Date.now() - 5000);
    utimesSync(`${path}.lock`, old, old);
    const started = Date.now();
    // Far from the lock's timeout either way, so that a loaded machine cannot make an immediate failure
    // look like one that waited it out.
    expect(() => withFileLockSync(path, () => "ran", { timeoutMs: 30_000 })).toThrow(/ENAMETOOLONG/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a lock whose owner is a zombie (killed, not yet collected by its parent) is taken over", async () => {
    const { parent, pid: spawned } = await spawnUnreaped(["sleep", "0.1"]);
    try {
      await vi.waitFor(() => expect(processState(spawned)).toBe("Z"), { timeout: 10_000, interval: 5 });
      const { path, lock } = store();
      writeFileSync(lock, `${spawned} abc`);
      const old = new Date(Date.now() - 5000);
      utimesSync(lock, old, old);
      expect(await withFileLock(path, () => "ran", { timeoutMs: 500 })).toBe("ran");
    } finally {
      parent.kill("SIGKILL");
    }
  });

  describe("a lock naming a pid that another process got after its holder died (a container restarted)", () => {
    /** Left 5 s ago: past the second a dead owner's lock is kept, well within the 30 s a live one's is. */
    function leftLock(lock: string, text: string): void {
      writeFileSync(lock, text);
      const old = new Date(Date.now() - 5000);
      utimesSync(lock, old, old);
    }

    it("this very process (pid 1 again after the restart) takes over the lock it does not hold", async () => {
      const { path, lock } = store();
      leftLock(lock, `${process.pid} 1 0123456789abcdef`);
      expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
      leftLock(lock, `${process.pid} 1 0123456789abcdef`);
      expect(withFileLockSync(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
    });

    it("another process under the holder's pid (its start time differs) does not keep it", async () => {
      const { path, lock } = store();
      const other = spawn("sleep", ["30"]);
      try {
        const start = processStartTime(other.pid as number);
        leftLock(lock, `${other.pid} ${Number(start) - 1} 0123456789abcdef`);
        expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
        // The same process still running: its lock is waited for.
        leftLock(lock, `${other.pid} ${start} 0123456789abcdef`);
        await expect(withFileLock(path, () => "ran", { timeoutMs: 150 })).rejects.toThrow(
          "another svc process holds this lock",
        );
      } finally {
        other.kill("SIGKILL");
      }
    });

    it("a lock this process holds is not taken over by its own second writer, however old it is", async () => {
      const { path, lock } = store();
      await withFileLock(path, async () => {
        const old = new Date(Date.now() - 5000);
        utimesSync(lock, old, old);
        await expect(withFileLock(path, () => "second", { timeoutMs: 150 })).rejects.toThrow(
          "another svc process holds this lock",
        );
      });
      expect(existsSync(lock)).toBe(false);
      expect(await withFileLock(path, () => "after", { timeoutMs: 150 })).toBe("after");
    });
  });

  describe.runIf(pidNamespace() !== undefined)(
    "a lock of another PID namespace (a command in a container sharing SVC_HOME with the host)",
    () => {
      /** A namespace other than this process's. */
      const elsewhere = pidNamespace() === "pid:[1]" ? "pid:[2]" : "pid:[1]";
      function leftLock(lock: string, text: string, ageMs: number): void {
        writeFileSync(lock, text);
        const at = new Date(Date.now() - ageMs);
        utimesSync(lock, at, at);
      }

      /** A process touching `lock` every 20 ms, as a live holder's heartbeat does (every 5 s). */
      function toucher(lock: string): ChildProcess {
        const child = spawn(process.execPath, [
          "-e",
          "const fs = require('node:fs'); setInterval(() => { try { const t = new Date(); fs.utimesSync(process.argv[1], t, t); } catch {} }, 20);",
          lock,
        ]);
        children.push(child);
        return child;
      }

      /** Per lock file, how many times this process tried to take it (each attempt links its text into place). */
      const tries = new Map<string, number>();
      const ownLinkSync = fs.linkSync;
      beforeAll(() => {
        // Instrumentation only (as test/helpers/markLockWaits.mjs does for a CLI): the call is unchanged.
        fs.linkSync = function countedLinkSync(this: unknown, ...args: Parameters<typeof fs.linkSync>) {
          const target = String(args[1]);
          tries.set(target, (tries.get(target) ?? 0) + 1);
          return ownLinkSync.apply(this, args);
        };
        syncBuiltinESMExports();
      });
      afterAll(() => {
        fs.linkSync = ownLinkSync;
        syncBuiltinESMExports();
      });

      /**
       * Lets the waiters of `lock` look at it a few times (its attempts are at most 100 ms apart): until they
       * tried to take it twice more, so that one whole attempt (its timeout's check, then the lock's judgement)
       * came after what the test did last; or until `ended` settles (a waiter that gave up tries no more).
       */
      async function fewAttempts(lock: string, ended?: Promise<unknown>): Promise<void> {
        const from = tries.get(lock) ?? 0;
        let settled = false;
        void ended?.then(
          () => (settled = true),
          () => (settled = true),
        );
        // Polled on the real timers, not with vi.waitFor, which advances faked ones (the clock the waiters
        // are timed on) at each look; counted in looks, as Date may be faked too: up to ~10 s.
        for (let look = 0; look < 2000 && !settled && (tries.get(lock) ?? 0) < from + 2; look++)
          await sleep(5);
        if (!settled) expect(tries.get(lock) ?? 0).toBeGreaterThanOrEqual(from + 2);
      }

      it("is not judged by its pid, which runs nowhere here: waited for, naming its holder, while its holder touches it", async () => {
        const { path, lock } = store();
        const pid = deadPid();
        const text = `${pid} 12345 0123456789abcdef ${elsewhere}`;
        leftLock(lock, text, 5000);
        const beat = toucher(lock);
        const said = `${lock}: another svc process holds this lock (pid ${pid} of another PID namespace, ${elsewhere}; this process runs in ${pidNamespace()}: a container and its host, or two containers, share this SVC_HOME, or a container was stopped or restarted while it held the lock) — whether it runs cannot be told from here: a holder touches the lock every 5 s, and one untouched for 15 s is taken over: try again`;
        await expect(withFileLock(path, () => "ran", { timeoutMs: 150 })).rejects.toThrow(said);
        expect(() => withFileLockSync(path, () => "ran", { timeoutMs: 150 })).toThrow(said);
        beat.kill("SIGKILL");
        expect(readFileSync(lock, "utf8")).toBe(text);
      });

      it.each([
        ["an hour ago", 3_600_000],
        ["an hour ahead of the clock (set back since, or touched by hand)", -3_600_000],
      ])(
        "one dated %s at its first sight is watched for FOREIGN_UNTOUCHED_MS of this process's monotonic clock before it is taken over, a store's shorter wait included",
        async (_, ageMs) => {
          const { path, lock } = store();
          const text = `${deadPid()} 12345 0123456789abcdef ${elsewhere}`;
          leftLock(lock, text, ageMs);
          vi.useFakeTimers({ toFake: ["performance"] });
          try {
            // A store's lock (its 30 s staleMs), and a tokens lock (none).
            for (const staleMs of [30_000, Number.POSITIVE_INFINITY]) {
              const taken = withFileLock(path, () => "ran", { timeoutMs: 2000, staleMs });
              await fewAttempts(lock);
              vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS - 1);
              await fewAttempts(lock);
              expect(readFileSync(lock, "utf8")).toBe(text);
              vi.advanceTimersByTime(1);
              expect(await taken).toBe("ran");
              expect(existsSync(lock)).toBe(false);
              leftLock(lock, text, ageMs);
            }
            // A blocking wait judges it by the same monotonic record.
            expect(untouchedFor(lock, text, statSync(lock).mtimeMs)).toBe(0);
            vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS);
            expect(withFileLockSync(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
          } finally {
            vi.useRealTimers();
          }
        },
      );

      it("several writers waiting for one left by a killed container all get it in turn once one of them takes it over: their waits count from then, not from their start", async () => {
        const { path, lock } = store();
        leftLock(lock, `${deadPid()} 12345 0123456789abcdef ${elsewhere}`, 0);
        vi.useFakeTimers({ toFake: ["performance"] });
        try {
          const ran: number[] = [];
          // A store's wait, shorter than FOREIGN_UNTOUCHED_MS; each holds the lock a while, as a write does,
          // so the others look at it while one of them holds it.
          const writers = [1, 2, 3, 4].map((n) =>
            withFileLock(
              path,
              async () => {
                ran.push(n);
                await sleep(50);
                return n;
              },
              { timeoutMs: 2000 },
            ),
          );
          await fewAttempts(lock);
          vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS);
          expect(await Promise.all(writers)).toEqual([1, 2, 3, 4]);
          expect(ran.sort()).toEqual([1, 2, 3, 4]);
          expect(existsSync(lock)).toBe(false);
        } finally {
          vi.useRealTimers();
        }
      });

      it("a writer that waited for it while another took it over waits its whole time for that one, then gives up naming it", async () => {
        const { path, lock } = store();
        leftLock(lock, `${deadPid()} 12345 0123456789abcdef ${elsewhere}`, 0);
        vi.useFakeTimers({ toFake: ["performance"] });
        try {
          let release: () => void = () => {};
          const released = new Promise<void>((resolve) => (release = resolve));
          let tookOver: number | undefined;
          const outcomes: (string | undefined)[] = [undefined, undefined];
          const writers = [0, 1].map((n) =>
            withFileLock(
              path,
              async () => {
                tookOver = n;
                await released;
              },
              { timeoutMs: 2000 },
            ).then(
              () => (outcomes[n] = "ran"),
              (err: Error) => (outcomes[n] = err.message),
            ),
          );
          await fewAttempts(lock);
          vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS);
          // Two attempts may both be the taker's (its takeover, then its lock): wait for it to hold the lock,
          // then for two of the other's, which can only be made after the takeover, so that its count starts
          // before the clock moves on (a loaded machine let it start 1999 ms late, and the wait ran on).
          for (let look = 0; look < 2000 && tookOver === undefined; look++) await sleep(5);
          expect(tookOver).toBeDefined();
          await fewAttempts(lock);
          const other = tookOver === 0 ? 1 : 0;
          // Its 2 s count from the takeover (the simulated clock stands still meanwhile).
          vi.advanceTimersByTime(1999);
          await fewAttempts(lock, writers[other]);
          expect(outcomes).toEqual([undefined, undefined]);
          vi.advanceTimersByTime(2);
          await fewAttempts(lock, writers[other]);
          expect(outcomes[other]).toBe(
            `${lock}: another svc process holds this lock — try again, or remove the file if no svc is running`,
          );
          release();
          await Promise.all(writers);
          expect(outcomes[tookOver as number]).toBe("ran");
        } finally {
          vi.useRealTimers();
        }
      });

      it("a step of the system clock, either way, does not make a lock its holder touches look untouched; once left untouched it is taken over", async () => {
        const { path, lock } = store();
        const text = `${deadPid()} 12345 0123456789abcdef ${elsewhere}`;
        vi.useFakeTimers({ toFake: ["performance", "Date"] });
        try {
          for (const step of [3_600_000, -3_600_000]) {
            leftLock(lock, text, 0);
            // A tokens lock: its holder may be sending a refresh token.
            const taken = withFileLock(path, () => "ran", {
              timeoutMs: 60_000,
              staleMs: Number.POSITIVE_INFINITY,
            });
            await fewAttempts(lock);
            vi.setSystemTime(Date.now() + step);
            vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS - 5000);
            // Its holder's heartbeat (its own clock's time).
            const touched = new Date(statSync(lock).mtimeMs + HEARTBEAT_MS);
            utimesSync(lock, touched, touched);
            await fewAttempts(lock);
            vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS - 1);
            await fewAttempts(lock);
            expect(readFileSync(lock, "utf8")).toBe(text);
            vi.advanceTimersByTime(1);
            expect(await taken).toBe("ran");
          }
        } finally {
          vi.useRealTimers();
        }
      });

      it("a holder that touches it is waited for however long it holds it, and the wait gives up after its time", async () => {
        const { path, lock } = store();
        const text = `${deadPid()} 12345 0123456789abcdef ${elsewhere}`;
        leftLock(lock, text, 0);
        vi.useFakeTimers({ toFake: ["performance"] });
        try {
          const waiting = withFileLock(path, () => "ran", {
            timeoutMs: 120_000,
            staleMs: Number.POSITIVE_INFINITY,
          }).then(
            () => "ran",
            (err: Error) => err.message,
          );
          for (let beat = 1; beat <= 10; beat++) {
            await fewAttempts(lock, waiting);
            vi.advanceTimersByTime(FOREIGN_UNTOUCHED_MS - 1);
            const touched = new Date(statSync(lock).mtimeMs + HEARTBEAT_MS);
            utimesSync(lock, touched, touched);
          }
          expect(readFileSync(lock, "utf8")).toBe(text);
          expect(await waiting).toContain(`${lock}: another svc process holds this lock (pid`);
        } finally {
          vi.useRealTimers();
        }
      });

      it("one naming this namespace, or none (an older svc's), is judged by its pid as before", async () => {
        const { path, lock } = store();
        leftLock(lock, `${deadPid()} 12345 0123456789abcdef ${pidNamespace()}`, 5000);
        expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
        leftLock(lock, `${deadPid()} 12345 0123456789abcdef`, 5000);
        expect(await withFileLock(path, () => "ran", { timeoutMs: 2000 })).toBe("ran");
      });

      it("the lock this process writes, and its writes' temp files, name its namespace", async () => {
        const { path, lock, dir } = store();
        const text = await withFileLock(path, () => readFileSync(lock, "utf8"));
        expect(text.split(" ")).toEqual([
          String(process.pid),
          expect.stringMatching(/^\d+$/),
          expect.stringMatching(/^[0-9a-f]{16}$/),
          pidNamespace(),
        ]);
        // The temp copy is made before the write's first wait.
        const writing = writeFileAtomicAsync(path, Buffer.from("{}\n"));
        const digits = /\d+/.exec(pidNamespace() as string)?.[0];
        expect(readdirSync(dir)).toEqual([
          expect.stringMatching(
            new RegExp(`^\\.store\\.json\\.${process.pid}\\.ns${digits}\\.[0-9a-f]{12}\\.tmp$`),
          ),
        ]);
        await writing;
        expect(readdirSync(dir)).toEqual(["store.json"]);
      });
    },
  );

  it("its holder touches the lock every few seconds while it holds it, and stops at its release", async () => {
    const { path, lock } = store();
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const old = new Date(Date.now() - 60_000);
      await withFileLock(path, () => {
        utimesSync(lock, old, old);
        vi.advanceTimersByTime(HEARTBEAT_MS - 1);
        expect(Math.round(statSync(lock).mtimeMs)).toBe(old.getTime());
        vi.advanceTimersByTime(1);
        expect(statSync(lock).mtimeMs).toBeGreaterThan(old.getTime() + 30_000);
        // Not a lock it holds any more (taken over meanwhile): left as it is.
        writeFileSync(lock, "424242");
        utimesSync(lock, old, old);
        vi.advanceTimersByTime(HEARTBEAT_MS);
        expect(Math.round(statSync(lock).mtimeMs)).toBe(old.getTime());
        rmSync(lock);
      });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a beat told whose the file is (holds) leaves it untouched while it is another's, though its text is the same (gateway.pid's bare pid 1 of two containers)", () => {
    const { path } = store();
    writeFileSync(path, "1\n");
    let ours = true;
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const stop = heartbeat(path, "1\n", { holds: () => ours });
      const old = new Date(Date.now() - 60_000);
      const untouched = () => Math.round(statSync(path).mtimeMs) === old.getTime();
      utimesSync(path, old, old);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(untouched()).toBe(false);
      // Another process's now (a gateway of another PID namespace, also pid 1 there, took the home over).
      ours = false;
      utimesSync(path, old, old);
      vi.advanceTimersByTime(3 * HEARTBEAT_MS);
      expect(untouched()).toBe(true);
      ours = true;
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(untouched()).toBe(false);
      stop();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a store that is a symbolic link is locked beside its target: two links to one file share one lock", async () => {
    const { path, dir } = store();
    writeFileSync(path, "{}\n");
    const homes = [join(dir, "a"), join(dir, "b")];
    const links = homes.map((home) => {
      mkdirSync(home);
      symlinkSync(path, join(home, "store.json"));
      return join(home, "store.json");
    });
    const [first, second] = links as [string, string];
    await withFileLock(first, async () => {
      expect(existsSync(`${path}.lock`)).toBe(true);
      expect(existsSync(`${first}.lock`)).toBe(false);
      await expect(withFileLock(second, () => "ran", { timeoutMs: 150 })).rejects.toThrow(
        `${path}.lock: another svc process holds this lock`,
      );
      expect(() => withFileLockSync(second, () => "ran", { timeoutMs: 150 })).toThrow(
        `${path}.lock: another svc process holds this lock`,
      );
    });
    expect(withFileLockSync(second, () => existsSync(`${path}.lock`))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(["a", "b", "store.json"]);
  });

  it("a fresh lock of a live process is waited for, then the wait gives up naming the lock file", async () => {
    const { path, lock } = store();
    writeFileSync(lock, String(process.pid));
    await expect(withFileLock(path, () => "ran", { timeoutMs: 150 })).rejects.toThrow(
      `${lock}: another svc process holds this lock`,
    );
    expect(readFileSync(lock, "utf8")).toBe(String(process.pid));
  });

  it("the wait gives up after its time even when the clock is set back meanwhile (NTP)", async () => {
    const { path, lock } = store();
    // A live holder: a dead one's lock is taken over once the clock is set back a second past it.
    const holder = spawn("sleep", ["30"]);
    writeFileSync(lock, `${holder.pid} ${processStartTime(holder.pid as number)} 0123456789abcdef`);
    // Only Date is faked: the waits between attempts stay real.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const stepBack = setTimeout(() => vi.setSystemTime(Date.now() - 3_600_000), 30);
      const gaveUp = withFileLock(path, () => "ran", { timeoutMs: 150 }).then(
        () => "ran",
        (err: Error) => err.message,
      );
      const ended = await Promise.race([
        gaveUp,
        new Promise((resolve) => setTimeout(() => resolve("still waiting"), 3000)),
      ]);
      clearTimeout(stepBack);
      expect(ended).toContain(`${lock}: another svc process holds this lock`);
    } finally {
      vi.useRealTimers();
      holder.kill("SIGKILL");
    }
  });
});
