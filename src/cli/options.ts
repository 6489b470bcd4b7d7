import { bindHost } from "../config/host.js";
import type { UnattendedElicitation } from "../config/sections/mcp.js";
import { FINITE_SECONDS, MAX_TIMER_SECONDS } from "../config/timerSeconds.js";
import { SvcError } from "../errors.js";

/**
 * A `--port` value: 0-65535 (0 picks a free port where a listener takes it). A command that sends to a
 * listening gateway names the range it takes, `lowest` 1 (and refuses 0 itself, saying why).
 */
export function parsePortOption(text: string, flag = "--port", lowest: 0 | 1 = 0): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new SvcError("usage", `${flag}: expected a port number (${lowest}-65535), got "${text}"`);
  return port;
}

/**
 * A `--timeout <seconds>` value: a positive number. One past the longest timer Node.js holds (about 24.8
 * days: `--timeout 3000000` for "practically never") counts as that longest, as durations in config.yaml
 * do; a timer set longer fires after 1 ms, so every check would fail at once.
 */
export function parseSecondsOption(text: string, flag = "--timeout"): number {
  const seconds = Number(text);
  // Decimal only, as --port and --limit take it: Number() also reads "0x10" (16), " 5" and "+5".
  if (!DECIMAL_SECONDS.test(text) || !Number.isFinite(seconds) || seconds <= 0) {
    // `Infinity` or `1e400` for "no limit": the advice is the finite value that means practically never.
    const hint =
      Math.abs(seconds) === Number.POSITIVE_INFINITY ? ` — ${FINITE_SECONDS}` : withoutUnit(text, flag);
    throw new SvcError("usage", `${flag}: expected a number of seconds greater than 0, got "${text}"${hint}`);
  }
  return Math.min(seconds, MAX_TIMER_SECONDS);
}

/** A number of seconds as written in decimal: `5`, `0.5`, `.5`, `1e3`. */
const DECIMAL_SECONDS = /^(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** Seconds in each unit a duration is written with elsewhere (`5s`, `2m`, `1h`, `500ms`: docker, systemd, Go). */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ms: 0.001,
  s: 1,
  sec: 1,
  secs: 1,
  m: 60,
  min: 60,
  mins: 60,
  h: 3600,
};

/** The advice for a seconds value written with a unit (`--timeout 5s`): the number of seconds to write. */
function withoutUnit(text: string, flag: string): string {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  const name = match?.[2]?.toLowerCase();
  const unit = name !== undefined && Object.hasOwn(UNIT_SECONDS, name) ? UNIT_SECONDS[name] : undefined;
  if (match?.[1] === undefined || unit === undefined) return "";
  const seconds = Number(match[1]) * unit;
  if (!(seconds > 0)) return "";
  return ` — write the seconds alone, without a unit: ${flag} ${Number(seconds.toPrecision(12))}`;
}

/** A `--host` value: an address or name; an empty one would bind every interface while printing none. */
export function parseHostOption(text: string): string {
  if (text.trim() === "")
    throw new SvcError(
      "usage",
      "--host: expected an address such as 127.0.0.1 or 0.0.0.0, got an empty value",
    );
  const bind = bindHost(text, "--port");
  if ("problem" in bind) throw new SvcError("usage", `--host: ${bind.problem}`);
  return bind.host;
}

/** A `--elicitation` value: how a form is answered when nobody is at a terminal. */
export function parseElicitationOption(text: string): UnattendedElicitation {
  if (text === "decline" || text === "defaults") return text;
  throw new SvcError("usage", `--elicitation: expected decline or defaults, got "${text}"`);
}
