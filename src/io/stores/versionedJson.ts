import { readFileSync } from "node:fs";
import { SvcError } from "../../errors.js";
import { writeJsonAtomic } from "./atomicFile.js";
import { withFileLock } from "./fileLock.js";

/**
 * A JSON store of named records with a revision counter: `{ "revision": N, "<field>": { name: record } }`.
 * Every write holds the file lock, re-reads, and replaces the file atomically (mode 0600). A writer that
 * passes the revision it read is refused when the file changed since (optimistic concurrency), so a
 * stale update never brings back a record another process removed or disabled.
 */
export interface VersionedSnapshot<T> {
  readonly revision: number;
  readonly records: Readonly<Record<string, T>>;
}

export interface VersionedStore<T> {
  readonly path: string;
  /** The current content; an absent file is revision 0 with no records. Throws `store_corrupt`. */
  read(): VersionedSnapshot<T>;
  /**
   * Applies `change` to the freshest records under the lock and writes revision + 1. With
   * `expectedRevision`, refuses (`store_conflict`) when the file is no longer at that revision.
   */
  update<R>(
    change: (records: Record<string, T>) => R,
    expectedRevision?: number,
  ): Promise<{ result: R; revision: number }>;
}

export function createVersionedStore<T>(
  path: string,
  field: string,
  conflictMessage: string,
): VersionedStore<T> {
  function read(): VersionedSnapshot<T> {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { revision: 0, records: {} };
      throw new SvcError("store_corrupt", `${path}: cannot be read (${(err as Error).message})`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new SvcError(
        "store_corrupt",
        `${path}: not valid JSON (${(err as Error).message}) — fix or remove the file`,
      );
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new SvcError("store_corrupt", `${path}: expected a JSON object with "${field}"`);
    }
    const doc = parsed as Record<string, unknown>;
    const records = doc[field] ?? {};
    if (typeof records !== "object" || records === null || Array.isArray(records)) {
      throw new SvcError("store_corrupt", `${path}: "${field}" must be an object keyed by name`);
    }
    const revision = typeof doc.revision === "number" && Number.isInteger(doc.revision) ? doc.revision : 0;
    return { revision, records: records as Record<string, T> };
  }

  return {
    path,
    read,
    update(change, expectedRevision) {
      return withFileLock(path, () => {
        const current = read();
        if (expectedRevision !== undefined && current.revision !== expectedRevision) {
          throw new SvcError("store_conflict", `${path}: ${conflictMessage}`);
        }
        const records = structuredClone(current.records) as Record<string, T>;
        const result = change(records);
        const revision = current.revision + 1;
        writeJsonAtomic(path, { revision, [field]: records });
        return { result, revision };
      });
    },
  };
}
