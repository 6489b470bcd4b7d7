import { readSync } from "node:fs";
import { join } from "node:path";
import {
  HISTORY_FILE,
  HISTORY_FILE_BYTES,
  HISTORY_PREVIOUS_FILE,
  HISTORY_RETENTION_MS,
  type HistoryRecord,
  type RunRecord,
  recordOf,
} from "./deliveryHistory.js";
import { type LineVisit, linesNewestFirst, openGeneration, type ScanOptions } from "./historyScan.js";

const LF = 0x0a;
const CHUNK_BYTES = 64 * 1024;

/** Records are kept 7 days and at most ~32 MiB of them: said where a request may have left the history. */
export const HISTORY_KEEPS = `records are kept 7 days, and no more than the last ~${(2 * HISTORY_FILE_BYTES) / 2 ** 20} MiB of them`;

/**
 * The time of the first record of a history whose older generation was rotated out: `history.1.jsonl` is
 * there (a rotated generation, which may have replaced an older one), so records before its first may be
 * gone. Read at any age: a record past the retention is only skipped by readers, never dropped, so it
 * still marks where the kept records begin. Undefined when nothing was rotated out (one file, which holds
 * every record it was given, or no record): records past the retention are `requestMayBeGone`'s other
 * cause, told by their time alone.
 */
export function keptFrom(dir: string, options: ScanOptions = {}): string | undefined {
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options.opened);
  try {
    if (!generation.files.some((file) => file.path === join(dir, HISTORY_PREVIOUS_FILE))) return undefined;
    for (const file of generation.files) {
      // Oldest first, from the file's start, a chunk at a time: the first record, at any age.
      let carried = Buffer.alloc(0);
      for (let position = 0; position < file.size; ) {
        const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, file.size - position));
        const read = readSync(file.fd, chunk, 0, chunk.length, position);
        if (read === 0) break;
        position += read;
        const bytes = Buffer.concat([carried, chunk.subarray(0, read)]);
        let start = 0;
        for (let end = bytes.indexOf(LF); end >= 0; end = bytes.indexOf(LF, start)) {
          const found = anyAge(bytes.toString("utf8", start, end));
          if (found !== undefined) return found.at;
          start = end + 1;
        }
        carried = bytes.subarray(start);
      }
      // The file's last line, being written or cut short: read as the other readers read it.
      const found = anyAge(carried.toString("utf8"));
      if (found !== undefined) return found.at;
    }
    return undefined;
  } finally {
    generation.close();
  }
}

/** A line's record at any age (a time ago of minus infinity is within every retention); undefined for none. */
const anyAge = (line: string): HistoryRecord | undefined => recordOf(line, Number.NEGATIVE_INFINITY);

/**
 * Whether the request of a run the history holds without its request may have been dropped from it
 * rather than never recorded (the gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after)). Two
 * causes, each enough: the request was received before the retention (its record, written once it was
 * answered, may be past it: readers skip it); or it was received no later than the first record of a
 * history whose older generation was rotated out (`keptFrom`), so its record may lie in the generation
 * dropped. A request received later, within the retention, would be recorded after that record, in the
 * history kept. A run an older svc recorded keeps no receive time: the run's own time stands for it (a
 * run of a rotated-out request that ended after the first kept record is then said never answered).
 */
export function requestMayBeGone(
  run: Pick<RunRecord, "at" | "received_at">,
  from: string | undefined,
  now: number = Date.now(),
): boolean {
  const received = run.received_at ?? Date.parse(run.at);
  if (received < now - HISTORY_RETENTION_MS) return true;
  return from !== undefined && !(received > Date.parse(from));
}

/**
 * Whether the history holds records (of `route`, of any route without one) past the retention: read
 * newest first, up to the first. What `svc webhook deliveries` says when it shows none within it.
 */
export function holdsExpiredRecords(
  dir: string,
  route: string | undefined,
  now: number = Date.now(),
  options: ScanOptions = {},
): boolean {
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options.opened);
  try {
    let found = false;
    const lines = linesNewestFirst(generation, options.chunkBytes);
    const visit: LineVisit = (buf, start, end) => {
      // At any age (see anyAge): only records past the retention are left when none is shown.
      const record = recordOf(buf.toString("utf8", start, end), Number.NEGATIVE_INFINITY);
      found =
        record !== undefined &&
        (route === undefined || record.route === route) &&
        now - Date.parse(record.at) > HISTORY_RETENTION_MS;
      return found;
    };
    while (!found && lines.next(visit));
    return found;
  } finally {
    generation.close();
  }
}
