import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { makeDirs } from "./makeDirs.js";
import { narrowOpenFile } from "./privateMode.js";

/** Flags of "a" (append, create) with O_NONBLOCK: see createBatchedFileWriter's open. */
const APPEND_NONBLOCK = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK;

/**
 * Text written during one turn of the event loop goes out as one synchronous write at the end of that
 * turn (`setImmediate`), on `flush()`, and when the process exits. On a busy gateway this turns one
 * write per log line or run record into one write per batch.
 *
 * Synchronous on purpose: measured on this class of machine, an asynchronous `fs.write` costs ~30 µs of
 * CPU (thread-pool hand-off and wake-ups) against ~2 µs for a 1 KB `writeSync`, so async writes only
 * pay off for very large batches, and they leave lines in flight when the process dies.
 */
export interface BatchedWriter {
  write(text: string): void;
  /** Writes whatever is pending now. */
  flush(): void;
  /** Flushes, then stops: later writes are dropped (and reported once to `onError`). */
  close(): void;
}

const open = new Set<{ flush(): void }>();
let exitHookInstalled = false;

function flushAllOnExit(): void {
  for (const writer of open) writer.flush();
}

/**
 * The turn-end scheduling both writers share: what `take` hands out (emptying the batch; undefined when
 * it is empty) is written by `sink` at the end of the turn it was first added in, on `flush()`, on
 * `close()` and at exit.
 */
function batching<T>(
  take: () => T | undefined,
  sink: (batch: T) => void,
  onError: (err: unknown) => void,
  onClose: (() => void) | undefined,
): Omit<BatchedWriter, "write"> & { added(): boolean; deferTo(drain: () => void): () => boolean } {
  let scheduled = false;
  let closed = false;
  /** A write after close was reported: the later ones are dropped in silence (once, as documented). */
  let reportedLate = false;
  /** What adds the writes left for the turn's end (`deferTo`), before its batch is taken. */
  let deferred: (() => void) | undefined;
  const core = {
    flush() {
      // Still scheduled while it runs: its writes join this batch instead of scheduling another turn.
      if (deferred !== undefined) {
        try {
          deferred();
        } catch (err) {
          onError(err);
        }
      }
      scheduled = false;
      const batch = take();
      if (batch === undefined) return;
      try {
        sink(batch);
      } catch (err) {
        onError(err);
      }
    },
    close() {
      if (closed) return;
      core.flush();
      closed = true;
      open.delete(core);
      onClose?.();
    },
    /** Before each addition: false (reported) once closed; schedules the turn's write. */
    added() {
      if (closed) {
        if (!reportedLate) onError(new Error("write after close"));
        reportedLate = true;
        return false;
      }
      if (!scheduled) {
        scheduled = true;
        setImmediate(core.flush);
      }
      return true;
    },
    deferTo(drain: () => void) {
      deferred = drain;
      return core.added;
    },
  };
  open.add(core);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", flushAllOnExit);
  }
  return core;
}

/**
 * `sink` receives each batch; a throw is handed to `onError` and that batch is dropped (the writer
 * keeps going: a full disk must not stop the gateway).
 */
export function createBatchedWriter(
  sink: (text: string) => void,
  onError: (err: unknown) => void,
  onClose?: () => void,
): BatchedWriter {
  let texts: string[] = [];
  const take = () => {
    if (texts.length === 0) return undefined;
    const batch = texts.length === 1 ? (texts[0] as string) : texts.join("");
    texts = [];
    return batch;
  };
  const { flush, close, added } = batching(take, sink, onError, onClose);
  return {
    write(text) {
      if (added()) texts.push(text);
    },
    flush,
    close,
  };
}

/** The byte writer's buffer at first, and the most it keeps between batches. */
const BYTE_BATCH_START = 64 * 1024;
const BYTE_BATCH_KEPT = 1024 * 1024;
/** Past this many UTF-16 units, a text's room in the byte writer's buffer is its measured UTF-8 length. */
const LONG_TEXT = 16 * 1024;
const LF = 0x0a;

/** A batched writer that also takes bytes as they are (no decoding to text and back). */
export interface BatchedByteWriter extends BatchedWriter {
  writeBytes(bytes: Uint8Array): void;
  /**
   * Work left for the turn's end: `drain` writes it, and is called before each batch is taken (the turn's
   * end, `flush()`, `close()`, exit). The function returned says the current turn has some (it schedules
   * the turn's write); false, reported once, after `close()`.
   */
  deferTo(drain: () => void): () => boolean;
}

/**
 * Like `createBatchedWriter`, but the turn's text and bytes are encoded into one buffer kept from batch to
 * batch: no joined string and no buffer per batch for the garbage collector. `sink` gets a view of that
 * buffer, valid only until it returns, so it must write synchronously (a file, not a stream).
 */
export function createBatchedByteWriter(
  sink: (bytes: Buffer) => void,
  onError: (err: unknown) => void,
  onClose?: () => void,
): BatchedByteWriter {
  let buffer = Buffer.allocUnsafeSlow(BYTE_BATCH_START);
  let used = 0;
  const room = (most: number) => {
    if (used + most <= buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * buffer.length, used + most));
    buffer.copy(grown, 0, 0, used);
    buffer = grown;
  };
  const take = () => {
    if (used === 0) return undefined;
    const batch = buffer.subarray(0, used);
    used = 0;
    return batch;
  };
  // A turn of large payloads grows the buffer; once written, it is not kept at that size.
  const write = (batch: Buffer) => {
    try {
      sink(batch);
    } finally {
      if (buffer.length > BYTE_BATCH_KEPT) buffer = Buffer.allocUnsafeSlow(BYTE_BATCH_START);
    }
  };
  const { flush, close, added, deferTo } = batching(take, write, onError, onClose);
  return {
    write(text) {
      if (!added()) return;
      // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4); a long text
      // (a large prompt in a run journal line) is measured, not given three times its length.
      room(text.length <= LONG_TEXT ? text.length * 3 : Buffer.byteLength(text, "utf8"));
      used += buffer.write(text, used, "utf8");
    },
    writeBytes(bytes) {
      if (!added()) return;
      room(bytes.length);
      buffer.set(bytes, used);
      used += bytes.length;
    },
    deferTo,
    flush,
    close,
  };
}

export interface BatchedFileOptions {
  /**
   * The line written first once a write succeeds after failed ones, given how many lines they dropped and
   * the first one's error (the log's note of its gap); none by default.
   */
  readonly gapLine?: (lines: number, err: unknown) => string;
  /**
   * Whether each opening of the file (the first, and each reopen after it was moved away or could not be
   * opened) ends a last line cut short (a crash, a full disk) with a line break first, so the next line is
   * not glued to it and lost with it; off by default.
   */
  readonly endTornLine?: boolean;
}

/**
 * A batched writer appending to `file` (created with `mode`, e.g. 0o600 for records of runs). A batch whose
 * write fails (a full disk) is dropped and reported to `onError` once, not again until a write succeeds: a
 * busy gateway would otherwise report one per event-loop turn for as long as the disk stays full.
 */
export function createBatchedFileWriter(
  file: string,
  mode: number,
  onError: (err: unknown) => void,
  { gapLine, endTornLine = false }: BatchedFileOptions = {},
): BatchedWriter {
  // A file that already existed gets `mode` too: it holds what the new lines hold. Its directory is made
  // again when it was removed (`rm -rf logs`), private as at the start.
  const open = () => {
    makeDirs(dirname(file));
    const torn = endTornLine && endsMidLine(file);
    // O_NONBLOCK: a named pipe in the file's place with no reader fails to open (ENXIO) and a full one fails
    // a write (EAGAIN), dropped and said as any failed write, instead of holding the gateway's one thread.
    let opened: number;
    try {
      opened = openSync(file, APPEND_NONBLOCK, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
      throw new Error(
        `${file} is a named pipe that no program reads (ENXIO) — start the program that reads it first, or move the pipe away (svc then writes a file there)`,
        { cause: err },
      );
    }
    narrowOpenFile(opened, mode);
    if (torn) {
      try {
        writeBytesSync(opened, LINE_BREAK);
      } catch (err) {
        closeSync(opened);
        throw err;
      }
    }
    return opened;
  };
  /**
   * The descriptor held, or undefined once closed for a reopen that failed: its number may by then be
   * another file's or a socket's, which must never be looked at, written or closed as this file.
   */
  let fd: number | undefined = open();
  let checkedAt = Date.now();
  let failing = false;
  /** Lines of the batches dropped since the last write that succeeded, and why the first was. */
  let dropped = 0;
  let droppedWhy: unknown;
  // The turn's lines are encoded into one buffer kept from batch to batch: no joined string per batch.
  return createBatchedByteWriter(
    (batch) => {
      const bytes =
        dropped > 0 && gapLine !== undefined
          ? Buffer.concat([Buffer.from(gapLine(dropped, droppedWhy), "utf8"), batch])
          : batch;
      try {
        const now = Date.now();
        // A clock set back (an NTP step) looks now too: waiting for it to come round again would write to
        // a rotated-away file, or drop every batch after a failed reopen, for as long as the step.
        if (now - checkedAt >= ROTATION_CHECK_MS || now < checkedAt) {
          checkedAt = now;
          if (fd === undefined || pathMovedFrom(file, fd)) {
            if (fd !== undefined) closeSync(fd);
            fd = undefined;
            fd = open();
          }
        }
        // Not reopened yet (the last try failed): the batch is dropped, as a failed write's; tried again a second later.
        if (fd === undefined)
          throw new Error(`${file} is not open (reopening it failed; tried again each second)`);
        writeBytesSync(fd, bytes);
        failing = false;
        dropped = 0;
      } catch (err) {
        if (!failing) onError(err);
        failing = true;
        if (gapLine === undefined) return;
        if (dropped === 0) droppedWhy = err;
        for (let at = batch.indexOf(LF); at !== -1; at = batch.indexOf(LF, at + 1)) dropped += 1;
      }
    },
    onError,
    () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  );
}

const LINE_BREAK = Buffer.from("\n");

/** Read-only, not waiting: a named pipe in the file's place opens at once instead of waiting for a writer. */
const READ_NONBLOCK = constants.O_RDONLY | constants.O_NONBLOCK;

/** Whether `file` exists, is a regular file and its last byte is not a line break. */
function endsMidLine(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, READ_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stat = fstatSync(fd);
    // Not a file (a named pipe, a directory): the open for appending says what is wrong with it.
    if (!stat.isFile()) return false;
    const { size } = stat;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== LF;
  } finally {
    closeSync(fd);
  }
}

/** How often a batched file writer looks whether its file was rotated away (a stat, at most once a second). */
export const ROTATION_CHECK_MS = 1000;

/**
 * Whether `file` no longer names the file `fd` holds: renamed away (logrotate's default) or removed since
 * it was opened, so what is written to `fd` would never be read at that path. A path this user may no
 * longer look up (its directory made unsearchable while the gateway runs) says neither: the held file,
 * which can still be written, is taken to be there, rather than closed for one that cannot be opened.
 */
export function pathMovedFrom(file: string, fd: number): boolean {
  try {
    const named = statSync(file);
    const held = fstatSync(fd);
    return named.ino !== held.ino || named.dev !== held.dev;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== "EACCES" && code !== "EPERM";
  }
}

/**
 * Writes all of `text` to `fd` and returns its size in bytes. The string goes to `writeSync` as it is (Node
 * encodes it without a JS Buffer: measured 20–60 % cheaper than `Buffer.from` + `writeSync` for one turn's
 * batch, and no buffer left for the GC); only a short write (rare for regular files) encodes the rest.
 * A write the disk takes only in part is cut back, as `writeBytesSync`'s.
 */
export function writeTextSync(fd: number, text: string): number {
  const bytes = Buffer.byteLength(text, "utf8");
  const written = writeSync(fd, text, null, "utf8");
  if (written < bytes) writeFrom(fd, Buffer.from(text, "utf8"), written);
  return bytes;
}

/**
 * Writes all of `bytes` to `fd` (a short write, rare for regular files, is continued) and returns its size.
 * `fd` is written at its end (a file opened for appending, or one written from its start): a write the disk
 * takes only in part (full: the kernel writes what fits, and the write of the rest fails) is cut back to
 * where it started before the error is thrown, so no cut-off line is left for the next batch to join.
 */
export function writeBytesSync(fd: number, bytes: Uint8Array): number {
  writeFrom(fd, bytes, 0);
  return bytes.length;
}

/** Writes `bytes` from `from` on (the bytes before it are written already); see `writeBytesSync`. */
function writeFrom(fd: number, bytes: Uint8Array, from: number): void {
  let written = from;
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  } catch (err) {
    if (written > 0) cutBack(fd, written);
    throw err;
  }
}

/** Takes the last `count` bytes off the end of `fd`'s file; when that fails too, the error thrown says enough. */
function cutBack(fd: number, count: number): void {
  try {
    ftruncateSync(fd, Math.max(0, fstatSync(fd).size - count));
  } catch {
    // The part stays: a reader skips the cut-off line (the history, the run journals), as after a crash.
  }
}
