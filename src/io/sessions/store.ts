import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { svcPaths } from "../../config/paths.js";
import { SvcError } from "../../errors.js";
import { extendObject, parseJson, stringifyJson } from "../../streams/jsonNumbers/index.js";
import { writeBytesSync } from "../batchedWriter.js";
import { makeDirs } from "../makeDirs.js";
import { NotRegularFile, readRegularFile } from "../regularFile.js";
import { noRoomProblem, writeFileAtomic, writeFileAtomicAsync } from "../stores/atomicFile.js";
import { withFileLock } from "../stores/fileLock.js";
import { zeroFilledProblem } from "../zeroFilled.js";
import { parsedFileCache } from "./indexCache.js";
import { type AskIndex, askIndexThread } from "./indexThread.js";
import { inSessionOrder } from "./orderedAppends.js";
import { transcriptPath } from "./transcriptPath.js";

/**
 * Session store, one per profile, under `<profile root>/sessions/`:
 *   index.json                                  key -> record (written atomically)
 *   <platform>/<chat id>.jsonl                  a chat's transcript, one JSON entry a line
 *   webhook/<route>/<delivery id>.jsonl         an agent run started by a webhook
 * Transcripts are appended with O_APPEND; every change holds `index.json.lock`.
 */
export interface SessionEntry {
  readonly role: "user" | "assistant" | "system";
  readonly content: string;
  readonly at: string;
  /** Where the entry came from when it is not the chat itself (`webhook:<route>`). */
  readonly source?: string;
}

export interface SessionRecord {
  readonly key: string;
  /** Transcript path relative to the sessions directory. */
  readonly file: string;
  readonly platform?: string;
  readonly chat_id?: string;
  readonly route?: string;
  readonly delivery_id?: string;
  readonly created_at: string;
  readonly updated_at: string;
}

interface SessionIndex {
  version: 1;
  sessions: Record<string, SessionRecord>;
}

export const chatSessionKey = (platform: string, chatId: string) => `${platform}:${chatId}`;
export const runSessionKey = (route: string, deliveryId: string) => `webhook:${route}:${deliveryId}`;

/** A chat or delivery id as one safe file-name segment (no separators, never `.` or `..`). */
export function fileSegment(id: string): string {
  const encoded = encodeURIComponent(id).replace(/\*/g, "%2A");
  return encoded.startsWith(".") ? `%2E${encoded.slice(1)}` : encoded || "%00";
}

/** `a+` (read for the last byte, append, create), not through a symbolic link. */
const APPEND_NO_LINK = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * A transcript opened for appending, mode 0600 whether it is created or already existed: one made wider
 * (by hand, another program sharing the layout, a backup restored as 0644) would otherwise get payload
 * text appended where every user can read it. Left as it is when it is not ours to change.
 */
function openTranscript(path: string): number {
  let fd: number;
  try {
    // O_NOFOLLOW: the directory is shared with the chat front end, and a link there would have payload
    // text appended to (and the mode of) whatever file it points to.
    fd = openSync(path, APPEND_NO_LINK, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EISDIR") throw notAFile(path, "a directory", err);
    if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
    throw new SvcError(
      "store_unwritable",
      `${path}: a symbolic link — svc appends a session's transcript only to a file of its own there, nothing written: replace the link with the file it points to`,
      { cause: err },
    );
  }
  // A named pipe (or a device) opens too, read-write without a reader: each entry went into its buffer,
  // and once that was full the next write held the gateway's one thread for good.
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw notAFile(path, stat.isFIFO() ? "a named pipe" : stat.isSocket() ? "a socket" : "a device");
  }
  try {
    fchmodSync(fd, 0o600);
  } catch {
    // Another user's file (EPERM): appending still works; its mode is its owner's choice.
  }
  return fd;
}

function notAFile(path: string, kind: string, cause?: unknown): SvcError {
  return new SvcError(
    "store_unwritable",
    `${path}: ${kind}, not a file — svc appends a session's transcript only to a regular file, nothing written: move it away (the next entry then starts a new transcript there)`,
    cause === undefined ? {} : { cause },
  );
}

/** Whether the file's last byte (of `size`) is a line break. */
function endsWithLineBreak(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  return readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a;
}

/**
 * Appends `lines` whole or not at all: a write the disk cannot take in full (it filled up, a file-size
 * limit) is cut back to where it started, so no cut-off line is left for the next entry to join. Every
 * append holds the index lock, so no other writer's line is cut with it.
 */
function appendWhole(fd: number, path: string, lines: string): void {
  const start = fstatSync(fd).size;
  try {
    // A last line without its line break (zeros a power cut left, a line another tool wrote) is ended first:
    // the entries would be glued to it and unreadable with it.
    writeBytesSync(fd, Buffer.from(start > 0 && !endsWithLineBreak(fd, start) ? `\n${lines}` : lines));
  } catch (err) {
    try {
      ftruncateSync(fd, start);
    } catch {
      // Left as the kernel wrote it: a reader skips nothing more than it would have.
    }
    const noRoom = noRoomProblem(err);
    if (noRoom === undefined) throw err;
    throw new SvcError(
      "store_unwritable",
      `cannot append to ${path}: ${noRoom}; the transcript is left as it was`,
      { cause: err },
    );
  }
}

/** What is wrong with an index entry (after `session "<key>" `), or undefined when it can be used. */
function recordProblem(record: unknown, dir: string): string | undefined {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    const kind = record === null ? "null" : Array.isArray(record) ? "a list" : `a ${typeof record}`;
    return `is not an entry of fields ("file", "platform", ...) but ${kind} — nothing written; correct the entry, or remove it`;
  }
  const { file } = record as { file?: unknown };
  if (file === undefined)
    return `has no "file" (its transcript's path under ${dir}) — nothing written; add its "file", or remove the entry`;
  if (typeof file !== "string" || file === "")
    return `has a "file" that is not a path (${JSON.stringify(file)}) — nothing written; set its "file" to its transcript's path under ${dir}`;
  return undefined;
}

/**
 * The indexes, kept parsed by their file's identity: with 10,000 sessions (3.5 MB) a parse held the
 * gateway's event loop ~77 ms on every mirrored delivery, once for the lookup without the lock and once for
 * its locked rewrite. Both read through it: the chat front end and other svc processes write the file too,
 * and a change of theirs shows in its identity (or, within 2 s of a change, in its bytes), so it is parsed
 * again; unchanged since this process's own write, the rewrite uses the parse it wrote. A mirrored delivery's
 * lookup and rewrite run on the session index's thread (`indexThread.ts`), so this cache is that thread's
 * there; on the gateway's thread only `get` (and `entries`) use one.
 */
const parsedIndexes = parsedFileCache<SessionIndex>();

/**
 * The bytes a kept parse was last written as by this process (`stringifyJson(index, 2)` and a line break),
 * so a rewrite that changes one session's entry serializes only that entry into them (`withRecord`).
 */
const writtenAs = new WeakMap<SessionIndex, Buffer>();

const SESSIONS_OPEN = Buffer.from('\n  "sessions": {');
const SESSIONS_CLOSE = Buffer.from("\n  }");
const NEXT_SESSION = Buffer.from(',\n    "');

/**
 * `written` (an index as `stringifyJson(index, 2)` writes it) with the entry of `key` written as `record`:
 * the bytes `stringifyJson` would write for the index with that entry, without serializing the 9,999 others
 * again (~35 ms at 10,000 sessions). Strings hold no line break, so in that text a line at 2 spaces is a
 * top-level key or the end of its value, and one at 4 spaces inside `sessions` is a session's key: the
 * entry runs from its key's line to the next such line or the end of `sessions`. Undefined when `written`
 * does not have that shape (then the whole index is serialized).
 */
function withRecord(written: Buffer, key: string, record: SessionRecord): Buffer | undefined {
  const open = written.indexOf(SESSIONS_OPEN);
  if (open === -1) return undefined;
  const close = written.indexOf(SESSIONS_CLOSE, open + SESSIONS_OPEN.length);
  const keyLine = Buffer.from(`\n    ${JSON.stringify(key)}: `);
  const start = written.indexOf(keyLine, open);
  if (close === -1 || start === -1 || start > close) return undefined;
  const next = written.indexOf(NEXT_SESSION, start + keyLine.length);
  const end = next === -1 || next > close ? close : next;
  const text = stringifyJson(record, 2);
  if (text === undefined) return undefined;
  return Buffer.concat([
    written.subarray(0, start + keyLine.length),
    Buffer.from(text.replaceAll("\n", "\n    ")),
    written.subarray(end),
  ]);
}

/** How long an append waits for the index's lock held by another writer before it gives up (ms). */
const LOCK_WAIT_MS = 10_000;

export class SessionStore {
  readonly indexPath: string;

  constructor(
    readonly dir: string,
    private readonly now: () => Date = () => new Date(),
    /** How long an append waits for the index's lock, from when it is asked (ms). */
    private readonly lockWaitMs = LOCK_WAIT_MS,
    /** Where the index is read, parsed and rewritten: the index's own thread (tests: their own). */
    private readonly ask: AskIndex = askIndexThread,
  ) {
    this.indexPath = join(dir, "index.json");
  }

  /** The store of a profile (`undefined` or "default" is the default profile). */
  static forProfile(home: string, profile: string | undefined, now?: () => Date): SessionStore {
    return new SessionStore(svcPaths(home, profile).sessions, now);
  }

  /**
   * The index as the file holds it now, a new object the caller may change; `shared`, the parse kept by the
   * file's identity (read again only when the file changed), which only `replaceRecord` changes.
   */
  private readIndex(shared = false): SessionIndex {
    try {
      // Not waiting on a named pipe in its place: the read is synchronous, and would hold the gateway with it.
      return shared
        ? parsedIndexes.read(this.indexPath, (bytes) => this.parseIndex(bytes))
        : this.parseIndex(readRegularFile(this.indexPath));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, sessions: {} };
      if (err instanceof NotRegularFile)
        throw new SvcError(
          "store_corrupt",
          `${this.indexPath}: ${err.message} — the session index is a file the chat front end (or svc) replaces as a whole: remove it, or put the file back in its place`,
        );
      throw err;
    }
  }

  private parseIndex(bytes: Buffer): SessionIndex {
    let text = bytes.toString("utf8");
    // An editor's byte order mark (the index is written by the chat front end or by hand), and a file
    // created empty, which holds no sessions yet.
    text = text.replace(/^\uFEFF/, "");
    if (text.trim() === "") return { version: 1, sessions: {} };
    const zeros = zeroFilledProblem(text);
    if (zeros !== undefined)
      throw new SvcError(
        "store_corrupt",
        `${this.indexPath}: ${zeros} — restore it from a backup, or move it aside to start a new one`,
      );
    try {
      // Numbers as written (another front end's 64-bit id, a `1.0`) and keys in their written order: the
      // index is written back with them, and svc changes only its own keys.
      const parsed = parseJson(text) as SessionIndex;
      if (typeof parsed.sessions !== "object" || parsed.sessions === null || Array.isArray(parsed.sessions))
        throw new Error("no sessions mapping");
      return parsed;
    } catch (err) {
      throw new SvcError(
        "store_corrupt",
        `${this.indexPath}: not a valid session index (${(err as Error).message}) — move it aside to start a new one`,
      );
    }
  }

  /** Writes the index back atomically, with the numbers and key orders `readIndex` kept as they were written. */
  private writeIndex(index: SessionIndex): void {
    const bytes = Buffer.from(`${stringifyJson(index, 2)}\n`);
    writeFileAtomic(this.indexPath, bytes);
    this.keepWritten(index, bytes);
  }

  private keepWritten(index: SessionIndex, bytes: Buffer): void {
    // The next read compares the file with these bytes rather than parsing it again.
    parsedIndexes.wrote(this.indexPath, bytes, index);
    writtenAs.set(index, bytes);
  }

  /**
   * Writes the kept parse `index` back with the entry of `key` replaced by `record` (its position kept),
   * serializing only that entry when `index` is what this process last wrote. The write and its fsyncs run
   * off the event loop (with 10,000 sessions, 3.5 MB reach the disk); until the rename the kept parse stays
   * as the file is, for lookups made meanwhile, and is changed in the rename's tick.
   */
  private async replaceRecord(
    index: SessionIndex,
    key: string,
    was: SessionRecord,
    record: SessionRecord,
  ): Promise<void> {
    const written = writtenAs.get(index);
    let bytes = written === undefined ? undefined : withRecord(written, key, record);
    if (bytes === undefined) {
      index.sessions[key] = record;
      try {
        bytes = Buffer.from(`${stringifyJson(index, 2)}\n`);
      } finally {
        index.sessions[key] = was;
      }
    }
    const replacing = bytes;
    await writeFileAtomicAsync(this.indexPath, replacing, 0o600, () => {
      index.sessions[key] = record;
      this.keepWritten(index, replacing);
    });
  }

  /**
   * The session's entry, checked: the index is written by the chat front end (or by hand), and an entry
   * without its transcript's `file` is said naming the index, the key and the field, rather than failing
   * inside a path function. Only that session is refused; the index's other entries are used (and kept as
   * they are when it is rewritten).
   */
  private recordOf(index: SessionIndex, key: string): SessionRecord | undefined {
    if (!Object.hasOwn(index.sessions, key)) return undefined;
    const record: unknown = index.sessions[key];
    const problem = recordProblem(record, this.dir);
    if (problem === undefined) return record as SessionRecord;
    throw new SvcError("store_corrupt", `${this.indexPath}: session ${JSON.stringify(key)} ${problem}`);
  }

  /**
   * The session's entry, as the index says it now, without the lock (the index is replaced atomically). The
   * parse is kept until the file changes, so a lookup costs a `stat` when nothing changed.
   */
  get(key: string): SessionRecord | undefined {
    return this.recordOf(this.readIndex(true), key);
  }

  /**
   * `get` on the session index's thread (`indexThread.ts`): the index is read, and parsed when it changed,
   * there, so a large index another process changed does not hold this thread's event loop while it is parsed.
   */
  async find(key: string): Promise<SessionRecord | undefined> {
    const text = await this.ask({ op: "lookup", dir: this.dir, key });
    return typeof text === "string" ? (parseJson(text) as SessionRecord) : undefined;
  }

  /**
   * Sets the session's `updated_at` to `at` in the index (its entry's position and other fields kept); false
   * when there is no such session. The caller holds the index's lock. Run on the index's thread.
   */
  async touchUnlocked(key: string, at: string): Promise<boolean> {
    // The kept parse, unless another process changed the file since this one wrote or read it.
    const index = this.readIndex(true);
    const record = this.recordOf(index, key);
    if (record === undefined) return false;
    const updated = extendObject(record as unknown as Record<string, unknown>, {
      updated_at: at,
    }) as unknown as SessionRecord;
    await this.replaceRecord(index, key, record, updated);
    return true;
  }

  /**
   * `open` without its lock, which the caller holds, with its time given: creates the session's transcript
   * (empty) and entry unless the entry exists; its entry. Run on the index's thread.
   */
  openUnlocked(key: string, file: string, meta: Readonly<Record<string, string>>, at: string): SessionRecord {
    const index = this.readIndex();
    const existing = this.recordOf(index, key);
    if (existing !== undefined) return existing;
    const record: SessionRecord = { key, file, ...meta, created_at: at, updated_at: at };
    const path = join(this.dir, file);
    makeDirs(dirname(path));
    closeSync(openTranscript(path));
    index.sessions = extendObject(index.sessions, { [key]: record }) as SessionIndex["sessions"];
    this.writeIndex(index);
    return record;
  }

  entries(key: string): SessionEntry[] {
    const record = this.get(key);
    if (record === undefined) return [];
    const text = readFileSync(transcriptPath(this.dir, this.indexPath, key, record.file), "utf8");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as SessionEntry);
  }

  /**
   * Creates the session when it does not exist yet; returns its record. The index is read, parsed and
   * rewritten (atomically: temp file, fsync, rename) on the index's thread, under the index's lock.
   */
  async open(
    key: string,
    file: string,
    meta: Partial<Pick<SessionRecord, "platform" | "chat_id" | "route" | "delivery_id">> = {},
  ): Promise<SessionRecord> {
    return withFileLock(this.indexPath, async () => {
      const at = this.now().toISOString();
      const text = await this.ask({ op: "open", dir: this.dir, key, file, meta: { ...meta }, at });
      return parseJson(text as string) as SessionRecord;
    });
  }

  /** Opens (or creates) the session of a chat. */
  openChat(platform: string, chatId: string): Promise<SessionRecord> {
    return this.open(
      chatSessionKey(platform, chatId),
      join(fileSegment(platform), `${fileSegment(chatId)}.jsonl`),
      { platform, chat_id: chatId },
    );
  }

  /** Appends entries to an existing session; returns false (and writes nothing) when there is no such session. */
  append(key: string, entries: readonly Omit<SessionEntry, "at">[]): Promise<boolean> {
    // In the order asked for, one session at a time (see orderedAppends.ts); other sessions do not wait.
    // Its wait for the lock counts from now, not from its turn: with the index held for good, appends queued
    // on one session would otherwise give up one whole wait after another (and a stop wait for them all).
    const asked = performance.now();
    return inSessionOrder(`${this.indexPath}\0${key}`, () =>
      this.appendNow(key, entries, Math.max(0, this.lockWaitMs - (performance.now() - asked))),
    );
  }

  private appendNow(
    key: string,
    entries: readonly Omit<SessionEntry, "at">[],
    timeoutMs: number,
  ): Promise<boolean> {
    return withFileLock(
      this.indexPath,
      async () => {
        // Looked up, and the index rewritten, on the index's thread (its parse kept there).
        const record = await this.find(key);
        if (record === undefined) return false;
        const path = transcriptPath(this.dir, this.indexPath, key, record.file);
        const at = this.now().toISOString();
        const lines = entries.map((entry) => `${JSON.stringify({ ...entry, at })}\n`).join("");
        makeDirs(dirname(path));
        const fd = openTranscript(path);
        try {
          appendWhole(fd, path, lines);
        } finally {
          closeSync(fd);
        }
        // The entry is gone only when a writer ignored the lock: the entries were appended all the same.
        await this.ask({ op: "touch", dir: this.dir, key, at });
        return true;
      },
      { timeoutMs },
    );
  }
}
