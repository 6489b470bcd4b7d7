import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";

export type { Logger } from "pino";

/** Keys whose values never reach a log line. */
export const REDACTED_KEYS = [
  "secret",
  "token",
  "password",
  "authorization",
  "client_secret",
  "access_token",
  "refresh_token",
  "api_key",
  "headers.authorization",
  "*.secret",
  "*.token",
  "*.password",
  "*.authorization",
  "*.client_secret",
  "*.access_token",
  "*.refresh_token",
];

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

/** Human-readable lines for a terminal: `2026-11-22T20:00:00.000Z INFO [webhook] Listening on ...`. */
function textLine(json: string): string {
  try {
    const {
      level,
      time,
      msg,
      pid: _pid,
      hostname: _host,
      ...rest
    } = JSON.parse(json) as Record<string, unknown>;
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : "";
    return `${new Date(Number(time)).toISOString()} ${LEVEL_NAMES[Number(level)] ?? level} ${String(msg ?? "")}${extra}\n`;
  } catch {
    return json;
  }
}

export interface LogOptions {
  /** Also append JSON lines to this file (the gateway log). */
  readonly file?: string;
  readonly level?: string;
  /** Print to stdout (default true). */
  readonly stdout?: boolean;
}

export function createLogger(options: LogOptions = {}): Logger {
  const streams: pino.StreamEntry[] = [];
  const level = (options.level ?? process.env.SVC_LOG_LEVEL ?? "info") as pino.Level;
  if (options.stdout !== false) {
    streams.push({ level, stream: { write: (line: string) => process.stdout.write(textLine(line)) } });
  }
  if (options.file !== undefined) {
    mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
    streams.push({ level, stream: pino.destination({ dest: options.file, sync: true, mkdir: true }) });
  }
  return pino(
    { level, base: null, redact: { paths: REDACTED_KEYS, censor: "[redacted]" } },
    pino.multistream(streams),
  );
}

/** A logger that writes nowhere (library use, tests that do not read logs). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
