import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createHistoryWriter,
  historyOfIds,
  recentDeliveries,
} from "../../../src/io/stores/deliveryHistory.js";
import { historyDirProblem } from "../../../src/io/stores/historyDirProblem.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A named pipe in history.jsonl's place (made by hand, for a log shipper) was opened by the gateway as if
 * it were the file: its start went on, and once the pipe's 64 KiB buffer was full with nobody reading, a
 * write blocked the gateway's one thread — no request, not even /health, was answered again.
 * `svc webhook deliveries` and `redeliver` waited forever on opening it. `svc config check` already said
 * that the start would be refused; now it is, and the commands refuse it too.
 */
describe("a named pipe in the delivery history file's place", () => {
  const withPipe = () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    execFileSync("mkfifo", ["-m", "600", join(dir, "history.jsonl")]);
    return dir;
  };

  it("refuses the gateway's start, as svc config check says it would", () => {
    const dir = withPipe();
    expect(() => createHistoryWriter(dir, () => {})).toThrow(
      `${dir}: the delivery history cannot be opened (${join(dir, "history.jsonl")} is not a file) — move away what is in the place of history.jsonl (the gateway writes its history file there), or set platforms.webhook.delivery_history: false`,
    );
  });

  it("is refused by the readers at once, not waited on", () => {
    const dir = withPipe();
    const refusal = `${join(dir, "history.jsonl")}: the delivery history cannot be read (it is not a file) — move away what is in its place: the gateway writes its history there`;
    expect(() => recentDeliveries(dir, 20, undefined)).toThrow(refusal);
    expect(() => historyOfIds(dir, () => true)).toThrow(refusal);
  });
});

describe("a file in the delivery history directory's place", () => {
  it("is named by the readers as what to move away, not a history file inside it", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    home.write("deliveries", "not a directory\n");
    const refusal = `${dir}: the delivery history cannot be read (${dir} is not a directory) — move away what is in its place: the gateway keeps its history in that directory`;
    expect(() => recentDeliveries(dir, 20, undefined)).toThrow(refusal);
    expect(() => historyOfIds(dir, () => true)).toThrow(refusal);
    // A file above it (SVC_HOME itself) keeps the errno, by which the CLI says SVC_HOME is the problem.
    expect(() => recentDeliveries(join(dir, "deliveries"), 20, undefined)).toThrow(/\(ENOTDIR: /);
  });
});

// Seen: "… (<dir> is not a directory) — move away what is in its place" and, at the start, "… (EEXIST: file already
// exists, mkdir '<dir>') — make it a directory this user can write (move away what is in its place)": the device is
// the system's, the link is what to change.
describe("a link to a device in the delivery history directory's place (deliveries -> /dev/null)", () => {
  const linked = () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    symlinkSync("/dev/null", dir);
    return dir;
  };
  const cause = (dir: string) => `${dir} is a symbolic link to /dev/null, which is a device, not a directory`;
  const fix = "point the link at a directory, or remove the link (the gateway makes the directory)";

  it("refuses the gateway's start naming the device and the link to change, as svc config check says it", () => {
    const dir = linked();
    const refusal = `${dir}: the delivery history cannot be opened (${cause(dir)}) — ${fix}, or set platforms.webhook.delivery_history: false`;
    expect(() => createHistoryWriter(dir, () => {})).toThrow(refusal);
    expect(historyDirProblem(dir, "history.jsonl")).toBe(refusal);
  });

  it("is named so by the readers", () => {
    const dir = linked();
    const refusal = `${dir}: the delivery history cannot be read (${cause(dir)}) — ${fix}`;
    expect(() => recentDeliveries(dir, 20, undefined)).toThrow(refusal);
    expect(() => historyOfIds(dir, () => true)).toThrow(refusal);
  });
});
