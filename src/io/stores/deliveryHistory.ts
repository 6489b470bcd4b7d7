import { isUtf8 } from "node:buffer";
import {
  closeSync,
  fchmodSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { describeError, SvcError } from "../../errors.js";
import {
  createBatchedByteWriter,
  pathMovedFrom,
  ROTATION_CHECK_MS,
  writeBytesSync,
} from "../batchedWriter.js";
import { makeDirs } from "../makeDirs.js";
import { narrowMode, privateDir } from "../privateMode.js";
import { gluedRecord } from "./gluedRecord.js";
import { historyDirInTheWay, historyDirRefusal, historyNotOpened, notAFileAt } from "./historyDirProblem.js";
import { isReadableRecord } from "./historyRecordShape.js";
import {
  currentIno,
  type HistoryGeneration,
  type LineVisit,
  lineId,
  linesNewestFirst,
  openGeneration,
  READ_ATTEMPTS,
  type ScanOptions,
  scannedGeneration,
} from "./historyScan.js";
import { historyText, type ReadText, readText } from "./historyText.js";
import { jsonValueEnd, pastSpaces } from "./jsonValueEnd.js";

/** Each history file is rotated past this size; one previous file is kept: at most ~2 × this on disk. */
export const HISTORY_FILE_BYTES = 16 * 1024 * 1024;
/** A payload larger than this is not kept (its request is still recorded, and cannot be redelivered). */
export const HISTORY_PAYLOAD_BYTES = 256 * 1024;
/** At most this many request headers are kept per record (those the route's filters read). */
export const HISTORY_HEADERS_MAX = 16;
/** A kept header's value longer than this (UTF-16 units) is left out, not cut: a cut value filters otherwise. */
export const HISTORY_HEADER_VALUE_CHARS = 1024;

/**
 * The id of a request recorded without one: refused or ignored before the gateway gave it an ID (the
 * idempotency step comes after the events check, the filters and the script), with no sender's ID.
 */
export const NO_DELIVERY_ID = "-";
/** Records older than this are not shown nor redelivered; a file holding only such records is removed. */
export const HISTORY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export const HISTORY_FILE = "history.jsonl";

/** `$SVC_HOME/deliveries`: the history of every profile's routes (route names are shared). */
export function historyDir(home: string): string {
  return join(home, "deliveries");
}
export const HISTORY_PREVIOUS_FILE = "history.1.jsonl";
/** A replaced previous file, renamed aside while it is removed (`.history-replaced-<pid>-<n>.jsonl`). */
const REPLACED_FILE = /^\.history-replaced-\d+-\d+\.jsonl$/;

/** One request that named a served route: what the sender's "recent deliveries" page would show. */
/** `event_header` of a request whose event type came from its body: a redelivery adds no header. */
export const EVENT_IN_BODY = "body";

export interface RequestRecord {
  readonly kind: "request";
  readonly id: string;
  readonly at: string;
  readonly route: string;
  readonly status: number;
  /** The answer's `status` field: accepted, duplicate, ignored, coalesced, delivered; or its error. */
  readonly outcome: string;
  /**
   * Why the gateway refused or ignored the request, where the answer does not say. A 401's: `x-hub-signature-256
   * does not match`, `no recognized signature or token header`, a stale timestamp (the signature schemes'
   * fixed texts, never a secret or signature). A 200 ignored's: `event not among the route's events` or
   * `ping not among the route's events` (fixed: `svc webhook deliveries` says them with `event`), `filter
   * action did not match` (the filter's field as config.yaml writes it), `script exited with code 1` (what
   * the script did, never its output). A 202 coalesced's that joined no group: `superseded by a run already
   * dispatched (<that run's delivery id>)`. Absent on other answers and on older records.
   */
  readonly reason?: string | undefined;
  readonly event?: string | undefined;
  /**
   * The header that named `event`, when it is not `x-forge-event` (a redelivery sends it there again);
   * `body` when the body named it.
   */
  readonly event_header?: string | undefined;
  readonly redelivery_of?: string | undefined;
  readonly content_type?: string | undefined;
  /**
   * The request headers the route's filters read, as `[name, value]` pairs (lower-cased names), so a
   * redelivery is filtered as the original was: never a signature, credential or delivery-ID header; at
   * most HISTORY_HEADERS_MAX, each value up to HISTORY_HEADER_VALUE_CHARS. Only on records whose payload is
   * kept; absent on older records. Pairs, not an object: a header named `payload` would be a `,"payload":`
   * before the line's payload key, which `readLine` finds as the first one.
   */
  readonly headers?: readonly (readonly [string, string])[] | undefined;
  /**
   * The body as received (only for answers in the 2xx range and failed direct deliveries, up to
   * HISTORY_PAYLOAD_BYTES). With `json` the
   * line holds it unescaped, as the JSON value it is; once read back it is its text, byte for byte.
   */
  readonly payload?: string | undefined;
  readonly payload_encoding?: "json" | "utf8" | "base64" | undefined;
  readonly payload_omitted?: "too_large" | "not_accepted" | undefined;
}

export interface RunRecord {
  readonly kind: "run";
  readonly id: string;
  readonly at: string;
  readonly route: string;
  /**
   * `dropped`: no run, the event dropped at its turn in the run queue (a `cron_job` route's job paused,
   * disabled or removed meanwhile, or its store unreadable), `error` saying why; listed as no run, with why
   * in its NOTE.
   */
  readonly outcome: "ok" | "failed" | "dropped";
  /**
   * The event type the run was accepted with (cut as a request's is), so a run whose request another
   * instance answered shows it too; absent when the request named none, and on records an older svc wrote.
   */
  readonly event?: string | undefined;
  /**
   * When the gateway received the run's request (ms since the epoch, the run queue's `receivedAt`): a run
   * whose request the history no longer holds tells a request rotated out (received before the first kept
   * record) from one never recorded (the gateway killed after recording the event and before answering
   * it). Absent on records an older svc wrote.
   */
  readonly received_at?: number | undefined;
  readonly error?: string | undefined;
}

export interface DeliveryRecord {
  readonly kind: "delivery";
  readonly id: string;
  readonly at: string;
  readonly route: string;
  readonly platform: string;
  readonly outcome: "ok" | "failed";
  /** Why a failed delivery failed (cut as a run's error is); records an older svc wrote have none. */
  readonly error?: string | undefined;
}

/** One kind of answer a `not_recorded` record counts: what a request record would have said of each. */
export interface NotRecordedAnswer {
  readonly status: number;
  readonly outcome: string;
  readonly reason?: string | undefined;
  readonly count: number;
}

/**
 * Refused requests of a route counted instead of recorded one by one (past the route's allowance of
 * refused records), from `since` to `at`; `id` is NO_DELIVERY_ID. Versions before it skip the kind.
 */
export interface NotRecordedRecord {
  readonly kind: "not_recorded";
  readonly id: string;
  readonly at: string;
  readonly route: string;
  readonly since: string;
  readonly count: number;
  /** The most frequent kinds of answer first. */
  readonly answers: readonly NotRecordedAnswer[];
  /** Requests of further kinds of answer, not named. */
  readonly others?: number | undefined;
}

export type HistoryRecord = RequestRecord | RunRecord | DeliveryRecord | NotRecordedRecord;

export interface HistoryWriter {
  /** `json`: the bytes of a `json` payload (the record's `payload` left unset), written as they are. */
  record(record: HistoryRecord, json?: Buffer): void;
  /** Writes the records of this turn now, not at its end. */
  flush(): void;
  close(): void;
  /**
   * Records left for the turn's end: `drain` records them, called before each batch is written (the turn's
   * end, `flush`, `close`, exit); the function returned says the current turn has some (false once closed).
   * A writer without it records each at once.
   */
  deferTo?(drain: () => void): () => boolean;
}

/** What is kept of a body: the record's payload fields, and the bytes of a `json` payload. */
export type KeptPayload = Pick<RequestRecord, "payload" | "payload_encoding" | "payload_omitted"> & {
  readonly json?: Buffer;
};

const OPEN_BRACE = 0x7b;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The body as stored: a JSON object as it is (`json`: its bytes, for the writer to copy into the line),
 * other UTF-8 text as a JSON string (`utf8`: it round-trips exactly), anything else base64. `parsedAsJson`:
 * the route parsed the body itself as a JSON object, so it is one JSON value and can stand in the line
 * unescaped (escaping the quotes of a 1 KB payload was most of a request's history cost). It must also
 * begin the line's value at its first byte (no byte order mark) and hold no line break, which JSON allows
 * between tokens but a line cannot.
 */
export function encodePayload(body: Buffer, parsedAsJson = false): KeptPayload {
  if (body.length > HISTORY_PAYLOAD_BYTES) return { payload_omitted: "too_large" };
  // Well-formed UTF-8 is exactly what decodes and re-encodes to the same bytes: checked without a copy.
  if (!isUtf8(body)) return { payload: body.toString("base64"), payload_encoding: "base64" };
  if (parsedAsJson && body[0] === OPEN_BRACE && body.indexOf(LF) < 0 && body.indexOf(CR) < 0)
    return { payload_encoding: "json", json: body };
  return { payload: body.toString("utf8"), payload_encoding: "utf8" };
}

export function decodePayload(record: RequestRecord): Buffer | undefined {
  if (record.payload === undefined) return undefined;
  return Buffer.from(record.payload, record.payload_encoding === "base64" ? "base64" : "utf8");
}

/** A `json` payload is written as the line's last value: the text between its key and the line's closing brace. */
const JSON_PAYLOAD_KEY = ',"payload":';

const q = JSON.stringify;
const opt = (name: string, value: string | undefined) =>
  value === undefined ? "" : `,"${name}":${q(value)}`;

/**
 * `,"<key>":<the value as JSON>`, kept for the last value given: an event's three records share their time
 * (to the millisecond) and route, and its delivery's and run's lines, written one after the other, their id.
 */
function lastField(key: string): (value: string) => string {
  let last: string | undefined;
  let text = "";
  return (value) => {
    if (value !== last) {
      last = value;
      text = `,"${key}":${q(value)}`;
    }
    return text;
  };
}
const idField = lastField("id");
const atField = lastField("at");
const routeField = lastField("route");
const platformField = lastField("platform");
/** A run's event type: most runs in a row share one (`push`), whose text is then made once. */
const runEventField = lastField("event");

/** The keys every record's line begins with. */
const lineHead = (r: HistoryRecord) =>
  `{"kind":"${r.kind}"${idField(r.id)}${atField(r.at)}${routeField(r.route)}`;

/** A run's or delivery's outcome (`ok`, `failed`) as the line writes it. */
const OUTCOME_OK = ',"outcome":"ok"';
const OUTCOME_FAILED = ',"outcome":"failed"';
const outcomeField = (outcome: string) =>
  outcome === "ok" ? OUTCOME_OK : outcome === "failed" ? OUTCOME_FAILED : `,"outcome":${q(outcome)}`;

/**
 * Precedes a run's `received_at`: one number more on a line written anyway (~30 bytes, and ~0.1 µs to
 * write its digits, per run).
 */
const RECEIVED_AT_KEY = ',"received_at":';

/**
 * `,"<key>":<the value as JSON>`, or nothing for no value, kept for the last value given: a route's requests
 * mostly share their status, outcome, reason, event and content type, whose texts are then made once.
 */
function lastOptField(key: string): (value: string | undefined) => string {
  const field = lastField(key);
  return (value) => (value === undefined ? "" : field(value));
}
const outcomeTextField = lastField("outcome");
const reasonField = lastOptField("reason");
const requestEventField = lastOptField("event");
const eventHeaderField = lastOptField("event_header");
const contentTypeField = lastOptField("content_type");
let lastStatus: number | undefined;
let statusText = "";
/** `,"status":<status>`, made once for the last status given. */
function statusField(status: number): string {
  if (status !== lastStatus) {
    lastStatus = status;
    statusText = `,"status":${q(status)}`;
  }
  return statusText;
}

/** A request record's line up to its payload fields. */
const requestLineStart = (r: RequestRecord) =>
  `${lineHead(r)}${statusField(r.status)}${outcomeTextField(r.outcome)}${reasonField(r.reason)}${requestEventField(r.event)}${eventHeaderField(r.event_header)}${opt("redelivery_of", r.redelivery_of)}${contentTypeField(r.content_type)}${r.headers === undefined ? "" : `,"headers":${q(r.headers)}`}`;

/** Precedes a `json` payload's bytes, which end the line's object. */
const JSON_PAYLOAD_START = `,"payload_encoding":"json"${JSON_PAYLOAD_KEY}`;

/**
 * The record's JSON line: the same text `JSON.stringify` gives for a record built in the fields' declared
 * order (undefined fields left out), built from its fixed keys. `JSON.stringify` of a whole record took
 * ~2.4 µs per request in the gateway (records of several shapes), most of a 401's history cost. A `json`
 * payload (its text here, as `readHistory` gives it) is written unescaped, after its encoding, as the
 * line's last value.
 */
export function historyLine(r: HistoryRecord): string {
  switch (r.kind) {
    case "request":
      if (r.payload_encoding === "json" && r.payload !== undefined)
        return `${requestLineStart(r)}${JSON_PAYLOAD_START}${r.payload}}`;
      return `${requestLineStart(r)}${opt("payload", r.payload)}${opt("payload_encoding", r.payload_encoding)}${opt("payload_omitted", r.payload_omitted)}}`;
    case "run":
      return `${lineHead(r)}${outcomeField(r.outcome)}${r.event === undefined ? "" : runEventField(r.event)}${r.received_at === undefined ? "" : `${RECEIVED_AT_KEY}${q(r.received_at)}`}${opt("error", r.error)}}`;
    case "delivery":
      return `${lineHead(r)}${platformField(r.platform)}${outcomeField(r.outcome)}${opt("error", r.error)}}`;
    case "not_recorded":
      return `${lineHead(r)},"since":${q(r.since)},"count":${q(r.count)},"answers":${q(r.answers)}${r.others === undefined ? "" : `,"others":${q(r.others)}`}}`;
  }
}

/**
 * Removes a previous-generation file whose newest record is past the retention (its mtime says so), and
 * replaced files a stopped process left before it could remove them.
 */
function dropExpired(dir: string, now: number): void {
  for (const name of readdirSync(dir)) if (REPLACED_FILE.test(name)) rmSync(join(dir, name), { force: true });
  for (const name of [HISTORY_PREVIOUS_FILE, HISTORY_FILE]) {
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > HISTORY_RETENTION_MS) rmSync(path, { force: true });
    } catch {
      // absent
    }
  }
}

/**
 * What a start with `delivery_history: false` does to the history: nothing is recorded, but the files
 * recorded before (payloads senders sent) are removed once past the retention, as a writer's start
 * removes them. No directory is made; one that is absent or cannot be read is left as it is.
 */
export function dropExpiredHistory(dir: string, now: number = Date.now()): void {
  try {
    dropExpired(dir, now);
  } catch {
    // absent, or not ours to read: left as it is, as nothing is written there
  }
}

/**
 * The directory and its files private (0700, 0600), also when they already existed wider — made by hand,
 * restored from a backup, left by another umask: they hold the payloads senders sent.
 */
function narrowModes(dir: string): void {
  privateDir(dir);
  narrowMode(join(dir, HISTORY_PREVIOUS_FILE), 0o600);
}

/** Whether the file's last byte (of `size`) is a line break. */
function endsWithLineBreak(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  return readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === LF;
}

/** Opens `file` for appending, mode 0600 whether it is created or already existed. */
function openPrivate(file: string): number {
  const fd = openSync(file, "a+", 0o600);
  // A named pipe (or device) opens too: once its buffer is full with nobody reading, a write would block
  // the gateway's thread for good.
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new Error(`${file} is not a file`);
  }
  try {
    fchmodSync(fd, 0o600);
  } catch {
    // not ours to change (another owner)
  }
  return fd;
}

/**
 * Appends records as JSON lines to `<dir>/history.jsonl` (mode 0600, in a 0700 directory), one write per
 * event-loop turn (batchedWriter); a line cut by a crash is ended at open and skipped by the reader. Past HISTORY_FILE_BYTES the file
 * becomes `history.1.jsonl` (replacing the older one) and a new one starts.
 */
export function createHistoryWriter(
  dir: string,
  onError: (err: unknown) => void,
  now: () => number = Date.now,
  maxFileBytes = HISTORY_FILE_BYTES,
  /** How a batch reaches the file (tests write to a full device to see a failing disk). */
  writeBatch: (fd: number, bytes: Uint8Array) => number = writeBytesSync,
): HistoryWriter {
  const file = join(dir, HISTORY_FILE);
  const previous = join(dir, HISTORY_PREVIOUS_FILE);
  let fd = -1;
  let size = 0;
  /** Opens the file for appending; the size it has, a line a crash cut short ended first. */
  const openFile = () => {
    fd = openPrivate(file);
    size = fstatSync(fd).size;
    // A line a crash cut short has no line break: the next record would be glued to it and lost with it.
    if (size > 0 && !endsWithLineBreak(fd, size)) size += writeBytesSync(fd, Buffer.from("\n"));
  };
  try {
    narrowModes(dir);
    dropExpired(dir, now());
    openFile();
  } catch (err) {
    // A link to a device (`deliveries -> /dev/null`) in the directory's place: the link is what to change.
    const way = historyDirInTheWay(dir);
    if (way !== undefined) throw new SvcError("startup_refused", historyDirRefusal(dir, way), { cause: err });
    // A directory (or socket) in the history file's place is moved away, not made a directory.
    let inPlace: string | undefined;
    try {
      inPlace = notAFileAt(file);
    } catch {
      inPlace = undefined;
    }
    const message =
      inPlace === undefined
        ? historyNotOpened(dir, describeError(err))
        : historyNotOpened(dir, `${inPlace} is not a file`, HISTORY_FILE);
    throw new SvcError("startup_refused", message, { cause: err });
  }
  let replaced = 0;
  /**
   * The file `history.1.jsonl` replaces is renamed aside and removed on the thread pool: renaming over it
   * freed its 16 MB on the event loop, ~12 ms every few seconds on a busy route.
   */
  const setAsidePrevious = () => {
    const aside = join(dir, `.history-replaced-${process.pid}-${replaced++}.jsonl`);
    try {
      renameSync(previous, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    rm(aside, { force: true }).catch(onError);
  };
  // The turn's lines are encoded into one buffer kept across batches, a `json` payload copied in as its
  // bytes: no decoded body, no line string holding it, no joined batch.
  // A write that fails (a full disk) drops its batch and is reported once: not again until one succeeds,
  // or a busy gateway would log a warning per event-loop turn for as long as the disk stays full.
  let failing = false;
  let checkedAt = now();
  /**
   * Removed (to clear the history) or renamed away (logrotate) since it was opened: the path names another
   * file, or none, and records written to the one held would never be read.
   */
  const moved = () => fd < 0 || pathMovedFrom(file, fd);
  // After a close the number may soon be another file's or a socket's: never looked at or closed again.
  const closeHeld = () => {
    if (fd >= 0) closeSync(fd);
    fd = -1;
  };
  const writer = createBatchedByteWriter(
    (bytes) => {
      try {
        // A stat at most once a second, as the log's writer does, not one per batch.
        const at = now();
        // A clock set back (an NTP step) looks now too, as the log's writer does.
        if (at - checkedAt >= ROTATION_CHECK_MS || at < checkedAt) {
          checkedAt = at;
          if (moved()) {
            closeHeld();
            makeDirs(dir);
            openFile();
          }
        }
        // Not reopened yet (the last try failed): the batch is dropped, and tried again a second later.
        if (fd < 0) throw new Error(`${file} is not open (reopening it failed; tried again each second)`);
        if (size >= maxFileBytes) {
          closeHeld();
          setAsidePrevious();
          renameSync(file, previous);
          fd = openPrivate(file);
          size = 0;
        }
        size += writeBatch(fd, bytes);
        failing = false;
      } catch (err) {
        if (!failing) onError(err);
        failing = true;
      }
    },
    onError,
    closeHeld,
  );
  return {
    record(record, json) {
      if (json === undefined || record.kind !== "request") {
        writer.write(`${historyLine(record)}\n`);
        return;
      }
      writer.write(`${requestLineStart(record)}${JSON_PAYLOAD_START}`);
      writer.writeBytes(json);
      writer.write("}\n");
    },
    flush() {
      writer.flush();
    },
    close() {
      writer.close();
    },
    deferTo: (drain) => writer.deferTo(drain),
  };
}

/**
 * One line's record; a `json` payload is given back as the text the line holds, not as a parsed value. This
 * version writes it as the line's last value, but a newer one may write fields after it (and an edited line
 * may end in spaces): then the payload's own text is scanned for, so a redelivery sends the bytes received.
 */
function readLine(text: string): HistoryRecord {
  const record = JSON.parse(text) as HistoryRecord;
  if (record.kind !== "request" || record.payload_encoding !== "json") return record;
  // The first unescaped `,"payload":` is the key: the values before it are JSON strings and numbers.
  const key = text.indexOf(JSON_PAYLOAD_KEY);
  if (key < 0) return record;
  const line = text.trimEnd();
  const start = key + JSON_PAYLOAD_KEY.length;
  // Whitespace after the value is the body's own (a JSON body may end in spaces), up to the next field.
  const end = lastKey(record) === "payload" ? line.length - 1 : pastSpaces(line, jsonValueEnd(line, start));
  return { ...record, payload: line.slice(start, end) };
}

function lastKey(record: object): string | undefined {
  let last: string | undefined;
  for (const name in record) last = name;
  return last;
}

/**
 * The texts of both files, the previous one first, of one generation: a rotation between the two reads
 * (the gateway writing while `svc webhook deliveries` reads) would give the file before the previous one
 * and the new, empty current one, without the whole generation in between; both are read again then.
 */
function historyTexts(dir: string, read: ReadText): (string | undefined)[] {
  for (let attempt = 1; ; attempt++) {
    const before = currentIno(join(dir, HISTORY_FILE));
    const texts = [HISTORY_PREVIOUS_FILE, HISTORY_FILE].map((name) => historyText(dir, name, read));
    if (attempt === READ_ATTEMPTS || currentIno(join(dir, HISTORY_FILE)) === before) return texts;
  }
}

/** Every record within the retention, oldest first (both files); unreadable lines are skipped. */
export function readHistory(
  dir: string,
  now: number = Date.now(),
  read: ReadText = readText,
): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  for (const text of historyTexts(dir, read)) {
    if (text === undefined) continue;
    for (const line of text.split("\n")) {
      const record = recordOf(line, now);
      if (record !== undefined) records.push(record);
    }
  }
  return records;
}

/**
 * A line's record, undefined for an empty or unreadable line (one cut by a crash, or edited into fields of
 * other types), one of a kind this version does not know (summarizeHistory would take it for a delivery),
 * or one past the retention.
 */
export function recordOf(text: string, now: number): HistoryRecord | undefined {
  // A file edited to CRLF line endings: a JSON payload is read up to the line's last character.
  const line = text.endsWith("\r") ? text.slice(0, -1) : text;
  if (line === "") return undefined;
  let record: HistoryRecord | undefined;
  try {
    record = readLine(line);
  } catch {
    record = gluedRecord(line, readLine);
  }
  if (record === undefined || !isReadableRecord(record)) return undefined;
  return now - Date.parse(record.at) <= HISTORY_RETENTION_MS ? record : undefined;
}

/**
 * One delivery ID's request with what became of it: the latest run and delivery records of that ID. A run
 * that no request in this history leads to (with `state.backend: redis`, a run this instance took from the
 * shared queue for a request another instance answered) is a summary of its own, with its delivery, without
 * `request`.
 */
export interface DeliverySummary {
  readonly route: string;
  readonly id: string;
  /** The request's time, or the first record's of a summary without one. */
  readonly at: string;
  readonly request?: RequestRecord;
  readonly run?: RunRecord;
  readonly delivery?: DeliveryRecord;
  /** A summary of refused requests not recorded one by one: a row of its own, with no request. */
  readonly notRecorded?: NotRecordedRecord;
}

/**
 * Whether a request's answer leads to a delivery of its own: an agent run (accepted, coalesced) or a direct
 * delivery, made (200 delivered) or failed (502). A refused, ignored or duplicate request shares its
 * delivery ID with the one that was delivered (a sender's retry of a 401, 429 or 503) but delivered nothing.
 * So does a duplicate that waited for its original's direct delivery and was answered 502 like it: its
 * record keeps no payload (`not_accepted`), where the original's keeps one to redeliver.
 */
export function ledToDelivery(request: RequestRecord): "agent" | "direct" | undefined {
  const { outcome } = request;
  if (outcome === "accepted" || outcome === "coalesced") return "agent";
  if (outcome === "delivered") return "direct";
  return request.status === 502 && request.payload_omitted !== "not_accepted" ? "direct" : undefined;
}

interface Slot {
  /** The index of the record that made it: slots are shown newest first by it. */
  readonly pos: number;
  readonly request?: RequestRecord;
  readonly notRecorded?: NotRecordedRecord;
  readonly mode?: "agent" | "direct" | undefined;
  run?: RunRecord | undefined;
  delivery?: DeliveryRecord | undefined;
}

/**
 * Requests newest first, each with its own run and delivery outcome. Several requests can share a route and
 * delivery ID and each lead to a delivery (a direct delivery that failed with 502 and the sender's retry that
 * was delivered; an ID sent again after the idempotency hour), so a run or delivery record belongs to the
 * request it follows, not to the latest request of that ID. A direct delivery is recorded just before its
 * answer, so a direct request takes the delivery recorded before it that no earlier request took. A run no
 * request takes shows as a summary of its own, where it was recorded.
 */
export function summarizeHistory(records: readonly HistoryRecord[]): DeliverySummary[] {
  return summarize(records).map(({ summary }) => summary);
}

/** summarizeHistory's summaries, each with the index of the record that made its slot. */
export function summarize(records: readonly HistoryRecord[]): { summary: DeliverySummary; pos: number }[] {
  const slots: Slot[] = [];
  const open = new Map<string, Slot>();
  // Records written before any request of their ID took them (a direct delivery's, before its answer), or
  // that no request here leads to (its request answered by another instance).
  const unclaimed = new Map<string, Slot>();
  for (const [pos, r] of records.entries()) {
    if (r.kind === "not_recorded") {
      slots.push({ pos, notRecorded: r });
      continue;
    }
    const key = `${r.route}\u0000${r.id}`;
    if (r.kind === "request") {
      const mode = ledToDelivery(r);
      const slot: Slot = { pos, request: r, mode };
      slots.push(slot);
      if (mode === undefined) continue;
      open.set(key, slot);
      const before = unclaimed.get(key);
      if (before === undefined) continue;
      slot.delivery = before.delivery;
      before.delivery = undefined;
      if (mode === "agent") {
        slot.run = before.run;
        before.run = undefined;
      }
      if (before.run === undefined) unclaimed.delete(key);
      continue;
    }
    const slot = open.get(key);
    if (r.kind === "run" && slot?.mode === "agent") slot.run = r;
    else if (
      r.kind === "delivery" &&
      slot !== undefined &&
      (slot.mode === "agent" || slot.delivery === undefined)
    )
      slot.delivery = r;
    else {
      let alone = unclaimed.get(key);
      if (alone === undefined || alone[r.kind] !== undefined) {
        alone = { pos };
        slots.push(alone);
        unclaimed.set(key, alone);
      }
      if (r.kind === "run") alone.run = r;
      else alone.delivery = r;
    }
  }
  const summaries: { summary: DeliverySummary; pos: number }[] = [];
  for (const { pos, request, run, delivery, notRecorded } of slots.reverse()) {
    if (notRecorded !== undefined) {
      const { route, id, at } = notRecorded;
      summaries.push({ summary: { route, id, at, notRecorded }, pos });
      continue;
    }
    const first =
      request ?? (delivery !== undefined && (run === undefined || delivery.at <= run.at) ? delivery : run);
    // Taken by a later request; or a delivery alone, no run's: a scheduled cron run's (`cron:<job>`).
    if (first === undefined || (request === undefined && run === undefined)) continue;
    summaries.push({
      summary: {
        route: first.route,
        id: first.id,
        at: first.at,
        ...(request === undefined ? {} : { request }),
        ...(run === undefined ? {} : { run }),
        ...(delivery === undefined ? {} : { delivery }),
      },
      pos,
    });
  }
  return summaries;
}

const keyOf = (r: HistoryRecord) => `${r.route}\u0000${r.id}`;

/** What `svc webhook deliveries` shows: its newest summaries, and all of them once it read them all. */
export interface RecentDeliveries {
  /** Up to `limit` summaries of the route (all routes without one), newest first: summarizeHistory's. */
  readonly shown: DeliverySummary[];
  /** Every summary, when the whole history was read for `shown` (fewer than `limit` of the route). */
  readonly all?: DeliverySummary[];
}

/**
 * The newest `limit` summaries of `route` (of all routes without one), read newest first and no further
 * than they need: the same as summarizeHistory(readHistory(dir)) filtered and cut to `limit`, without
 * reading and parsing a full history (32 MiB, ~176k records) for the last few.
 *
 * A summary depends only on the records of its route and delivery ID (a run or delivery belongs to the
 * request before it, or to none). The records read from the end until `limit` summaries show make a
 * first list. A key with a record at or after the oldest of these summaries (`from`) whose summaries
 * there could be other ones with older records before them (olderMayChange) is then looked up in the
 * rest of the history, by the ID at the head of each line and without parsing the others; when there is
 * none, nothing more is read. With all records of those keys the summaries made at or after `from` are
 * exactly the whole history's, and any other is older. Were fewer than `limit` of them left (a run the
 * list showed alone belongs to an older request), the whole history is summarized.
 */
export function recentDeliveries(
  dir: string,
  limit: number,
  route: string | undefined,
  now: number = Date.now(),
  options: ScanOptions = {},
): RecentDeliveries {
  const ofRoute = ({ summary }: { summary: DeliverySummary }) =>
    route === undefined || summary.route === route;
  const generation = scannedGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options);
  try {
    const fromAll = (records: HistoryRecord[]): RecentDeliveries => {
      const all = summarizeHistory(records);
      return { shown: all.filter((s) => route === undefined || s.route === route).slice(0, limit), all };
    };
    const lines = linesNewestFirst(generation, options.chunkBytes);
    // Newest first as read; summarized oldest first.
    const newest: HistoryRecord[] = [];
    const parse: LineVisit = (buf, start, end) => {
      const record = recordOf(buf.toString("utf8", start, end), now);
      if (record !== undefined) newest.push(record);
      return false;
    };
    // Summarized after 1, 4, 16 … chunks: linear in what is read, however far back the route's records
    // are. A route's summaries are made of its records only.
    let read: HistoryRecord[] = [];
    let first: { summary: DeliverySummary; pos: number }[] = [];
    for (let chunks = 1; first.length < limit; chunks *= 4) {
      for (let n = 0; n < chunks; n++) if (!lines.next(parse)) return fromAll(newest.reverse());
      read = (route === undefined ? [...newest] : newest.filter((r) => r.route === route)).reverse();
      first = summarize(read).filter(ofRoute);
    }
    const from = (first[limit - 1] as { pos: number }).pos;
    const ofKey = new Map<string, { r: HistoryRecord; pos: number }[]>();
    for (const key of read.slice(from).map(keyOf)) ofKey.set(key, []);
    for (const [pos, r] of read.entries()) ofKey.get(keyOf(r))?.push({ r, pos });
    // Most rows (a request with its run and delivery; a refused one) are the same whatever came before.
    const settled = new Map<string, boolean>();
    const keys = new Set(
      [...ofKey].filter(([, records]) => olderMayChange(records, from, settled)).map(([key]) => key),
    );
    if (keys.size === 0) return { shown: first.slice(0, limit).map(({ summary }) => summary) };
    const ids = new Set(read.filter((r) => keys.has(keyOf(r))).map((r) => r.id));
    // The older records of those keys, newest first.
    const older: HistoryRecord[] = [];
    const lookUp: LineVisit = (buf, start, end) => {
      const id = lineId(buf, start, end);
      if (id !== undefined && !ids.has(id)) return false;
      const record = recordOf(buf.toString("utf8", start, end), now);
      if (record !== undefined && keys.has(keyOf(record))) older.push(record);
      return false;
    };
    while (lines.next(lookUp));
    const ofKeys = [...ofKey.values()].flat().sort((a, b) => a.pos - b.pos);
    const at = [...older.map(() => -1), ...ofKeys.map(({ pos }) => pos)];
    const exact = summarize([...older.reverse(), ...ofKeys.map(({ r }) => r)])
      .map(({ summary, pos }) => ({ summary, pos: at[pos] as number }))
      .filter((s) => s.pos >= from && ofRoute(s));
    if (exact.length < limit) return fromAll(recordsOf(generation, () => true, now, options.chunkBytes));
    return { shown: exact.slice(0, limit).map(({ summary }) => summary) };
  } finally {
    generation.close();
  }
}

/**
 * What a key's records before those read can have left for the ones read (summarize keeps no more of
 * it): no request of it open, an agent's, or a direct one's without or with its delivery; with a run, a
 * delivery or both no request took. Each is made by these records (a direct delivery is recorded before
 * its request, a second delivery of a direct request is left unclaimed); an agent's request takes what
 * was unclaimed, and the records after it are its own.
 */
const PRIOR_STATES: readonly (readonly ("agent" | "direct" | "run" | "delivery")[])[] = [
  ["run"],
  ["delivery"],
  ["run", "delivery"],
  ["agent"],
  ["direct"],
  ["direct", "run"],
  ["delivery", "direct"],
  ["delivery", "direct", "run"],
  ["direct", "delivery", "delivery"],
  ["direct", "delivery", "delivery", "run"],
];

/**
 * Whether the summaries a key's records (those read, in order) make at or after `from` could be other
 * ones with its older records before them: the same in every state those can leave the key in, they are
 * the whole history's, and its older records need not be looked for.
 */
function olderMayChange(
  records: readonly { r: HistoryRecord; pos: number }[],
  from: number,
  /** The answers for the keys' shapes so far: it depends on the kinds and answers of the records only. */
  shapes: Map<string, boolean>,
): boolean {
  const [head] = records;
  if (head === undefined) return false;
  const shape = records
    .map(
      ({ r, pos }) => `${r.kind === "request" ? (ledToDelivery(r) ?? "-") : r.kind}${pos >= from ? "+" : ""}`,
    )
    .join(",");
  const known = shapes.get(shape);
  if (known !== undefined) return known;
  const answer = mayChange(records, from);
  shapes.set(shape, answer);
  return answer;
}

function mayChange(records: readonly { r: HistoryRecord; pos: number }[], from: number): boolean {
  const [head] = records;
  if (head === undefined) return false;
  const { route, id } = head.r;
  const made = (kind: (typeof PRIOR_STATES)[number][number]): HistoryRecord =>
    kind === "run"
      ? { kind, id, at: "", route, outcome: "ok" }
      : kind === "delivery"
        ? { kind, id, at: "", route, platform: "", outcome: "ok" }
        : kind === "agent"
          ? { kind: "request", id, at: "", route, status: 202, outcome: "accepted" }
          : { kind: "request", id, at: "", route, status: 200, outcome: "delivered" };
  const rows = (prior: readonly HistoryRecord[]) =>
    summarize([...prior, ...records.map(({ r }) => r)]).flatMap(({ summary, pos }) =>
      pos >= prior.length && (records[pos - prior.length]?.pos ?? -1) >= from ? [summary] : [],
    );
  const alone = rows([]);
  return PRIOR_STATES.some((kinds) => {
    const other = rows(kinds.map(made));
    return (
      other.length !== alone.length ||
      alone.some((s, i) => {
        const o = other[i] as DeliverySummary;
        return s.at !== o.at || s.request !== o.request || s.run !== o.run || s.delivery !== o.delivery;
      })
    );
  });
}

/**
 * The records (oldest first) of the delivery IDs `wanted` takes, as readHistory(dir) filtered by ID:
 * what `svc webhook redeliver <id>` reads. Every line is looked at (a request of that ID on another route
 * may be older than the rest), but only by the ID at its head; only the lines of wanted IDs, and lines not
 * written by the gateway (by hand, cut short), are parsed, a chunk at a time.
 */
export function historyOfIds(
  dir: string,
  wanted: (id: string) => boolean,
  now: number = Date.now(),
  options: ScanOptions = {},
): HistoryRecord[] {
  const generation = openGeneration(dir, HISTORY_PREVIOUS_FILE, HISTORY_FILE, options.opened);
  try {
    return recordsOf(generation, wanted, now, options.chunkBytes);
  } finally {
    generation.close();
  }
}

/** The generation's records (oldest first) whose ID `wanted` takes. */
function recordsOf(
  generation: HistoryGeneration,
  wanted: (id: string) => boolean,
  now: number,
  chunkBytes: number | undefined,
): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  const lines = linesNewestFirst(generation, chunkBytes);
  const visit: LineVisit = (buf, start, end) => {
    const id = lineId(buf, start, end);
    if (id !== undefined && !wanted(id)) return false;
    const record = recordOf(buf.toString("utf8", start, end), now);
    if (record !== undefined && wanted(record.id)) records.push(record);
    return false;
  };
  while (lines.next(visit));
  return records.reverse();
}
