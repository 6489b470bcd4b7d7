import pino from "pino";
import type { Logger } from "../../src/io/log.js";
import { pinoOptions } from "../../src/io/log.js";

export interface CapturedLog {
  readonly logger: Logger;
  /** Every JSON log line written so far, raw. */
  lines(): string[];
  /** Every `msg` written so far. */
  messages(): string[];
}

/** A pino logger (same redaction as the gateway's) writing into memory. */
export function captureLogger(): CapturedLog {
  const lines: string[] = [];
  const logger = pino(pinoOptions("debug"), { write: (line: string) => lines.push(line) });
  return {
    logger,
    lines: () => [...lines],
    messages: () => lines.map((line) => String((JSON.parse(line) as { msg?: string }).msg ?? "")),
  };
}
