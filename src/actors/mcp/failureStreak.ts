import type { Logger } from "../../io/log.js";
import { STABLE_CONNECTION_MS } from "../../machines/mcpConnection.js";

/**
 * A server's failures since its connection last stayed up `STABLE_CONNECTION_MS` (the rule the backoff and
 * `svc_mcp_servers` follow): a server that crashes right after each handshake is one streak of failures, not
 * a failure and a recovery at each crash, so its log does not repeat itself at every backoff.
 */
export interface FailureStreak {
  /** Failed connects and lost connections in the streak (none: no streak). */
  failures: number;
  /** The failure last logged at WARN in the streak: the same one again is logged at DEBUG. */
  warnedFailure: string | undefined;
  /** A failure was logged at WARN since the last connect said at INFO: the next connect is said at INFO. */
  warnedSinceConnect: boolean;
  /** The latest connect was logged at DEBUG only: the streak's end is said at INFO. */
  quietConnect: boolean;
}

export function noStreak(): FailureStreak {
  return { failures: 0, warnedFailure: undefined, warnedSinceConnect: false, quietConnect: false };
}

/**
 * A failed connect or a lost connection: logged at WARN once per streak, the same failure again (a missing
 * command at every backoff retry, a process that exits the same way at every start) at DEBUG.
 */
export function logFailure(streak: FailureStreak, logger: Logger, server: string, line: string): void {
  streak.failures += 1;
  if (line === streak.warnedFailure) {
    logger.debug({ server }, line);
    return;
  }
  logger.warn({ server }, line);
  streak.warnedFailure = line;
  streak.warnedSinceConnect = true;
}

/**
 * A connect: `connected`, or `connected again after N failures` (the streak's count so far). At INFO when a
 * failure before it was said at WARN; a connect after failures only said at DEBUG is at DEBUG too, and the
 * streak's end says it at INFO once the connection has stayed up (`ended`).
 */
export function logConnected(
  streak: FailureStreak,
  logger: Logger,
  server: string,
  fields: Record<string, unknown>,
): void {
  const line = `[mcp] ${server}: connected${streak.failures === 0 ? "" : ` again after ${failuresText(streak.failures)}`}`;
  const quiet = streak.failures > 0 && !streak.warnedSinceConnect;
  if (quiet) logger.debug({ server, ...fields }, line);
  else logger.info({ server, ...fields }, line);
  streak.warnedSinceConnect = false;
  streak.quietConnect = quiet;
}

/**
 * The streak is over (the connection stayed up `STABLE_CONNECTION_MS`, or its process was recycled): the next
 * failure is warned about again. `up`: the connection is up, and is said so at INFO when its connect was
 * logged at DEBUG only.
 */
export function endStreak(streak: FailureStreak, logger: Logger, server: string, up: boolean): void {
  if (up && streak.quietConnect)
    logger.info(
      { server },
      `[mcp] ${server}: connected again after ${failuresText(streak.failures)} (up ${STABLE_CONNECTION_MS / 1000} s since its last connect)`,
    );
  Object.assign(streak, noStreak());
}

function failuresText(failures: number): string {
  return `${failures} failure${failures === 1 ? "" : "s"}`;
}
