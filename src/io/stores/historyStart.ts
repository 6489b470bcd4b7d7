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
 * The time from which the history may hold every record: the first record within the retention of its
 * oldest file, when records before it may be gone (the oldest file is a rotated generation,
 * `history.1.jsonl`, which may have replaced an older one; or records before it are past the retention).
 * Undefined when nothing can be gone: one file that holds every record it was given, or no record.
 */
export function keptFrom(
  dir: string,
  now: number = Date.now(),
  options: ScanOptions = {},
): string | undefined {
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options.opened);
  try {
    let cut = generation.files.some((file) => file.path === join(dir, HISTORY_PREVIOUS_FILE));
    for (const file of generation.files) {
      // Oldest first, from the file's start, a chunk at a time: the first record within the retention.
      let carried = Buffer.alloc(0);
      for (let position = 0; position < file.size; ) {
        const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, file.size - position));
        const read = readSync(file.fd, chunk, 0, chunk.length, position);
        if (read === 0) break;
        position += read;
        const bytes = Buffer.concat([carried, chunk.subarray(0, read)]);
        let start = 0;
        for (let end = bytes.indexOf(LF); end >= 0; end = bytes.indexOf(LF, start)) {
          const found = firstKept(bytes.toString("utf8", start, end), now);
          if (found === "expired") cut = true;
          else if (found !== undefined) return cut ? found.at : undefined;
          start = end + 1;
        }
        carried = bytes.subarray(start);
      }
      // The file's last line, being written or cut short: read as the other readers read it.
      const found = firstKept(carried.toString("utf8"), now);
      if (found === "expired") cut = true;
      else if (found !== undefined) return cut ? found.at : undefined;
    }
    return undefined;
  } finally {
    generation.close();
  }
}

/** A line's record within the retention; `expired` for one past it; undefined for no record. */
function firstKept(line: string, now: number): HistoryRecord | "expired" | undefined {
  const record = recordOf(line, now);
  if (record !== undefined) return record;
  // Read at any age (a time ago of minus infinity is within every retention): one past the retention.
  return recordOf(line, Number.NEGATIVE_INFINITY) === undefined ? undefined : "expired";
}

/**
 * Whether the request of a run the history holds without its request may have been dropped from it
 * (rotated out, or past the retention) rather than never recorded (the gateway killed after recording the
 * event and before answering it): the request was received no later than the first record of a history
 * that may have lost older ones (`keptFrom`), so its record, written once it was answered, may lie before
 * it. A request received after that record would be recorded after it, in the history kept. A run an
 * older svc recorded keeps no receive time: the run's own time stands for it (a run of a rotated-out
 * request that ended after the first kept record is then said never answered).
 */
export function requestMayBeGone(
  run: Pick<RunRecord, "at" | "received_at">,
  from: string | undefined,
): boolean {
  if (from === undefined) return false;
  const received = run.received_at ?? Date.parse(run.at);
  return !(received > Date.parse(from));
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
      // At any age (see firstKept): only records past the retention are left when none is shown.
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
