import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_FILE, StateDirBusyError } from "../../../src/io/state/journal/dirLock.js";
import { Journal } from "../../../src/io/state/journal/journal.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * The state directory's LOCK names its gateway's pid; seen from another PID namespace (a gateway on the
 * host, one started in a container on the same SVC_HOME) that pid is another process or none, and the
 * lock was taken over as a dead gateway's: two gateways on one journal. The lock now records its
 * namespace, and one of another namespace is never judged dead.
 */

let home: TempHome;
afterEach(() => home.cleanup());

const openJournal = (dir: string) =>
  new Journal(
    { dir },
    () => {},
    () => [],
  );

describe("a state directory lock of another PID namespace", () => {
  it.runIf(process.platform === "linux")(
    "is kept and refuses the open, naming the namespace and what to do",
    () => {
      home = tempHome();
      const dir = join(home.dir, "state");
      mkdirSync(dir);
      // A pid that runs nowhere here (exited), written by a gateway in another namespace.
      const pid = spawnSync("true").pid as number;
      const lock = `${pid} 12345 their-token pid:[4026530000]\n`;
      writeFileSync(join(dir, LOCK_FILE), lock, { mode: 0o600 });
      let refused: unknown;
      try {
        openJournal(dir);
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(StateDirBusyError);
      expect((refused as Error).message).toBe(
        `the state directory ${dir} is in use by a gateway of another PID namespace (pid ${pid} there, pid:[4026530000]; this process runs in ${readlinkSync("/proc/self/ns/pid")}: a container and its host, or two containers, share this SVC_HOME) — whether it runs cannot be told from here: stop it where it runs, or use another SVC_HOME; if no gateway runs there any more, remove ${join(dir, LOCK_FILE)}`,
      );
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(lock);
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
