import { readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "../cli/svc.js";

/**
 * Spec 3.2: enable/disable/remove are serialized on the store's lock. They act on the record as it is under
 * the lock: another writer's change made while they waited is kept, not refused; a record removed
 * meanwhile is not brought back.
 */

let home: TempHome;
beforeEach(() => {
  home = tempHome();
  home.write("config.yaml", stringify(cliConfig()));
});
afterEach(() => home.cleanup());

const file = () => join(home.dir, "webhook_subscriptions.json");
const records = () => JSON.parse(readFileSync(file(), "utf8"));

/**
 * Runs `svc webhook <action> hook` while this test holds the store's lock, lets another writer change
 * the file once the command has read it and waits on the lock, then releases the lock.
 */
async function whileLocked(
  action: string,
  otherWriter: (recs: Record<string, Record<string, unknown>>) => void,
) {
  const lock = `${file()}.lock`;
  writeFileSync(lock, String(process.pid));
  const tried = lockTried(lock);
  const command = svc(home, ["webhook", action, "hook"]);
  await Promise.race([
    tried,
    command.then((res) => {
      throw new Error(`svc webhook ${action} ended before it tried the lock: ${JSON.stringify(res)}`);
    }),
  ]);
  const recs = records();
  otherWriter(recs);
  writeFileSync(file(), JSON.stringify(recs));
  rmSync(lock);
  return command;
}

/**
 * Resolves once a process tries to take `lock`: each attempt writes its text to `<lock>.<pid>.ns<pid namespace>.<random>.new`
 * and links it into place (src/io/stores/fileLock.ts), again every 100 ms at most while the lock is held.
 * The command reads the store before its first attempt, so the change made after this is one made while it
 * waited — however slow the machine — never one it read already.
 */
function lockTried(lock: string): Promise<void> {
  const attempt = new RegExp(`^${escapeRegExp(basename(lock))}\\.\\d+(?:\\.ns\\d+)?\\.[0-9a-f]+\\.new$`);
  return new Promise((resolve) => {
    const watcher = watch(dirname(lock), (_event, name) => {
      if (name === null || !attempt.test(name)) return;
      watcher.close();
      resolve();
    });
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("svc webhook disable/remove against a concurrent writer (spec 3.2)", { timeout: 60_000 }, () => {
  it("disable applies on top of a change made while it waited for the lock; the change is kept", async () => {
    expect((await svc(home, ["webhook", "subscribe", "hook", "--prompt", "old"])).code).toBe(0);
    const res = await whileLocked("disable", (recs) => {
      (recs.hook as Record<string, unknown>).prompt = "changed meanwhile";
    });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(records().hook).toMatchObject({ prompt: "changed meanwhile", enabled: false });
  });

  it("remove applies on top of a change made while it waited for the lock", async () => {
    expect((await svc(home, ["webhook", "subscribe", "hook", "--prompt", "old"])).code).toBe(0);
    const res = await whileLocked("remove", (recs) => {
      (recs.hook as Record<string, unknown>).prompt = "changed meanwhile";
    });
    expect(res.code).toBe(0);
    expect(records().hook).toBeUndefined();
  });

  it("enable of a record removed while it waited fails and does not bring it back", async () => {
    expect((await svc(home, ["webhook", "subscribe", "hook", "--prompt", "old"])).code).toBe(0);
    expect((await svc(home, ["webhook", "disable", "hook"])).code).toBe(0);
    const res = await whileLocked("enable", (recs) => {
      delete recs.hook;
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("hook was removed meanwhile");
    expect(records().hook).toBeUndefined();
  });
});

describe("svc webhook subscribe on a disabled subscription", { timeout: 60_000 }, () => {
  it("updating a disabled subscription keeps it disabled and says how to enable it", async () => {
    expect((await svc(home, ["webhook", "subscribe", "hook", "--prompt", "old"])).code).toBe(0);
    expect((await svc(home, ["webhook", "disable", "hook"])).code).toBe(0);
    const res = await svc(home, ["webhook", "subscribe", "hook", "--prompt", "new"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      "Note: hook is disabled; the gateway answers 404 until svc webhook enable hook",
    );
    expect(records().hook).toMatchObject({ prompt: "new", enabled: false });
  });
});
