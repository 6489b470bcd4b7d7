import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A disk that fills up takes a batch only in part: the kernel writes what fits and reports the short count,
 * and the write of the rest fails (ENOSPC; here EFBIG, a process whose files may not grow past 64 KiB,
 * `ulimit -f`, as a full disk without root). The part written was left at the file's end, so the first
 * batch written once there was room again was glued to a cut-off line: seen on a full 2 MB tmpfs, a
 * gateway.log line `... could not be r2026-12-01T17:38:48.142Z INFO ...` and a delivery history whose first
 * request after the outage was lost with the torn line (`svc webhook deliveries`: `request not in this
 * history`).
 */

let home: TempHome;
afterEach(() => home?.cleanup());

const module = (path: string) => JSON.stringify(pathToFileURL(svcModule(path)).href);

/** Runs an ES module script with files limited to 64 KiB; its stdout. */
async function withFileSizeLimit(script: string): Promise<string> {
  const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
  const { stdout } = await execa("bash", ["-c", 'ulimit -f 64 && exec "$@"', "bash", ...node], {
    cwd: resolve(import.meta.dirname, "../../.."),
  });
  return stdout;
}

describe("a batch the disk takes only in part", () => {
  it("is cut back from gateway.log, so the line after the outage starts a line of its own", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    const stdout = await withFileSizeLimit(`
      import { createLogger } from ${module("io/log.js")};
      const logger = createLogger({ file: ${JSON.stringify(file)}, stdout: false, buffered: true });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      logger.info("a".repeat(50 * 1024));
      await turn();
      logger.info("b".repeat(20 * 1024));
      await turn();
      logger.info("after");
      await turn();
      console.log("done");`);
    expect(stdout).toBe("done");
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.map((line) => line.replace(/^\S+ /, "").slice(0, 12))).toEqual([
      `INFO ${"a".repeat(7)}`,
      "INFO after",
      "",
    ]);
  }, 30_000);

  it("is cut back from the delivery history, so the first record after the outage is kept", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const stdout = await withFileSizeLimit(`
      import { createHistoryWriter, readHistory } from ${module("io/stores/deliveryHistory.js")};
      const errors = [];
      const writer = createHistoryWriter(${JSON.stringify(dir)}, (err) => errors.push(err.code));
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      const at = new Date().toISOString();
      const request = (id, size) => ({ kind: "request", id, at, route: "pr", status: 202, outcome: "accepted",
        content_type: "text/plain", payload_encoding: "utf8", payload: "x".repeat(size) });
      writer.record(request("first", 50 * 1024));
      await turn();
      writer.record(request("cut", 20 * 1024));
      await turn();
      writer.record(request("after", 10));
      await turn();
      writer.close();
      console.log(JSON.stringify({ errors, ids: readHistory(${JSON.stringify(dir)}).map((r) => r.id) }));`);
    expect(JSON.parse(stdout)).toEqual({ errors: ["EFBIG"], ids: ["first", "after"] });
  }, 30_000);

  it("is cut back from a day's run journal, so the next run's line is kept", async () => {
    home = tempHome();
    const sessions = join(home.dir, "sessions");
    const stdout = await withFileSizeLimit(`
      import { createRunJournal, findRunSession } from ${module("io/sessions/runJournal.js")};
      const errors = [];
      const journal = createRunJournal(${JSON.stringify(sessions)}, (err) => errors.push(err.code));
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      const run = (deliveryId, size) => ({ route: "pr", deliveryId, prompt: "p".repeat(size), reply: "r" });
      journal.record(run("first", 50 * 1024));
      await turn();
      journal.record(run("cut", 20 * 1024));
      await turn();
      journal.record(run("after", 10));
      await turn();
      await journal.close();
      const found = (id) => findRunSession(${JSON.stringify(sessions)}, "webhook:pr:" + id) !== undefined;
      console.log(JSON.stringify({ errors, found: ["first", "cut", "after"].map(found) }));`);
    expect(JSON.parse(stdout)).toEqual({ errors: ["EFBIG"], found: [true, false, true] });
  }, 30_000);
});
