import { scrub } from "../../io/credentials.js";
import { cutText } from "../../io/cutText.js";
import type { Logger } from "../../io/log.js";
import type { ServerLogParams } from "../../io/mcp/looseAnswers.js";

/** A server's log message longer than this is cut: one chatty server must not flood the gateway log. */
export const SERVER_LOG_MAX_CHARS = 2000;

/**
 * The gateway log level of an MCP (syslog) level: notice is info; critical, alert and emergency are error.
 * A level outside MCP's eight, as hand-written servers send them (`warn`, `FATAL`, `trace`, in any case),
 * is read by its name; one svc does not know (`verbose`) is info.
 */
export function gatewayLevel(level: string): "debug" | "info" | "warn" | "error" {
  switch (level.toLowerCase()) {
    case "debug":
    case "trace":
      return "debug";
    case "warning":
    case "warn":
      return "warn";
    case "error":
    case "err":
    case "critical":
    case "crit":
    case "alert":
    case "emergency":
    case "emerg":
    case "fatal":
      return "error";
    default:
      return "info";
  }
}

/**
 * The text of a log message: a string as it is, anything else as JSON, a message without `data` (which a
 * hand-written server may send) as `(no data)`, data too deep for JSON as `(data nested too deep to write
 * out)`; `secrets` redacted, then cut (see `serverText`).
 */
export function serverLogText(params: ServerLogParams, secrets: readonly string[] = []): string {
  const logger = typeof params.logger === "string" ? `${params.logger}: ` : "";
  return serverText(`${logger}${dataText(params.data)}`, secrets);
}

/**
 * A server's text for the gateway log (a log message, a progress message): `secrets` redacted, then cut at
 * `SERVER_LOG_MAX_CHARS` (a cut first would leave the part of a long credential before it, which no longer
 * matches the credential, in the log). A cut that would fall inside an emoji (two UTF-16 units) keeps one
 * unit fewer: half of one would be written as U+FFFD.
 */
export function serverText(text: string, secrets: readonly string[] = []): string {
  const scrubbed = scrub(text, secrets);
  return scrubbed.length > SERVER_LOG_MAX_CHARS ? `${cutText(scrubbed, SERVER_LOG_MAX_CHARS)}…` : scrubbed;
}

/**
 * A message's `data` as text. JSON.stringify is recursive: data nested some thousands of levels deep (which
 * JSON.parse reads) made it throw in the notification handler, and the message was dropped without a word.
 */
function dataText(data: unknown): string {
  if (data === undefined) return "(no data)";
  if (typeof data === "string") return data;
  try {
    return JSON.stringify(data) ?? String(data);
  } catch {
    return "(data nested too deep to write out)";
  }
}

/**
 * `notifications/message` from a server, written to the gateway log at the matching level, with the
 * entry's credentials redacted (a server logging the configuration it started with).
 */
export function logServerMessage(
  logger: Logger,
  server: string,
  params: ServerLogParams,
  secrets: readonly string[] = [],
): void {
  // A level that is no text (pino's number 50) or none at all (a hand-written server's) is info.
  const level = params.level;
  const named =
    typeof level === "string"
      ? level
      : level === undefined || level === null
        ? undefined
        : typeof level === "object"
          ? "(not a level name)"
          : String(level);
  logger[gatewayLevel(named ?? "info")](
    { server, ...(named === undefined ? {} : { mcpLevel: named }) },
    `[mcp:${server}] ${serverLogText(params, secrets)}`,
  );
}
