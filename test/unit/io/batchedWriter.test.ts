import {
  closeSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type BatchedWriter,
  createBatchedByteWriter,
  createBatchedFileWriter,
  createBatchedWriter,
  ROTATION_CHECK_MS,
} from "../../../src/io/batchedWriter.js";
import { createLogger } from "../../../src/io/log.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

type TextWriterFactory = (
  sink: (text: string) => void,
  onError: (err: unknown) => void,
  onClose?: () => void,
) => BatchedWriter;

/** Both writers, the byte writer's batches read back as text (a copy: its buffer is reused). */
const writers: Array<[string, TextWriterFactory]> = [
  ["text", createBatchedWriter],
  [
    "byte",
    (sink, onError, onClose) =>
      createBatchedByteWriter((bytes) => sink(bytes.toString("utf8")), onError, onClose),
  ],
];

describe.each(writers)("batched writer (%s)", (_name, createBatchedWriter) => {
  it("writes everything from one event-loop turn as one batch, in order, at the end of the turn", async () => {
    const batches: string[] = [];
    const writer = createBatchedWriter(
      (text) => batches.push(text),
      (err) => expect.fail(String(err)),
    );
    writer.write("a\n");
    writer.write("b\n");
    writer.write("c\n");
    expect(batches).toEqual([]);
    await nextTurn();
    expect(batches).toEqual(["a\nb\nc\n"]);
    writer.write("d\n");
    await nextTurn();
    expect(batches).toEqual(["a\nb\nc\n", "d\n"]);
    writer.close();
  });

  it("flush and close write what is pending at once; a write after close is reported, not kept", () => {
    const batches: string[] = [];
    const errors: unknown[] = [];
    let closed = 0;
    const writer = createBatchedWriter(
      (text) => batches.push(text),
      (err) => errors.push(err),
      () => {
        closed += 1;
      },
    );
    writer.write("one\n");
    writer.flush();
    expect(batches).toEqual(["one\n"]);
    writer.write("two\n");
    writer.close();
    writer.close();
    expect(batches).toEqual(["one\n", "two\n"]);
    expect(closed).toBe(1);
    writer.write("three\n");
    expect(batches).toEqual(["one\n", "two\n"]);
    expect(String(errors[0])).toContain("write after close");
    // Reported once: a record of several pieces (the delivery history's) or each run ending after the
    // close logged a WARN of its own, under a message saying it is said once.
    writer.write("four\n");
    writer.write("five\n");
    expect(errors.map(String)).toEqual(["Error: write after close"]);
  });

  it("reports a failing sink and keeps writing later batches", async () => {
    let fail = true;
    const batches: string[] = [];
    const errors: unknown[] = [];
    const writer = createBatchedWriter(
      (text) => {
        if (fail) throw new Error("ENOSPC: no space left on device");
        batches.push(text);
      },
      (err) => errors.push(err),
    );
    writer.write("lost\n");
    await nextTurn();
    fail = false;
    writer.write("kept\n");
    await nextTurn();
    expect(errors.map(String)).toEqual(["Error: ENOSPC: no space left on device"]);
    expect(batches).toEqual(["kept\n"]);
    writer.close();
  });
});

describe("batched byte writer", () => {
  it("keeps text and bytes in the order written, past its first and its kept buffer size, with multi-byte characters", async () => {
    const batches: string[] = [];
    const errors: unknown[] = [];
    const writer = createBatchedByteWriter(
      (bytes) => batches.push(bytes.toString("utf8")),
      (err) => errors.push(err),
    );
    // 1,080,000 bytes of UTF-8: more than the buffer starts with, and than it keeps after the batch
    const big = "é✓😀x".repeat(120_000);
    writer.write("head:");
    writer.writeBytes(Buffer.from('{"a":"é"}'));
    writer.write(big);
    writer.writeBytes(new Uint8Array([0x7d, 0x0a]));
    await nextTurn();
    writer.write("small\n");
    await nextTurn();
    expect(batches).toEqual([`head:{"a":"é"}${big}}\n`, "small\n"]);
    writer.writeBytes(Buffer.from("late"));
    writer.close();
    writer.writeBytes(Buffer.from("after"));
    expect(batches.slice(2)).toEqual(["late"]);
    expect(errors.map(String)).toEqual(["Error: write after close"]);
  });
  it("does not keep a buffer grown past 1 MiB by one batch: the next batch is written from a 64 KiB one", async () => {
    const sizes: number[] = [];
    const writer = createBatchedByteWriter(
      (bytes) => sizes.push(bytes.buffer.byteLength),
      (err) => expect.fail(String(err)),
    );
    writer.writeBytes(Buffer.alloc(2 * 1024 * 1024, 0x61));
    await nextTurn();
    writer.write("small\n");
    await nextTurn();
    writer.close();
    expect(sizes[0]).toBeGreaterThan(2 * 1024 * 1024 - 1);
    expect(sizes[1]).toBe(64 * 1024);
  });
  it("makes room for a long text by its UTF-8 length, not three times its length (a large prompt's run journal line)", async () => {
    const sizes: number[] = [];
    const writer = createBatchedByteWriter(
      (bytes) => sizes.push(bytes.buffer.byteLength),
      (err) => expect.fail(String(err)),
    );
    writer.write("a".repeat(400 * 1024));
    await nextTurn();
    writer.close();
    expect(sizes).toEqual([400 * 1024]);
  });
});

describe("batched file writer", () => {
  it("appends to a file created with the given mode, keeping what was there", async () => {
    home = tempHome();
    const file = home.write("log.jsonl", "old\n");
    const fresh = join(home.dir, "fresh.jsonl");
    const writer = createBatchedFileWriter(file, 0o600, (err) => expect.fail(String(err)));
    const other = createBatchedFileWriter(fresh, 0o600, (err) => expect.fail(String(err)));
    writer.write("new ✓\n");
    other.write("x\n");
    await nextTurn();
    expect(readFileSync(file, "utf8")).toBe("old\nnew ✓\n");
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    writer.close();
    other.close();
  });

  it("an existing file of wider mode is narrowed to the writer's mode", () => {
    home = tempHome();
    const file = home.write("gateway.log", "old\n", 0o644);
    const writer = createBatchedFileWriter(file, 0o600, (err) => expect.fail(String(err)));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writer.close();
  });

  it("a file rotated away (renamed, as logrotate does) is reopened under its name at the next batch a second later", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      home = tempHome();
      const file = join(home.dir, "gateway.log");
      const writer = createBatchedFileWriter(file, 0o600, (err) => expect.fail(String(err)));
      writer.write("before\n");
      await nextTurn();
      renameSync(file, `${file}.1`);
      writer.write("still the old file\n");
      await nextTurn();
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("after\n");
      await nextTurn();
      expect(readFileSync(`${file}.1`, "utf8")).toBe("before\nstill the old file\n");
      expect(readFileSync(file, "utf8")).toBe("after\n");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      writer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a clock set back (an NTP step) does not put off the look at a rotated-away file until it comes round again", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      home = tempHome();
      const file = join(home.dir, "gateway.log");
      const writer = createBatchedFileWriter(file, 0o600, (err) => expect.fail(String(err)));
      writer.write("before\n");
      await nextTurn();
      vi.setSystemTime(Date.now() - 3_600_000);
      renameSync(file, `${file}.1`);
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("after\n");
      await nextTurn();
      expect(readFileSync(`${file}.1`, "utf8")).toBe("before\n");
      expect(readFileSync(file, "utf8")).toBe("after\n");
      writer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a removed directory is made again; after a reopen that failed, the closed descriptor's number is never touched", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const errors: string[] = [];
    let other: number | undefined;
    try {
      home = tempHome();
      const dir = join(home.dir, "logs");
      const file = join(dir, "gateway.log");
      const writer = createBatchedFileWriter(file, 0o600, (err) => errors.push(String(err)));
      writer.write("before\n");
      await nextTurn();
      // `rm -rf logs` while the gateway runs: the next check makes it again, private.
      rmSync(dir, { recursive: true });
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("after rm\n");
      await nextTurn();
      expect(readFileSync(file, "utf8")).toBe("after rm\n");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      // A file in the directory's place: the reopen fails and the writer's descriptor is closed. The next
      // file opened gets its number (the lowest free one), as a socket of the gateway would.
      rmSync(dir, { recursive: true });
      writeFileSync(dir, "not a directory");
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("lost\n");
      await nextTurn();
      other = openSync(join(home.dir, "other.txt"), "w");
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("lost too\n");
      await nextTurn();
      // Still open and its own: the writer neither closed nor wrote to it.
      writeSync(other, "mine\n");
      expect(readFileSync(join(home.dir, "other.txt"), "utf8")).toBe("mine\n");
      expect(errors.length).toBeGreaterThan(0);
      // Fixed: the next check opens the file again.
      rmSync(dir);
      vi.advanceTimersByTime(ROTATION_CHECK_MS);
      writer.write("back\n");
      writer.close();
      expect(readFileSync(file, "utf8")).toBe("back\n");
    } finally {
      if (other !== undefined) closeSync(other);
      vi.useRealTimers();
    }
  });

  it("a buffered logger's last lines reach the file and stdout when the process exits right after", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    const script = `
      import { createLogger } from ${JSON.stringify(pathToFileURL(svcModule("io/log.js")).href)};
      const logger = createLogger({ file: ${JSON.stringify(file)}, buffered: true });
      for (let i = 0; i < 3; i++) logger.info("line " + i);
      process.exit(0);
    `;
    const child = await execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script]);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.map((l) => l.replace(/^\S+ /, ""))).toEqual(["INFO line 0", "INFO line 1", "INFO line 2"]);
    expect(child.stdout).toMatch(/INFO line 0\n.*INFO line 1\n.*INFO line 2$/);
  });

  it("an unbuffered logger (CLI commands, tests) has each line in the file as soon as it is logged", () => {
    home = tempHome();
    const file = join(home.dir, "gateway.log");
    const logger = createLogger({ file, stdout: false });
    logger.warn("at once");
    expect(readFileSync(file, "utf8")).toMatch(/^\S+ WARN at once\n$/);
  });
});
