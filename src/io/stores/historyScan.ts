import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { holdsLaterHead } from "./gluedRecord.js";
import { historyReadError } from "./historyText.js";

/** How much of a history file one read takes, from its end. */
export const SCAN_CHUNK_BYTES = 256 * 1024;

/** Reads of both files before they are taken as found: a rotation comes at most once per file's size. */
export const READ_ATTEMPTS = 3;

const LF = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** One history file held open: its bytes up to `size`, as they were when it was opened. */
interface HeldFile {
  readonly fd: number;
  readonly size: number;
  readonly ino: number;
  readonly path: string;
}

/** Both files of one generation, held open: a rotation after the open no longer changes what is read. */
export interface HistoryGeneration {
  /** The previous file, then the current one; absent files left out. */
  readonly files: readonly HeldFile[];
  readonly dir: string;
  close(): void;
}

export interface ScanOptions {
  /** Bytes per read (tests make records span reads). */
  readonly chunkBytes?: number;
  /** Called after each file is opened (tests rotate the history there, as the gateway may). */
  readonly opened?: (name: string) => void;
}

function openHeld(dir: string, name: string): HeldFile | undefined {
  const path = join(dir, name);
  let fd: number;
  try {
    // Without O_NONBLOCK a named pipe in the file's place would hold the open until something writes to it.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const error = historyReadError(dir, path, err);
    if (error === undefined) return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    // A directory in its place opens, but is no history: its read fails as reading the file whole does.
    if (stat.isDirectory()) readSync(fd, Buffer.alloc(1), 0, 1, 0);
    // A named pipe, socket or device: no history, and reading one could wait for ever.
    if (!stat.isFile()) throw new Error("it is not a file");
    return { fd, size: stat.size, ino: stat.ino, path };
  } catch (err) {
    closeSync(fd);
    throw historyReadError(dir, path, err) ?? err;
  }
}

/** The inode of the file at `path` (undefined when there is none): a rotation gives the path another one. */
export function currentIno(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Opens `previous` and `current` of one generation: a rotation between the two opens (the gateway writing
 * while `svc webhook deliveries` reads) would give the file before the previous one and the new current
 * one, without the whole generation in between; both are opened again then. Once both are open, what a
 * later rotation does to the paths no longer changes what is read.
 */
export function openGeneration(
  dir: string,
  previous: string,
  current: string,
  opened?: (name: string) => void,
): HistoryGeneration {
  for (let attempt = 1; ; attempt++) {
    const before = currentIno(join(dir, current));
    const files: HeldFile[] = [];
    const close = () => {
      for (const file of files) closeSync(file.fd);
    };
    try {
      for (const name of [previous, current]) {
        const file = openHeld(dir, name);
        if (file !== undefined) files.push(file);
        opened?.(name);
      }
    } catch (err) {
      close();
      throw err;
    }
    const held = files.find((file) => file.path === join(dir, current));
    if (attempt === READ_ATTEMPTS || held?.ino === before) return { files, dir, close };
    close();
  }
}

/**
 * Visits a line's bytes (`buf[start, end)`, no line break); returns true to stop the scan. The buffer is
 * reused by the next read: a line is decoded or parsed before the visit returns.
 */
export type LineVisit = (buf: Buffer, start: number, end: number) => boolean | undefined;

/**
 * The lines of a generation newest first (the current file from its end, then the previous one), a chunk
 * per `next`: the same lines as splitting each file's text on line breaks, the last one without its break
 * (a line being written) too. A line spanning chunks is visited once whole; line breaks are single bytes
 * that are never part of a UTF-8 sequence, so a character split across chunks is decoded whole.
 */
export function linesNewestFirst(generation: HistoryGeneration, chunkBytes = SCAN_CHUNK_BYTES) {
  const files = [...generation.files].reverse();
  let index = 0;
  let pos = files[0]?.size ?? 0;
  /** The bytes before the first line break of the chunks read so far of this file: a line's start is older. */
  let carry = Buffer.alloc(0);
  return {
    /** Reads the next chunk and visits its lines; false once every line was visited or a visit stopped. */
    next(visit: LineVisit): boolean {
      const file = files[index];
      if (file === undefined) return false;
      const start = Math.max(0, pos - chunkBytes);
      const buf = Buffer.allocUnsafe(pos - start + carry.length);
      let got = 0;
      try {
        while (got < pos - start) {
          const n = readSync(file.fd, buf, got, pos - start - got, start + got);
          if (n === 0) break;
          got += n;
        }
      } catch (err) {
        throw historyReadError(generation.dir, file.path, err) ?? err;
      }
      // Fewer bytes than the size it had when opened: a batch the disk took only in part was cut back off
      // its end; what is left is read as it is now.
      carry.copy(buf, got);
      const bytes = buf.subarray(0, got + carry.length);
      pos = start;
      let end = bytes.length;
      while (end > 0) {
        const lf = bytes.lastIndexOf(LF, end - 1);
        if (lf < 0) break;
        if (visit(bytes, lf + 1, end) === true) return false;
        end = lf;
      }
      carry = bytes.subarray(0, end);
      if (pos > 0) return true;
      // The file's first line, then the next (older) file.
      const stop = visit(carry, 0, carry.length) === true;
      carry = Buffer.alloc(0);
      index++;
      pos = files[index]?.size ?? 0;
      return !stop && index < files.length;
    },
  };
}

/** The heads the gateway writes every record's line with, before its ID (historyLine). */
const HEADS = ['{"kind":"request","id":', '{"kind":"run","id":', '{"kind":"delivery","id":'].map((head) =>
  Buffer.from(head),
);

function startsWith(buf: Buffer, start: number, end: number, head: Buffer): boolean {
  if (end - start < head.length) return false;
  for (let i = 0; i < head.length; i++) if (buf[start + i] !== head[i]) return false;
  return true;
}

/**
 * The delivery ID of a line the gateway wrote (its head as historyLine writes it), without parsing the
 * line; undefined for any other line (written by hand, cut short, not JSON, or holding another record's
 * head, as a payload may): it is to be parsed whole.
 */
export function lineId(buf: Buffer, start: number, end: number): string | undefined {
  const head = HEADS.find((h) => startsWith(buf, start, end, h));
  // A line with another record's head in it may be a cut line with the next record glued to it.
  if (head === undefined || holdsLaterHead(buf, start, end)) return undefined;
  const open = start + head.length;
  if (buf[open] !== QUOTE) return undefined;
  let escaped = false;
  for (let i = open + 1; i < end; i++) {
    const byte = buf[i];
    if (byte === BACKSLASH) {
      escaped = true;
      i++;
    } else if (byte === QUOTE) {
      if (!escaped) return buf.toString("utf8", open + 1, i);
      try {
        return JSON.parse(buf.toString("utf8", open, i + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
