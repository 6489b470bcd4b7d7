import { readFileSync, rmSync } from "node:fs";
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
  return (await limited(script)).stdout;
}

/** Runs an ES module script with files limited to 64 KiB; its stdout and stderr. */
function limited(script: string) {
  const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
  return execa("bash", ["-c", 'ulimit -f 64 && exec "$@"', "bash", ...node], {
    cwd: resolve(import.meta.dirname, "../../.."),
  });
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
      "WARN [log] 1",
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
      const journal = createRunJournal(${JSON.stringify(sessions)}, (err) => errors.push(err.code), () => new Date());
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

describe("a disk that stays full", () => {
  it("gateway.log's failing writes are said on stderr once per outage: again after a write succeeded", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    // Before, said once for good ('later failures are not reported'): a second outage went unsaid.
    const { stderr } = await limited(`
      import { createLogger } from ${module("io/log.js")};
      const logger = createLogger({ file: ${JSON.stringify(file)}, stdout: false, buffered: true });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      for (const line of ["a".repeat(50 * 1024), "b".repeat(20 * 1024), "c".repeat(20 * 1024), "ok", "d".repeat(20 * 1024)]) {
        logger.info(line);
        await turn();
      }`);
    expect(stderr.trim().split("\n")).toEqual([
      `[log] cannot write the log to ${file}: EFBIG: file too large, write — its lines are dropped until a write succeeds (not said again until then)`,
      `[log] cannot write the log to ${file}: EFBIG: file too large, write — its lines are dropped until a write succeeds (not said again until then)`,
    ]);
  }, 30_000);

  it("gateway.log says, once it can be written again, how many lines it is missing and why", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    // Before, the file had a silent gap: only stderr (journald, a supervisor's log) said lines were dropped.
    await limited(`
      import { createLogger } from ${module("io/log.js")};
      const logger = createLogger({ file: ${JSON.stringify(file)}, stdout: false, buffered: true });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      logger.info("a".repeat(50 * 1024));
      await turn();
      logger.info("b".repeat(20 * 1024));
      logger.warn("lost too");
      await turn();
      logger.info("c".repeat(20 * 1024));
      await turn();
      logger.info("after");
      await turn();`);
    const lines = readFileSync(file, "utf8").split("\n").slice(1, -1);
    expect(lines.map((line) => line.replace(/^\S+ /, ""))).toEqual([
      "WARN [log] 3 log line(s) could not be written to this file (EFBIG: file too large, write)",
      "INFO after",
    ]);
  }, 30_000);

  it("the gap's line says stdout had the lines only when stdout is not a file on the same disk (svc gateway start's gateway.out)", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    const script = `
      import { createLogger } from ${module("io/log.js")};
      // As the CLI does: a stdout that fails (a full disk under it) does not end the process.
      process.stdout.on("error", () => {});
      const logger = createLogger({ file: ${JSON.stringify(file)}, buffered: true });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      logger.info("a".repeat(50 * 1024));
      await turn();
      logger.info("b".repeat(20 * 1024));
      await turn();
      logger.info("c".repeat(20 * 1024));
      await turn();
      logger.info("after");
      await turn();`;
    const gapLine = () =>
      readFileSync(file, "utf8")
        .split("\n")
        .find((line) => line.includes("could not be written to this file"))
        ?.replace(/^.*\(EFBIG: file too large, write\)/, "");
    // stdout a pipe (a terminal, journald): it had them.
    await limited(script);
    expect(gapLine()).toBe(" — stdout had them");
    rmSync(join(home.dir, "logs"), { recursive: true, force: true });
    // stdout a file beside the log, as svc gateway start makes logs/gateway.out.
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    await execa("bash", ["-c", 'ulimit -f 64 && exec "$@" > "$OUT"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
      env: { OUT: join(home.dir, "gateway.out") },
    });
    expect(gapLine()).toBe(" — stdout is a file on the same disk, which may lack them too");
  }, 30_000);

  it("a run journal reports its failing writes once, not once per batch, and again only after a write succeeded", async () => {
    home = tempHome();
    const sessions = join(home.dir, "sessions");
    // Seen on a full 2 MB tmpfs: one '[webhook] run session not recorded … the disk is full' WARN per run.
    const stdout = await withFileSizeLimit(`
      import { createRunJournal } from ${module("io/sessions/runJournal.js")};
      const errors = [];
      const journal = createRunJournal(${JSON.stringify(sessions)}, (err) => errors.push(err.code), () => new Date());
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      const run = (deliveryId, size) => ({ route: "pr", deliveryId, prompt: "p".repeat(size), reply: "r" });
      const counts = [];
      for (const [id, size] of [["first", 50 * 1024], ["big-1", 20 * 1024], ["big-2", 20 * 1024], ["big-3", 20 * 1024]]) {
        journal.record(run(id, size));
        await turn();
      }
      counts.push(errors.length);
      journal.record(run("small", 10));
      await turn();
      journal.record(run("big-4", 20 * 1024));
      await turn();
      counts.push(errors.length);
      await journal.close();
      console.log(JSON.stringify(counts));`);
    expect(JSON.parse(stdout)).toEqual([1, 2]);
  }, 30_000);
});
