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
  /**
   * A generation already open (its opener closes it): reads given the same one see the same lines, with the
   * same indices, however many the gateway appends meanwhile.
   */
  readonly held?: HistoryGeneration;
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

/** The generation `options.held` is (left open: its opener closes it), or `dir`'s, opened for this read. */
export function scannedGeneration(
  dir: string,
  previous: string,
  current: string,
  options: ScanOptions,
): HistoryGeneration {
  const { held } = options;
  if (held === undefined) return openGeneration(dir, previous, current, options.opened);
  return { files: held.files, dir: held.dir, close: () => {} };
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

/** The kinds of record whose lines the gateway writes with a head of its own (historyLine). */
const KINDS = ["request", "run", "delivery"] as const;

/** The heads the gateway writes every record's line with, before its ID (historyLine), in KINDS' order. */
const HEADS = KINDS.map((kind) => Buffer.from(`{"kind":"${kind}","id":`));

function startsWith(buf: Buffer, start: number, end: number, head: Buffer): boolean {
  if (end - start < head.length) return false;
  for (let i = 0; i < head.length; i++) if (buf[start + i] !== head[i]) return false;
  return true;
}

/** The index in KINDS of a line the gateway wrote; -1 for any other line. */
function kindOf(buf: Buffer, start: number, end: number): number {
  const index = HEADS.findIndex((h) => startsWith(buf, start, end, h));
  // A line with another record's head in it may be a cut line with the next record glued to it.
  return index < 0 || holdsLaterHead(buf, start, end) ? -1 : index;
}

/**
 * The delivery ID of a line the gateway wrote (its head as historyLine writes it), without parsing the
 * line; undefined for any other line (written by hand, cut short, not JSON, or holding another record's
 * head, as a payload may): it is to be parsed whole.
 */
export function lineId(buf: Buffer, start: number, end: number): string | undefined {
  const kind = kindOf(buf, start, end);
  if (kind < 0) return undefined;
  const open = start + (HEADS[kind] as Buffer).length;
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

/** Where a JSON string's text is in a line: its bytes between the quotes, and whether it holds an escape. */
export interface Span {
  start: number;
  end: number;
  escaped: boolean;
}

const AT_KEY = Buffer.from(',"at":');
const ROUTE_KEY = Buffer.from(',"route":');
const STATUS_KEY = Buffer.from(',"status":');
const OUTCOME_KEY = Buffer.from(',"outcome":');
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The span of the JSON string whose opening quote is at `open` (into `span`), or false when none ends before `end`. */
function spanAt(buf: Buffer, open: number, end: number, span: Span): boolean {
  if (buf[open] !== QUOTE) return false;
  span.escaped = false;
  for (let i = open + 1; i < end; i++) {
    const byte = buf[i];
    if (byte === BACKSLASH) {
      span.escaped = true;
      i++;
    } else if (byte === QUOTE) {
      span.start = open + 1;
      span.end = i;
      return true;
    }
  }
  return false;
}

/**
 * Reads the head of a line the gateway wrote (historyLine) in place, without parsing the line (a payload is
 * most of it) nor making strings of its values: its kind, the spans of its ID, time and route, and a
 * request's status and the span of its outcome. What tells whether a filter can match the line's record
 * before it is parsed (filteredDeliveries); one reader serves every line of a scan.
 */
export class LineHeadReader {
  buf: Buffer = Buffer.alloc(0);
  kind: (typeof KINDS)[number] = "request";
  readonly id: Span = { start: 0, end: 0, escaped: false };
  readonly at: Span = { start: 0, end: 0, escaped: false };
  readonly route: Span = { start: 0, end: 0, escaped: false };
  /** A request's status; -1 for a run or delivery. */
  status = -1;
  readonly outcome: Span = { start: 0, end: 0, escaped: false };

  /**
   * Reads the line's head; false for any other line (see lineId) or one whose head is not in historyLine's
   * order: it is to be parsed whole.
   */
  read(buf: Buffer, start: number, end: number): boolean {
    const kind = kindOf(buf, start, end);
    if (kind < 0 || !spanAt(buf, start + (HEADS[kind] as Buffer).length, end, this.id)) return false;
    let at = this.id.end + 1;
    if (!startsWith(buf, at, end, AT_KEY) || !spanAt(buf, at + AT_KEY.length, end, this.at)) return false;
    at = this.at.end + 1;
    if (!startsWith(buf, at, end, ROUTE_KEY) || !spanAt(buf, at + ROUTE_KEY.length, end, this.route))
      return false;
    this.buf = buf;
    this.kind = KINDS[kind] as (typeof KINDS)[number];
    this.status = -1;
    if (this.kind !== "request") return true;
    at = this.route.end + 1;
    if (!startsWith(buf, at, end, STATUS_KEY)) return false;
    const digits = at + STATUS_KEY.length;
    let status = 0;
    for (at = digits; at < end && (buf[at] as number) >= DIGIT_0 && (buf[at] as number) <= DIGIT_9; at++)
      status = status * 10 + (buf[at] as number) - DIGIT_0;
    if (at === digits || !startsWith(buf, at, end, OUTCOME_KEY)) return false;
    if (!spanAt(buf, at + OUTCOME_KEY.length, end, this.outcome)) return false;
    this.status = status;
    return true;
  }

  /** A span's value: its bytes as they are, or read with JSON.parse when escaped (`\u0061` is `a`). */
  text(span: Span): string | undefined {
    if (!span.escaped) return this.buf.toString("utf8", span.start, span.end);
    try {
      const value = JSON.parse(this.buf.toString("utf8", span.start - 1, span.end + 1)) as unknown;
      return typeof value === "string" ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether a span's value is `value` (`bytes`: its UTF-8), compared in place unless it is escaped. */
  is(span: Span, value: string, bytes: Buffer): boolean {
    if (span.escaped) return this.text(span) === value;
    return (
      span.end - span.start === bytes.length &&
      this.buf.compare(bytes, 0, bytes.length, span.start, span.end) === 0
    );
  }
}
