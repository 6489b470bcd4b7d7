import pino from "pino";
import { type Logger, logLevel, pinoOptions, safeMessage } from "../io/log.js";

const PREFIX: Readonly<Record<number, string>> = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warning",
  50: "error",
  60: "error",
};

/** Components whose warnings a command does not report itself (its own output covers the MCP servers'). */
const SAID_BY_THE_COMPONENT = /^\[oauth\] /;

/**
 * Whether a line goes to stderr without `SVC_LOG_LEVEL`: such a component's, or a failed sampling run's
 * reason (`[mcp] <server>: sampling failed: …`), which the server's error result the command prints does
 * not give.
 */
const reportedHere = (msg: string, sampling: unknown) =>
  SAID_BY_THE_COMPONENT.test(msg) || sampling === "failed";

let made: Logger | undefined;

/**
 * The logger of a short CLI command (`svc mcp ...`; one per process). A login's or a token refresh's
 * warning goes to stderr as `warning: <server>: <message>` (without the time or the tag), where it reaches the
 * user instead of nowhere, and so does a failed sampling run's reason; the other components' lines, which
 * the command reports in its own words, only when `SVC_LOG_LEVEL` asks for them.
 */
export function cliLogger(): Logger {
  // Blank counts as unset, as for the gateway (src/io/log.ts).
  made ??= makeCliLogger(process.env.SVC_LOG_LEVEL?.trim() || undefined);
  return made;
}

function makeCliLogger(asked: string | undefined): Logger {
  return pino(pinoOptions(asked === undefined ? "warn" : logLevel(asked)), {
    write(line: string) {
      const {
        level,
        msg = "",
        err,
        server,
        sampling,
      } = JSON.parse(line) as {
        level: number;
        msg?: string;
        err?: unknown;
        server?: unknown;
        sampling?: unknown;
      };
      if (asked === undefined && !reportedHere(msg, sampling)) return;
      const why = typeof err === "string" && err !== "" ? ` (${err})` : "";
      // Which server an OAuth warning is about (svc mcp reauth --all, svc mcp list go through several);
      // the other components' lines name it themselves.
      const who =
        typeof server === "string" && server !== "" && SAID_BY_THE_COMPONENT.test(msg) ? `${server}: ` : "";
      const text = `${who}${msg.replace(/^\[[\w-]+\] /, "")}${why}`;
      // The text may quote a server (its log messages, progress, errors): each line after the first is
      // indented, as in the gateway log, so none reads as a line of svc's own (`svc: …`, `error: …`).
      process.stderr.write(`${PREFIX[level] ?? "log"}: ${safeMessage(text)}\n`);
    },
  });
}
