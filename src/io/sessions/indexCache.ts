import { statSync } from "node:fs";
import { fileIdentity, isRacyAt } from "../fileStamp.js";
import { readRegularFileStat } from "../regularFile.js";

/** A file's parse, with what proves it is still the file's. */
interface Parsed<T> {
  /** The `fileIdentity` of the file the bytes were read from (or written to). */
  readonly identity: string;
  readonly bytes: Buffer;
  readonly value: T;
  /**
   * The file had changed within RACY_WINDOW_MS of when its bytes were read (or they were written, not
   * read): a change since may have kept its identity, so the bytes are compared before the parse is used.
   */
  readonly racy: boolean;
}

/** Files kept (one index a profile): past this, the one used longest ago is dropped. */
const MAX_FILES = 8;

export interface ParsedFileCache<T> {
  /**
   * `parse` of the file's bytes, without reading them when its `fileIdentity` (one `stat`) is the one they
   * were read with; while the file is young, with a read and a comparison of its bytes but no parse. Errors
   * (ENOENT, `NotRegularFile`, a `parse` that throws) are thrown and nothing is kept. The value is shared
   * between callers: never change it.
   */
  read(path: string, parse: (bytes: Buffer) => T): T;
  /**
   * `value` was written to `path` as `bytes` (the writer holding the file's lock): the next `read` compares
   * the file's bytes with them instead of parsing it again. `value` is kept: the writer must not change it.
   */
  wrote(path: string, bytes: Buffer, value: T): void;
}

/**
 * Parses of files other processes replace too, kept by each file's identity (device, inode, size, mtime and
 * ctime to the nanosecond). A file replaced (a rename over it) has another inode; one rewritten in place has
 * another ctime, which no one can set back; within a timestamp tick of its last change, when neither need
 * differ, its bytes are compared (git's "racily clean" rule, see fileStamp.ts). So a parse is never served
 * for other bytes than the file holds.
 */
export function parsedFileCache<T>(
  options: {
    /**
     * The wall clock reads are dated on, to judge the file's times, which are the kernel's wall clock (so
     * not a gateway's clock, which a test may have set to another year). Date.now by default.
     */
    readonly now?: () => number;
  } = {},
): ParsedFileCache<T> {
  const now = options.now ?? Date.now;
  const kept = new Map<string, Parsed<T>>();
  function keep(path: string, parsed: Parsed<T>): void {
    kept.delete(path);
    kept.set(path, parsed);
    for (const oldest of kept.keys()) {
      if (kept.size <= MAX_FILES) break;
      kept.delete(oldest);
    }
  }
  return {
    read(path, parse) {
      const cached = kept.get(path);
      try {
        if (
          cached !== undefined &&
          !cached.racy &&
          cached.identity === fileIdentity(statSync(path, { bigint: true }))
        ) {
          keep(path, cached);
          return cached.value;
        }
        const readAt = now();
        const { bytes, stat } = readRegularFileStat(path);
        const same = cached?.bytes.equals(bytes) === true;
        const parsed: Parsed<T> = {
          identity: fileIdentity(stat),
          // The bytes kept already when they are the same (a writer may hold on to them too, store.ts):
          // not two copies of a 3.5 MB index.
          bytes: same ? cached.bytes : bytes,
          value: same ? cached.value : parse(bytes),
          racy: isRacyAt(stat, readAt),
        };
        keep(path, parsed);
        return parsed.value;
      } catch (err) {
        kept.delete(path);
        throw err;
      }
    },
    wrote(path, bytes, value) {
      try {
        // Racy whatever its age: the stat comes after the write, so these bytes are not proven to be its.
        keep(path, { identity: fileIdentity(statSync(path, { bigint: true })), bytes, value, racy: true });
      } catch {
        kept.delete(path);
      }
    },
  };
}
