import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { nearMiss } from "../../config/nearMiss.js";
import { SvcError } from "../../errors.js";
import { carryKept, keepWhereUnchanged } from "../../streams/jsonNumbers/changed.js";
import { extendObject, parseJson, stringifyJson } from "../../streams/jsonNumbers/index.js";
import { stringifyPlain } from "../../streams/jsonNumbers/write.js";
import { nestedDeeperThan, nestingDepth } from "../../streams/nestedDepth.js";
import { jsonErrorLocation } from "../jsonErrorLocation.js";
import { noDirectoryAt } from "../noDirectoryAt.js";
import { NotRegularFile, readRegularFile } from "../regularFile.js";
import { zeroFilledProblem } from "../zeroFilled.js";
import { writeFileAtomic } from "./atomicFile.js";
import { emptiedInPlace } from "./emptiedInPlace.js";
import { numbersAsText, parseKeepingExtraNumbers } from "./extraNumbers.js";
import { withFileLock } from "./fileLock.js";
import { flatLayout } from "./flatLayout.js";
import { repeatedRecordKey } from "./repeatedKeys.js";
import { unreadableStoreFix } from "./unreadableStoreFix.js";

/**
 * A JSON store of named records. Every write holds the file lock, re-reads, and replaces the file
 * atomically (mode 0600). A writer that passes the revision it read is refused when the file changed
 * since (optimistic concurrency), so a stale update never brings back a record another process removed
 * or disabled. The revision is a fingerprint of the file's bytes, so it works for any layout, also for a
 * file edited by hand.
 */
export interface VersionedSnapshot<T> {
  /** Opaque: compare only for equality. An absent file is `""`. */
  readonly revision: string;
  readonly records: Readonly<Record<string, T>>;
  /**
   * The file is there but blank (0 bytes or whitespace only), which svc never writes: `emptied` when it was
   * changed after it was made (emptied in place, as `jq … file > file` leaves it), `fresh` when it was made
   * so (`touch`). See emptiedInPlace.
   */
  readonly empty?: "fresh" | "emptied";
}

export interface VersionedStore<T> {
  readonly path: string;
  /** The current content; an absent file has no records. Throws `store_corrupt`. */
  read(): VersionedSnapshot<T>;
  /**
   * The revision `read()` would give now, without parsing the file (for a reader that keeps what it read
   * last: a store of thousands of records takes milliseconds to parse); undefined when the file cannot be
   * read (`read()` says why).
   */
  revision(): string | undefined;
  /**
   * Applies `change` to the freshest records under the lock and writes them. With `expectedRevision`,
   * refuses (`store_conflict`) when the file is no longer at that revision. `overEmptied`: the file it
   * wrote over was blank, emptied in place (what it held before is not in it: lost before this write).
   */
  update<R>(
    change: (records: Record<string, T>) => R,
    expectedRevision?: string,
  ): Promise<{ result: R; revision: string; overEmptied?: true }>;
}

export interface StoreLayout {
  /**
   * `{ "revision": N, "<field>": { name: record } }`. Without it the file is the records object itself,
   * keyed by name (`{ "<name>": record }`).
   */
  readonly field?: string;
  /** Flat layout only: a `{ "revision": N, "<legacyField>": {...} }` file (older versions) is read as its records. */
  readonly legacyField?: string;
  readonly conflictMessage: string;
  /** What the records are keyed by, for messages (default "name"). */
  readonly keyedBy?: string;
  /**
   * Numbers under `deliver_extra` (ids written unquoted by hand, such as a Discord channel id too long for a
   * JavaScript number) are read as the text written, not as a rounded number.
   */
  readonly extraNumbersAsText?: boolean;
}

/**
 * JSON.parse's reason without the excerpt of the file V8 quotes for an unexpected token
 * (`Unexpected token 'T', ..."secret": TOPSECRET}" is not valid JSON`): the file may hold secrets.
 */
function parseProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return /^Unexpected token .*is not valid JSON$/s.test(message)
    ? "an unexpected character (the text around it is not shown: the file holds secrets)"
    : message;
}

/** A walk on the call stack that ran out of it: a value nested some thousands deep. */
const stackOverflow = (err: unknown): boolean =>
  err instanceof RangeError && err.message.includes("Maximum call stack size exceeded");

/**
 * The most levels of objects and arrays a record may nest for a change of the store to write it back. The
 * reads and the write-back walk a record with stacks of their own (JSON.stringify's walk on the call stack
 * runs out at about 4,500 levels in Node 20, and is then done without it), so any depth could be written; but the
 * file is written indented, two spaces a level, and a value nested this deep as `[[[…]]]` is written back as
 * ~50 MB (20,000 levels: ~800 MB, past the longest string V8 makes).
 */
export const MAX_WRITTEN_DEPTH = 5000;

/**
 * The store holds a value nested deeper than svc writes back (MAX_WRITTEN_DEPTH; JSON.parse reads any
 * depth): said so, naming the value nesting deepest (a record, or a top-level field beside the records:
 * `beside`, the document's own keys other than `field`), rather than as a syntax error at a made-up line and
 * column.
 */
function nestedTooDeep(
  path: string,
  records?: Record<string, unknown>,
  beside?: { doc: Record<string, unknown>; field: string },
): SvcError {
  let deepest: { name: string; depth: number } | undefined;
  const values: [string, unknown][] = Object.entries(records ?? {}).map(([name, record]) => [
    `the record ${JSON.stringify(name)}`,
    record,
  ]);
  for (const [key, value] of Object.entries(beside?.doc ?? {}))
    if (key !== beside?.field) values.push([`the top-level field ${JSON.stringify(key)}`, value]);
  for (const [name, value] of values) {
    const depth = nestingDepth(value);
    if (depth > (deepest?.depth ?? 0)) deepest = { name, depth };
  }
  const which =
    deepest === undefined
      ? "a value in it nests objects or arrays more levels deep than svc can write back"
      : `${deepest.name} nests objects or arrays ${deepest.depth} levels deep, more than svc can write back`;
  return new SvcError(
    "store_unwritable",
    `${path}: nested too deep: ${which} (${MAX_WRITTEN_DEPTH.toLocaleString("en-US")} levels at most) — flatten or remove that value by hand (the file is unchanged)`,
  );
}

const fingerprint = (text: string) => createHash("sha256").update(text).digest("base64url");

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A file where the store's directory goes (`<SVC_HOME>/cron` written as a file): `cause` (reading gave
 * `ENOTDIR`, writing would give Node's bare `EEXIST: file already exists, mkdir`) with what to do.
 */
function directoryIsAFile(path: string, cause: string): SvcError | undefined {
  const dir = dirname(path);
  let isFile: boolean;
  try {
    isFile = statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false;
  } catch {
    return undefined; // a path under a file further up (SVC_HOME itself): said by the caller, as before
  }
  if (!isFile) return undefined;
  // A link to a device (`cron -> /dev/null`) is no file to move: the link is what to change.
  const { said, fix, home } = noDirectoryAt(dir);
  // SVC_HOME itself (`SVC_HOME=/dev/null`, `/etc/passwd`: the top-level stores' directory), never to be removed or
  // moved: said by the caller, with SVC_HOME to set, once.
  if (home) return undefined;
  return new SvcError("store_corrupt", `${path}: ${cause} — ${said}: ${fix} (svc makes the directory)`);
}

/** A field of a record the read gave otherwise than it is written (`filters`' numbers): as read, and as written. */
type ReadOtherwise = Map<
  string,
  Map<string, { readonly read: string | undefined; readonly written: unknown }>
>;

/** The fields of `records` that `asWritten` (the same records, as they are written back) holds otherwise. */
function readOtherwise(records: Record<string, unknown>, asWritten?: Record<string, unknown>): ReadOtherwise {
  const found: ReadOtherwise = new Map();
  if (asWritten === undefined) return found;
  for (const [name, record] of Object.entries(records)) {
    const written = Object.hasOwn(asWritten, name) ? asWritten[name] : undefined;
    if (!isObject(record) || !isObject(written)) continue;
    for (const [key, value] of Object.entries(record)) {
      const read = stringifyPlain(value);
      if (!Object.hasOwn(written, key) || read === stringifyPlain(written[key])) continue;
      const fields = found.get(name) ?? new Map();
      fields.set(key, { read, written: written[key] });
      found.set(name, fields);
    }
  }
  return found;
}

/**
 * Each field of `readAs` that the change left as it was read is written back as it is in the file (a 64-bit
 * id under `filters`, which a filter compares as its digits, stays a number): the record is replaced by a copy
 * holding it, so that what the change returned keeps the record as it was read.
 */
function writeBackAsWritten(records: Record<string, unknown>, readAs: ReadOtherwise): void {
  for (const [name, fields] of readAs) {
    const record = Object.hasOwn(records, name) ? records[name] : undefined;
    if (!isObject(record)) continue;
    let copy: Record<string, unknown> | undefined;
    for (const [key, { read, written }] of fields) {
      if (!Object.hasOwn(record, key) || stringifyPlain(record[key]) !== read) continue;
      copy ??= { ...record };
      copy[key] = written;
    }
    if (copy === undefined) continue;
    carryKept(record, copy);
    records[name] = copy;
  }
}

export function createVersionedStore<T>(path: string, layout: StoreLayout): VersionedStore<T> {
  const { field, legacyField } = layout;
  const recordFields = new Set([field, legacyField].filter((name) => name !== undefined));
  function recordsOf(doc: Record<string, unknown>): unknown {
    if (field !== undefined) {
      if (Object.hasOwn(doc, field)) return doc[field];
      // A file without its records' key holds none only when it holds nothing else: one whose records are
      // under another key (`"Jobs"`, edited by hand) would be read as empty and run none of them.
      const others = Object.keys(doc).filter((key) => key !== "revision");
      if (others.length === 0) return {};
      const meant = others.find((key) => nearMiss(key, [field]) !== undefined);
      throw new SvcError(
        "store_corrupt",
        `${path}: no "${field}" key, where its records go (found ${others.map((key) => JSON.stringify(key)).join(", ")})${meant === undefined ? "" : ` — did you mean "${field}" for ${JSON.stringify(meant)}?`} — rename the key, or fix or remove the file`,
      );
    }
    const flat = flatLayout(doc, layout.keyedBy ?? "name", legacyField);
    if ("problem" in flat) throw new SvcError("store_corrupt", `${path}: ${flat.problem}`);
    return flat.records;
  }

  /**
   * `whole`: every number and key order as written (`parseJson`), for a write that keeps what it does not
   * change as it is in the file (a hand-written `"weight": 1.50` or a 64-bit id stays as written).
   */
  function readWithCounter(whole = false): VersionedSnapshot<T> & {
    counter: number;
    /** The whole document: with `field`, its other top-level keys (a newer version's) are written back as they were. */
    others?: Record<string, unknown>;
    /**
     * `whole` only, when the read's records hold a `filters` value: the records as they are written back
     * where a change leaves them alone (the numbers of `filters` as written, not as a filter compares them).
     */
    asWritten?: Record<string, unknown>;
  } {
    let text: string;
    try {
      text = readRegularFile(path).toString("utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { revision: "", records: {}, counter: 0 };
      if (err instanceof NotRegularFile)
        throw new SvcError(
          "store_corrupt",
          `${path}: ${err.message} — svc keeps its records in a file it writes itself: remove it, or put the file back in its place`,
        );
      const fix = unreadableStoreFix(path, err);
      const cause = `cannot be read (${(err as Error).message})${fix === undefined ? "" : ` — ${fix}`}`;
      const code = (err as NodeJS.ErrnoException).code;
      throw (
        (code === "ENOTDIR" ? directoryIsAFile(path, cause) : undefined) ??
        new SvcError("store_corrupt", `${path}: ${cause}`)
      );
    }
    // An empty file (`touch`ed, or truncated by hand) holds no records, like an absent one; which of the
    // two it is the readers say (a served store emptied in place is no store without records yet).
    if (text.replace(/^\uFEFF/, "").trim() === "")
      return {
        revision: fingerprint(text),
        records: {},
        counter: 0,
        empty: emptiedInPlace(path) ? "emptied" : "fresh",
      };
    const zeros = zeroFilledProblem(text);
    if (zeros !== undefined)
      throw new SvcError("store_corrupt", `${path}: ${zeros} — restore it from a backup, or remove it`);
    let parsed: unknown;
    let written: unknown;
    const json = text.replace(/^\uFEFF/, "");
    try {
      if (whole) {
        parsed = parseJson(json, Number.POSITIVE_INFINITY);
        if (layout.extraNumbersAsText === true) {
          numbersAsText(parsed);
          if (json.includes('"filters"')) {
            written = parseJson(json, Number.POSITIVE_INFINITY);
            numbersAsText(written, false);
          }
        }
      } else parsed = layout.extraNumbersAsText === true ? parseKeepingExtraNumbers(json) : JSON.parse(json);
    } catch (err) {
      if (stackOverflow(err)) throw nestedTooDeep(path);
      // A file edited by hand: the line and column to look at, as editors count them.
      const { line, column } = jsonErrorLocation(json, err);
      throw new SvcError(
        "store_corrupt",
        `${path}: not valid JSON at line ${line}, column ${column} (${parseProblem(err)}) — fix or remove the file`,
      );
    }
    const repeated = repeatedRecordKey(json, recordFields);
    if (repeated !== undefined) {
      const name = `${repeated.within === undefined ? "" : `${repeated.within}.`}"${repeated.key}"`;
      throw new SvcError(
        "store_corrupt",
        `${path}: ${name} is written twice (lines ${repeated.lines[0]} and ${repeated.lines[1]}): JSON keeps only the last, and the next write would drop the first — rename or remove one`,
      );
    }
    if (!isObject(parsed)) {
      throw new SvcError(
        "store_corrupt",
        field === undefined
          ? `${path}: expected a JSON object keyed by name — fix or remove the file`
          : `${path}: expected a JSON object with "${field}" ({"revision": 1, "${field}": {}} holds none) — fix or remove the file`,
      );
    }
    const records = recordsOf(parsed);
    if (!isObject(records)) {
      throw new SvcError(
        "store_corrupt",
        `${path}: "${field}" must be an object keyed by ${layout.keyedBy ?? "name"}, got ${Array.isArray(records) ? "a list" : records === null ? "null" : `a ${typeof records}`} — fix or remove the file`,
      );
    }
    const counter =
      typeof parsed.revision === "number" && Number.isInteger(parsed.revision) ? parsed.revision : 0;
    const writtenRecords = isObject(written) ? recordsOf(written) : undefined;
    return {
      revision: fingerprint(text),
      records: records as Record<string, T>,
      counter,
      others: parsed,
      ...(isObject(writtenRecords) ? { asWritten: writtenRecords } : {}),
    };
  }

  return {
    path,
    read() {
      const { revision, records, empty } = readWithCounter();
      return empty === undefined ? { revision, records } : { revision, records, empty };
    },
    revision() {
      try {
        return fingerprint(readRegularFile(path).toString("utf8"));
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ENOENT" ? "" : undefined;
      }
    },
    update(change, expectedRevision) {
      const misplaced = directoryIsAFile(path, "cannot be written");
      if (misplaced !== undefined) return Promise.reject(misplaced);
      return withFileLock(path, () => {
        let current: ReturnType<typeof readWithCounter> | undefined;
        try {
          current = readWithCounter(true);
          if (expectedRevision !== undefined && current.revision !== expectedRevision) {
            throw new SvcError("store_conflict", `${path}: ${layout.conflictMessage}`);
          }
          // This read's own parse, changed in place: what it keeps of the numbers as written stays with them.
          const records = current.records as Record<string, T>;
          const read = new Map(Object.entries(records));
          const readAs = readOtherwise(records, current.asWritten);
          const result = change(records);
          // A record replaced by a copy of itself (`{ ...job, next_run }`) keeps what it did not change too.
          for (const [name, record] of Object.entries(records)) {
            const was = read.get(name);
            if (was !== record && isObject(was) && isObject(record)) carryKept(was, record);
          }
          writeBackAsWritten(records, readAs);
          const doc =
            field === undefined
              ? records
              : extendObject(current.others ?? {}, { revision: current.counter + 1, [field]: records });
          // Refused before anything is written: the file would be many megabytes, and longer than a string can be.
          // Every value of the document: the records, and the top-level fields beside them (a newer version's,
          // or written by hand), written back as they were.
          const beside = field === undefined ? undefined : { doc: current.others ?? {}, field };
          const values: unknown[] = Object.values(records);
          for (const [key, value] of Object.entries(beside?.doc ?? {})) if (key !== field) values.push(value);
          if (values.some((value) => nestedDeeperThan(value, MAX_WRITTEN_DEPTH)))
            throw nestedTooDeep(path, records, beside);
          // Every record the change left alone is written as it is in the file (`1.50`, an id past 2^53).
          keepWhereUnchanged(doc);
          const text = `${stringifyJson(doc, 2)}\n`;
          writeFileAtomic(path, text);
          return {
            result,
            revision: fingerprint(text),
            ...(current.empty === "emptied" ? { overEmptied: true as const } : {}),
          };
        } catch (err) {
          // The records as read name the value (a change is made of flags, never nested so).
          if (stackOverflow(err))
            throw nestedTooDeep(
              path,
              current?.records,
              field === undefined ? undefined : { doc: current?.others ?? {}, field },
            );
          throw err;
        }
      });
    },
  };
}
