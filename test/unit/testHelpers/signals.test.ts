import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alive, pidInFile, signalGroup, signallable, signalProcess } from "../../helpers/process.js";

/**
 * A test that signals pid 0 signals its own process group: the worker, vitest and the CI script that
 * started them all end with it (a CI run once ended so, exit 137, when a pid file was read while still
 * empty). The helpers refuse such a pid, and test code signals other processes only through them.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("signalling processes from tests", () => {
  it.each([0, 1, -1, -42, Number.NaN, 2.5])(
    "refuses pid %s, which would reach the test run itself",
    (pid) => {
      expect(() => signallable(pid)).toThrow(/^refusing to signal pid/);
      expect(() => alive(pid)).toThrow(/^refusing to signal pid/);
      expect(() => signalProcess(pid, "SIGKILL")).toThrow(/^refusing to signal pid/);
      expect(() => signalGroup(pid, "SIGKILL")).toThrow(/^refusing to signal pid/);
    },
  );

  it("signals a process and its group, and says when it is gone", async () => {
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    const pid = child.pid as number;
    const exited = new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    expect(alive(pid)).toBe(true);
    expect(signalGroup(pid, "SIGTERM")).toBe(true);
    expect(await exited).toBe("SIGTERM");
    expect(alive(pid)).toBe(false);
    expect(signalProcess(pid, "SIGKILL")).toBe(false);
    expect(signalGroup(pid, "SIGKILL")).toBe(false);
  });

  it("pidInFile waits until the file holds a whole pid, not the empty file a shell creates first", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-pid-"));
    dirs.push(dir);
    const file = join(dir, "agent.pid");
    writeFileSync(file, "");
    const read = pidInFile(file, 5000);
    setTimeout(() => writeFileSync(file, "4242\n"), 100);
    expect(await read).toBe(4242);
    writeFileSync(file, "");
    await expect(pidInFile(file, 100)).rejects.toThrow(`no pid in ${file} after 100 ms (it holds "")`);
  });

  it("test code signals other processes only through test/helpers/process.ts", () => {
    const root = join(import.meta.dirname, "../../..");
    const raw: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== "node_modules" && entry.name !== "fixtures") walk(path);
        } else if (/\.(ts|mjs|js)$/.test(entry.name)) {
          const lines = readFileSync(path, "utf8").split("\n");
          lines.forEach((line, i) => {
            if (/process\.kill\((?!process\.pid\b)/.test(line)) raw.push(`${relative(root, path)}:${i + 1}`);
          });
        }
      }
    };
    for (const dir of ["test", "bench"]) walk(join(root, dir));
    expect(raw.filter((at) => !at.startsWith("test/helpers/process.ts:"))).toEqual([]);
  });
});
