import { type ChildProcess, spawn } from "node:child_process";
import fs, {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOCK_FILE, lockStateDir, StateDirBusyError } from "../../../src/io/state/journal/dirLock.js";
import { Journal } from "../../../src/io/state/journal/journal.js";
import { leaveLockAsCrashed } from "../../helpers/crashedLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { spawnUnreaped } from "../../helpers/process.js";

const homes: TempHome[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
});

function stateDir(): string {
  const home = tempHome();
  homes.push(home);
  return home.dir;
}

const openJournal = (dir: string) =>
  new Journal(
    { dir },
    () => {},
    () => [],
  );

describe("one gateway per state directory", () => {
  it("a second journal on the same directory is refused while the first is open, and opens once it is closed", async () => {
    const dir = stateDir();
    const first = openJournal(dir);
    expect(statSync(join(dir, LOCK_FILE)).mode & 0o777).toBe(0o600);
    expect(() => openJournal(dir)).toThrow(StateDirBusyError);
    expect(() => openJournal(dir)).toThrow(/already open in this process/);
    // The refused open left the holder's lock in place.
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${process.pid} `));
    await first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const second = openJournal(dir);
    await second.close();
  });

  it("a lock held by another running process refuses the open and names its pid", () => {
    const home = stateDir();
    const dir = join(home, "state");
    mkdirSync(dir);
    const other = spawn("sleep", ["60"]);
    children.push(other);
    const start = readFileSync(`/proc/${other.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
    writeFileSync(join(dir, LOCK_FILE), `${other.pid} ${start} their-token\n`);
    writeFileSync(join(home, "gateway.pid"), `${other.pid}\n`);
    expect(() => lockStateDir(dir)).toThrow(
      `the state directory ${dir} is in use by another gateway (pid ${other.pid}) — stop it with svc gateway stop, or use another SVC_HOME`,
    );
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${other.pid} ${start} their-token\n`);
    // With gateway.pid gone, svc gateway stop says "not running": the holder is named to kill instead.
    rmSync(join(home, "gateway.pid"));
    expect(() => lockStateDir(dir)).toThrow(
      `the state directory ${dir} is in use by another gateway (pid ${other.pid}) — stop it with kill ${other.pid} (${home}/gateway.pid does not name it, so svc gateway stop would not find it), or use another SVC_HOME`,
    );
  });

  it("a lock left by a gateway that died is taken over", () => {
    const dir = stateDir();
    leaveLockAsCrashed(dir);
    const lock = lockStateDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(
      new RegExp(`^${process.pid} \\S+ \\S+ \\S+\\n$`),
    );
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("a pid that runs again as another process (another start time, as a container's pid 1 after a restart) is stale", () => {
    const dir = stateDir();
    const other = spawn("sleep", ["60"]);
    children.push(other);
    writeFileSync(join(dir, LOCK_FILE), `${other.pid} 1 old-token\n`);
    const lock = lockStateDir(dir);
    lock.release();
  });

  it("a lock whose holder is a zombie (killed, not yet collected by its parent) is taken over", async () => {
    // The state a SIGKILLed gateway is in while its parent never waits, as under a container init that
    // reaps nothing.
    const { parent, pid: zombie } = await spawnUnreaped(["sleep", "0.1"]);
    children.push(parent);
    const stat = () => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    await vi.waitFor(() => expect(stat()[0]).toBe("Z"), { timeout: 10_000, interval: 5 });
    const dir = stateDir();
    writeFileSync(join(dir, LOCK_FILE), `${zombie} ${stat()[19]} dead-token\n`);
    const lock = lockStateDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toMatch(new RegExp(`^${process.pid} `));
    lock.release();
  });

  it("a lock taken over after this one was left for dead is not removed by the old holder's release", () => {
    const dir = stateDir();
    const old = lockStateDir(dir);
    leaveLockAsCrashed(dir);
    const current = lockStateDir(dir);
    const held = readFileSync(join(dir, LOCK_FILE), "utf8");
    old.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(held);
    expect(() => lockStateDir(dir)).toThrow(StateDirBusyError);
    current.release();
  });

  it("a gateway starting while another one's lock is being written does not find it empty and take it over", () => {
    const dir = stateDir();
    const write = fs.writeSync;
    const outcomes: string[] = [];
    const attempt = () => {
      try {
        lockStateDir(dir);
        outcomes.push("held");
      } catch (err) {
        outcomes.push(err instanceof StateDirBusyError ? "busy" : String(err));
      }
    };
    // The second start comes at the worst moment: while the first one writes its lock's text.
    let second = true;
    fs.writeSync = ((...args: Parameters<typeof write>) => {
      if (second) {
        second = false;
        attempt();
      }
      return write(...args);
    }) as typeof write;
    syncBuiltinESMExports();
    try {
      attempt();
    } finally {
      fs.writeSync = write;
      syncBuiltinESMExports();
    }
    expect(outcomes.sort()).toEqual(["busy", "held"]);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
  });

  it("a lock the close cannot remove (SVC_HOME on a file system turned read-only) does not fail the close, and the next open takes it over", async () => {
    const dir = stateDir();
    const journal = openJournal(dir);
    const rm = fs.rmSync;
    fs.rmSync = ((path: fs.PathLike, options?: fs.RmOptions) => {
      if (String(path) === join(dir, LOCK_FILE))
        throw Object.assign(new Error(`EROFS: read-only file system, unlink '${String(path)}'`), {
          code: "EROFS",
        });
      rm(path, options);
    }) as typeof rm;
    syncBuiltinESMExports();
    try {
      await expect(journal.close()).resolves.toBeUndefined();
    } finally {
      fs.rmSync = rm;
      syncBuiltinESMExports();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    await openJournal(dir).close();
  });
});
