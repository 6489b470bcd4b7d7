import { fstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { nearMiss } from "../config/nearMiss.js";
import { SvcError } from "../errors.js";
import { createBatchedFileWriter, createBatchedWriter } from "./batchedWriter.js";
import { redactCredentials } from "./credentials.js";
import { isoTime } from "./isoTime.js";
import { logFileProblem } from "./logFileProblem.js";
import { createAsDirectoryOwner } from "./makeDirs.js";
import { privateDir } from "./privateMode.js";
import { terminalText } from "./terminalText.js";

export type { Logger } from "pino";

/** Keys whose values never reach a log line (any case), at the top level or one level down. */
const REDACTED_KEYS: ReadonlySet<string> = new Set([
  "secret",
  "token",
  "password",
  "authorization",
  "client_secret",
  "access_token",
  "refresh_token",
  "api_key",
]);
const CENSOR = "[redacted]";

/** Whether a field of this name holds a secret (`secret`, `token`, `Authorization`, ...), in any case. */
export function isSecretKey(key: string): boolean {
  return REDACTED_KEYS.has(key.toLowerCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The fields of a log call with every secret-named value (`token`, `headers.authorization`,
 * `oauth.client_secret`, ...) replaced by `[redacted]`. Copies only when something is hidden: the
 * common call (`{ route, delivery_id }`) costs a key scan, where pino's path-based redaction cost
 * ~4 % of a busy gateway's CPU.
 */
export function redactSecrets(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let out = fields;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    let kept = value;
    if (isSecretKey(key)) kept = CENSOR;
    else if (typeof value === "string") kept = redactCredentials(value);
    else if (depth === 0 && isPlainObject(value)) kept = redactSecrets(value, 1);
    if (kept !== value) {
      if (out === fields) out = { ...fields };
      out[key] = kept;
    }
  }
  return out;
}

/** pino options every svc logger shares (also the tests' capturing logger). */
export function pinoOptions(level: string): pino.LoggerOptions {
  return {
    level,
    base: null,
    formatters: { log: (fields) => redactSecrets(fields) },
    hooks: {
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++) {
          const arg: unknown = args[i];
          if (typeof arg === "string") args[i] = redactCredentials(arg);
        }
        return method.apply(this, args);
      },
    },
  };
}

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

/** Human-readable lines for a terminal: `2026-11-22T20:00:00.000Z INFO [webhook] Listening on ...`. */
export function textLine(json: string): string {
  return fastTextLine(json) ?? parsedTextLine(json);
}

const HEAD = /^\{"level":(\d+),"time":(\d+)/;

/** What starts a new line for a reader: CRLF, a bare CR, LF, and U+2028/U+2029. */
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/g;

/** What a text line puts before each line of its message after the first (`safeMessage`). */
const CONTINUATION = "  ";

/**
 * Messages quote untrusted text (an agent reply echoing a PR title): every line after the first is
 * indented, so no text can start a line that reads as a log record of its own (a bare carriage return
 * breaks a line too), and what a terminal would act on or hide (a terminal escape, a bidi override that
 * would make the rest of the line, fields included, read right to left, a zero-width space) is shown as
 * `\u001b`, `\u202e` and so on, by the rule of `terminalText`.
 */
export function safeMessage(msg: string): string {
  return terminalText(msg.replace(LINE_BREAK, `\n${CONTINUATION}`));
}

/**
 * The columns `logger` prints before each line of a message after its first: two for a logger of
 * `createLogger` whose every sink takes text lines (stdout and the gateway's log), so lines a user is meant
 * to copy as printed (a config snippet) can be laid out for the columns they are printed at; 0 for any other
 * logger (one with a JSON file, whose readers get the message as written, or a logger not made here).
 */
export function continuationColumns(logger: Logger): number {
  return textSinks.has(logger) ? CONTINUATION.length : 0;
}

/**
 * A line's fields as JSON with the characters JSON leaves as they are but a reader may act on written as
 * `\u2028` (`terminalText`'s set): U+2028, U+2029 and U+0085 break lines for many readers (a delivery id
 * or event type from a request could otherwise begin what passes for a log record of its own), U+007F-U+009F
 * include a terminal's single-character escape (U+009B), and bidi overrides and zero-width characters
 * would make an id read as another. They can only be inside strings (JSON escapes the C0 controls itself),
 * so the JSON stays valid and its values the same.
 */
export function safeFields(json: string): string {
  return terminalText(json);
}

const MSG = ',"msg":"';

/**
 * pino (base: null) writes `{"level":N,"time":T,<fields>,"msg":"..."}` with `msg` last, so the text
 * line is cut out of the JSON without parsing the whole object: only the message string is decoded.
 * `undefined` for any other shape.
 */
function fastTextLine(json: string): string | undefined {
  const head = HEAD.exec(json);
  const at = json.lastIndexOf(MSG);
  const end = json.lastIndexOf("}");
  if (head === null || at < head[0].length || end < at) return undefined;
  let msg: unknown;
  try {
    msg = JSON.parse(json.slice(at + MSG.length - 1, end));
  } catch {
    return undefined;
  }
  if (typeof msg !== "string") return undefined;
  const fields = json.slice(head[0].length, at);
  const extra = fields.length > 0 ? ` {${safeFields(fields.slice(1))}}` : "";
  const level = Number(head[1]);
  return `${isoTime(Number(head[2]))} ${LEVEL_NAMES[level] ?? level} ${safeMessage(msg)}${extra}\n`;
}

function parsedTextLine(json: string): string {
  try {
    const { level, time, msg, ...rest } = JSON.parse(json) as Record<string, unknown>;
    const extra = Object.keys(rest).length > 0 ? ` ${safeFields(JSON.stringify(rest))}` : "";
    return `${new Date(Number(time)).toISOString()} ${LEVEL_NAMES[Number(level)] ?? level} ${safeMessage(String(msg ?? ""))}${extra}\n`;
  } catch {
    return json;
  }
}

const INFO = 30;

/**
 * The INFO text line `textLine` makes of pino's JSON for `logger.info(fields, msg)`, built directly
 * (fields already redacted, string values only).
 */
function infoTextLine(epochMs: number, fields: Readonly<Record<string, string>>, msg: string): string {
  let extra = "";
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined) continue;
    extra += `${extra === "" ? " {" : ","}${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  return `${isoTime(epochMs)} INFO ${safeMessage(msg)}${extra === "" ? "" : `${safeFields(extra)}}`}\n`;
}

/** Loggers made by `createLogger` whose every sink takes text lines: the sinks, and the level they take. */
const textSinks = new WeakMap<Logger, { readonly level: number; write(text: string): void }>();

/**
 * `logger.info(fields, msg)` for a call made once per agent run (the log delivery target): with a
 * logger of `createLogger` writing text, the line goes to its sinks without the round trip through
 * pino's JSON and back (measured 3.2–3.8 → 1.5–1.7 µs a line), the same text, redacted the same way. Any other
 * logger (JSON sinks, a test's own pino) gets `logger.info`.
 */
export function logInfo(logger: Logger, fields: Readonly<Record<string, string>>, msg: string): void {
  if (!logger.isLevelEnabled("info")) return;
  const sinks = textSinks.get(logger);
  if (sinks === undefined) {
    logger.info(fields, msg);
    return;
  }
  if (sinks.level > INFO) return;
  sinks.write(
    infoTextLine(Date.now(), redactSecrets(fields) as Record<string, string>, redactCredentials(msg)),
  );
}

export interface LogOptions {
  /** Also append the lines to this file (the gateway log). */
  readonly file?: string;
  /**
   * `text` (default): the file holds the same lines as stdout, messages as written (a multi-line reply
   * stays multi-line, quotes unescaped), so what a user greps for in the log is there as they wrote it.
   * `json`: pino's JSON lines, for tests that read fields back.
   */
  readonly fileFormat?: "text" | "json";
  readonly level?: string;
  /** Print to stdout (default true). */
  readonly stdout?: boolean;
  /**
   * Lines logged in one turn of the event loop go out as one write at the end of that turn (and at
   * exit) instead of one write per line: for the long-running gateway, where a write per line on a
   * busy route costs more than the rest of the request. Short CLI commands and tests write each line.
   */
  readonly buffered?: boolean;
}

/**
 * A log file that fails cannot log about itself: said on stderr, by its writer once per outage (not again
 * until one of its writes succeeded).
 */
function reportFileFailure(file: string): (err: unknown) => void {
  return (err) => {
    process.stderr.write(
      `[log] cannot write the log to ${file}: ${logFileProblem(file, err)} — its lines are dropped until a write succeeds (not said again until then)\n`,
    );
  };
}

/** A log sink that fails cannot log about itself: say so once on stderr. */
function reportOnce(sink: string): (err: unknown) => void {
  let told = false;
  return (err) => {
    if (told) return;
    told = true;
    const why = err instanceof Error ? err.message : String(err);
    process.stderr.write(`[log] cannot write the log to ${sink}: ${why} — later failures are not reported\n`);
  };
}

/**
 * Output queued for a stdout that is not read (a supervisor or log collector that stopped reading its pipe,
 * which Node writes to without blocking) is held in memory up to this much; past it the lines are dropped
 * from stdout, said once on stderr, and counted in a line once it is read again. A file keeps every line.
 */
export const STDOUT_BACKLOG_BYTES = 1024 * 1024;

/** Writes to `stream` while what it holds unwritten stays under `STDOUT_BACKLOG_BYTES`. */
function boundedOutput(stream: NodeJS.WritableStream & { readonly writableLength: number }) {
  let dropped = 0;
  return (text: string) => {
    if (stream.writableLength > STDOUT_BACKLOG_BYTES) {
      if (dropped === 0)
        process.stderr.write(
          `[log] stdout is not being read (${STDOUT_BACKLOG_BYTES} bytes waiting): log lines are left out of it until it is, so memory does not grow — the log file keeps them\n`,
        );
      for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) dropped += 1;
      return;
    }
    if (dropped > 0) {
      stream.write(
        `[log] stdout is read again: ${dropped} log line(s) were left out of it — the log file has them\n`,
      );
      dropped = 0;
    }
    stream.write(text);
  };
}

const LEVELS: readonly string[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * A level as pino names it: `SVC_LOG_LEVEL=DEBUG` or ` debug ` is `debug` (a variable's case and spaces are
 * easily written otherwise); empty or blank counts as unset, as for the WEBHOOK_* variables.
 */
function levelName(level: string | undefined): string | undefined {
  const name = level?.trim().toLowerCase();
  return name === "" ? undefined : name;
}

/** Why `SVC_LOG_LEVEL` in `env` stops the gateway's start (a level pino does not know), else undefined. */
export function logLevelProblem(env: NodeJS.ProcessEnv): string | undefined {
  const level = levelName(env.SVC_LOG_LEVEL);
  if (level === undefined || LEVELS.includes(level)) return undefined;
  // `dbug` as a typo, `warning` and `information` as syslog and Python's logging name those levels.
  const meant = nearMiss(level, LEVELS) ?? LEVELS.find((known) => level.startsWith(known));
  return `the environment variable SVC_LOG_LEVEL is "${env.SVC_LOG_LEVEL}" — ${meant === undefined ? "" : `did you mean ${meant}? `}use one of ${LEVELS.join(", ")}`;
}

/** The level asked for, else `SVC_LOG_LEVEL`, else info; a level pino does not know is named with its source. */
export function logLevel(asked: string | undefined): pino.Level {
  const env = process.env.SVC_LOG_LEVEL;
  const level = levelName(asked ?? env) ?? "info";
  if (LEVELS.includes(level)) return level as pino.Level;
  const fromEnv = asked === undefined || asked === env;
  const problem = fromEnv ? logLevelProblem({ SVC_LOG_LEVEL: asked ?? env }) : undefined;
  throw new SvcError("usage", problem ?? `the log level is "${asked}" — use one of ${LEVELS.join(", ")}`);
}

/** Whether stdout is a regular file on the device `file`'s directory is on. */
function stdoutIsFileBeside(file: string): boolean {
  try {
    const out = fstatSync(1);
    return out.isFile() && out.dev === statSync(dirname(file)).dev;
  } catch {
    return false;
  }
}

export function createLogger(options: LogOptions = {}): Logger {
  const streams: pino.StreamEntry[] = [];
  // stdout and the file get the same text line: convert each pino line once.
  let lastJson = "";
  let lastText = "";
  const text = (json: string) => {
    if (json !== lastJson) {
      lastJson = json;
      lastText = textLine(json);
    }
    return lastText;
  };
  const level = logLevel(options.level);
  const buffered = options.buffered === true;
  const textWriters: Array<(text: string) => void> = [];
  let jsonSink = false;
  if (options.stdout !== false) {
    const toStdout = boundedOutput(process.stdout);
    const out = buffered ? createBatchedWriter(toStdout, reportOnce("stdout")) : { write: toStdout };
    const writeOut = (line: string) => out.write(line);
    textWriters.push(writeOut);
    streams.push({ level, stream: { write: (line: string) => writeOut(text(line)) } });
  }
  if (options.file !== undefined) {
    privateDir(dirname(options.file), { asParentOwner: true });
    createAsDirectoryOwner(options.file, 0o600);
    // 0600 like every other file svc writes: a log names routes, senders' ids and payload excerpts.
    jsonSink = options.fileFormat === "json";
    // A text file says where it has a gap (its own line, which a JSON file's readers would not expect).
    const toStdout = options.stdout !== false;
    // Under `svc gateway start` stdout is logs/gateway.out, on the same disk: a full one lost the lines there too.
    const stdoutNote = !toStdout
      ? ""
      : stdoutIsFileBeside(options.file)
        ? " — stdout is a file on the same disk, which may lack them too"
        : " — stdout had them";
    const gap = (lines: number, err: unknown) =>
      `${isoTime(Date.now())} WARN [log] ${lines} log line(s) could not be written to this file (${err instanceof Error ? err.message : String(err)})${stdoutNote}\n`;
    const file = buffered
      ? createBatchedFileWriter(
          options.file,
          0o600,
          reportFileFailure(options.file),
          jsonSink ? {} : { gapLine: gap },
        )
      : pino.destination({ dest: options.file, sync: true, mkdir: true, mode: 0o600 });
    const toFile = (line: string) => file.write(line);
    if (!jsonSink) textWriters.push(toFile);
    streams.push({ level, stream: jsonSink ? file : { write: (line: string) => toFile(text(line)) } });
  }
  const logger = pino(pinoOptions(level), pino.multistream(streams));
  if (!jsonSink)
    textSinks.set(logger, {
      // The streams keep the level they were made with, whatever the logger's later level.
      level: pino.levels.values[level] ?? INFO,
      write(text) {
        for (const write of textWriters) write(text);
      },
    });
  return logger;
}

/** A logger that writes nowhere (library use, tests that do not read logs). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
