import { stat } from "node:fs/promises";
import { dirname, extname, isAbsolute, relative, resolve, sep } from "node:path";
import {
  extendObject,
  JsonTooDeep,
  MAX_JSON_DEPTH,
  parseJson,
  stringifyJson,
} from "../streams/jsonNumbers/index.js";
import { nonFiniteAsNull } from "../streams/jsonNumbers/pythonConstants.js";
import type { ScriptResult } from "../streams/stages/script.js";
import { envValue } from "./envValue.js";
import { byWayOf, LOOP_OF_LINKS, linkChain, realOrWouldBe, type WouldBe } from "./linkChain.js";
import { minimalEnv, runProcess } from "./process.js";
import type { ProcessGroups } from "./processGroups.js";
import { profilePathAsWritten } from "./profiles.js";

export interface ScriptRunOptions {
  /** The profile's `scripts/` directory (`<profile root>/scripts`). */
  readonly scriptsDir: string;
  readonly script: string;
  readonly payload: Record<string, unknown>;
  readonly timeoutMs: number;
  /** `SVC_ROUTE`, `SVC_EVENT` (empty when none) and `SVC_DELIVERY_ID` (only when the sender named one). */
  readonly route?: string;
  readonly event?: string | undefined;
  readonly deliveryId?: string | undefined;
  /** Notes the script's process group while it runs (a start after a SIGKILL stops what was left running). */
  readonly groups?: ProcessGroups;
}

/**
 * The name a script's process group is noted with (`script:<route>`): a next start that stops it logs the
 * route. The event it was deciding on is not journaled (it was never answered): nothing runs it again.
 */
export const SCRIPT_GROUP = "script:";

/** The minimal environment plus what the event is, as the `command` agent gets it (no secrets). */
export function scriptEnv(
  options: Pick<ScriptRunOptions, "route" | "event" | "deliveryId">,
): Record<string, string> {
  return {
    ...minimalEnv(),
    ...(options.route === undefined ? {} : { SVC_ROUTE: options.route }),
    SVC_EVENT: envValue(options.event ?? ""),
    ...(options.deliveryId === undefined ? {} : { SVC_DELIVERY_ID: options.deliveryId }),
  };
}

const IGNORE_MARKER = "__svc_ignore__";

// What a script that ignored the event did, for the delivery history: never what it wrote.
const PRINTED_NOTHING = "script printed nothing";
const PRINTED_SILENT = "script printed [SILENT]";
const MARKED_IGNORE = `script printed ${IGNORE_MARKER}: true`;
const NESTED_TOO_DEEP = `script printed a JSON object nested deeper than ${MAX_JSON_DEPTH} levels`;
const TIMED_OUT = "script timed out (script_timeout_seconds)";

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/**
 * The script's real path when it exists inside `scriptsDir` (after following symlinks), else why not.
 * `scriptsDir` is `<profile root>/scripts`, so `~/.svc/scripts/x.sh` names `x.sh` in it. Both are judged by
 * their real paths: with `scripts/` (or the home above it) a symlink to a data disk, the script's absolute
 * path on that disk names the same file as `x.sh` does.
 */
export async function resolveScript(
  scriptsDir: string,
  script: string,
): Promise<{ path: string } | { why: string }> {
  const asWritten = profilePathAsWritten(script, dirname(resolve(scriptsDir)), scriptsDir);
  const candidate = resolve(asWritten);
  const dir = await realOrWouldBe(scriptsDir);
  // As the system opens it: `sub/../x.sh`, with `sub` a link out of the directory, is not `x.sh` in it.
  const found = await realOrWouldBe(asWritten);
  if (!inside(dir.real, found.real)) {
    // Written as a path in the directory (by its own path or its real one): a symlink in it leads out.
    const written = inside(resolve(scriptsDir), candidate) || inside(dir.real, candidate);
    return {
      why: written
        ? "script resolves outside the scripts directory (symlink)"
        : "path leaves the scripts directory",
    };
  }
  if (!found.exists) return { why: await notFound(scriptsDir, script, dir) };
  const real = found.real;
  // A directory would be run as `python3 <dir>` ("can't find '__main__' module"): named for what it is.
  let isFile: boolean;
  try {
    isFile = (await stat(real)).isFile();
  } catch {
    // Removed since realpath found it (a deploy replacing the directory): not found, as a moment later.
    return { why: await notFound(scriptsDir, script) };
  }
  if (!isFile) return { why: "not a file (a script is one file under the scripts directory)" };
  return { path: real };
}

/**
 * `script: scripts/x.sh` names `scripts/scripts/x.sh` (relative paths start in the scripts directory): when
 * `x.sh` is there, the message says to write that.
 */
async function notFound(
  scriptsDir: string,
  script: string,
  /** Where `scriptsDir` is, as the caller just found it (`realOrWouldBe`); found again when not given. */
  found?: WouldBe,
): Promise<string> {
  // The directory is a link to nothing (a disk or volume not mounted): said, or "not found" reads as a typo;
  // named where its chain of links leads in the end, each link on the way after it, as the cron store's is.
  // A loop of links (or a chain longer than the system follows) leads nowhere: said so, not named by a link in it as
  // if that were what is missing.
  const chain = await linkChain(scriptsDir);
  const dir = found ?? (await realOrWouldBe(scriptsDir));
  if (chain?.length !== 0 && !dir.exists)
    return chain === undefined
      ? `script not found: the scripts directory is a symbolic link into ${LOOP_OF_LINKS}`
      : `script not found: the scripts directory (a symbolic link to ${chain.at(-1)}${byWayOf(chain)}) is missing`;
  // A file where the directory goes (itself, or where its link leads): no script is ever found under it.
  const notDir = dir.exists ? await notADirectory(dir.real) : undefined;
  if (notDir !== undefined)
    return `script not found: the scripts directory ${chain === undefined || chain.length === 0 ? "" : `(a symbolic link to ${chain.at(-1)}${byWayOf(chain)}) `}${notDir}`;
  const inner = /^(?:\.\/)?scripts[/\\](.+)$/.exec(script)?.[1];
  if (inner === undefined || "why" in (await resolveScript(scriptsDir, inner))) return "script not found";
  return `script not found — relative paths start in the scripts directory: write ${inner}`;
}

/** What `path`, which is there, is when it is no directory (`is a file, not a directory`); undefined for a directory. */
async function notADirectory(path: string): Promise<string | undefined> {
  try {
    const found = await stat(path);
    if (found.isDirectory()) return undefined;
    return found.isFile() ? "is a file, not a directory" : "is not a directory";
  } catch {
    return undefined; // gone since: not found, as said
  }
}

/** `.sh` / `.bash` run under bash, everything else under python3. */
export function interpreterFor(path: string): "bash" | "python3" {
  const ext = extname(path).toLowerCase();
  return ext === ".sh" || ext === ".bash" ? "bash" : "python3";
}

/** `text` (found nested too deep to parse as a payload) is a JSON object: JSON.parse takes any depth. */
function isJsonObjectText(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/**
 * The JSON a script printed. Python's `json.dumps` (the interpreter of every script but `.sh`/`.bash`) writes
 * a float that is not finite as `NaN` or `Infinity`: such an object is read with `null` in their place, as
 * JavaScript writes them, rather than taken for text.
 */
function parseOutput(text: string): unknown {
  try {
    return parseJson(text);
  } catch (err) {
    const finite = err instanceof JsonTooDeep ? undefined : nonFiniteAsNull(text);
    if (finite === undefined) throw err;
    return parseJson(finite);
  }
}

/** Turns a script's stdout into the new payload, or the reason to ignore the event. */
export function interpretScriptOutput(stdout: string, payload: Record<string, unknown>): ScriptResult {
  const text = stdout.trim();
  if (text === "") return { kind: "ignore", why: "empty output", reason: PRINTED_NOTHING };
  if (text === "[SILENT]") return { kind: "ignore", why: "[SILENT]", reason: PRINTED_SILENT };
  let parsed: unknown;
  try {
    parsed = parseOutput(text);
  } catch (err) {
    // A JSON object is the new payload, never text: one nested deeper than a request body may
    // be cannot be that payload either (rendering it would overflow the stack), so the event is ignored.
    if (err instanceof JsonTooDeep && isJsonObjectText(text))
      return {
        kind: "ignore",
        why: `standard output is a JSON object nested deeper than ${MAX_JSON_DEPTH} levels (the most a payload may nest)`,
        reason: NESTED_TOO_DEEP,
      };
    return { kind: "payload", payload: extendObject(payload, { script_output: text }) };
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const object = parsed as Record<string, unknown>;
    if (object[IGNORE_MARKER] === true)
      return { kind: "ignore", why: `${IGNORE_MARKER} set`, reason: MARKED_IGNORE };
    return { kind: "payload", payload: object };
  }
  return { kind: "payload", payload: extendObject(payload, { script_output: text }) };
}

const STDERR_TAIL_LINES = 3;
const STDERR_TAIL_CHARS = 500;

/**
 * The last lines a script wrote to stderr (a Python traceback ends with the exception), for the log line
 * of an ignored event: without them a failing script is a bare "exited with code 1".
 */
export function stderrTail(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  if (lines.length === 0) return "";
  const tail = lines.slice(-STDERR_TAIL_LINES).join(" | ");
  if (tail.length <= STDERR_TAIL_CHARS) return tail;
  // One fewer where the cut would keep the second half of an emoji alone (written as U+FFFD).
  const first = tail.charCodeAt(tail.length - STDERR_TAIL_CHARS);
  return `…${tail.slice(first >= 0xdc00 && first <= 0xdfff ? 1 - STDERR_TAIL_CHARS : -STDERR_TAIL_CHARS)}`;
}

function withStderr(why: string, stderr: string): string {
  const tail = stderrTail(stderr);
  return tail === "" ? why : `${why}; stderr: ${tail}`;
}

/** Runs a route script with the payload JSON on stdin, in the script's directory, with `scriptEnv`. */
export async function runScript(options: ScriptRunOptions): Promise<ScriptResult> {
  const found = await resolveScript(options.scriptsDir, options.script);
  if ("why" in found) return { kind: "ignore", why: found.why, reason: `script cannot be run: ${found.why}` };
  const result = await runProcess({
    file: interpreterFor(found.path),
    args: [found.path],
    input: stringifyJson(options.payload) ?? "{}",
    env: scriptEnv(options),
    timeoutMs: options.timeoutMs,
    // The script's own directory, so `scripts/github/pr.py` finds the files beside it by relative path.
    cwd: dirname(found.path),
    ...(options.groups === undefined
      ? {}
      : { groups: options.groups, notRunAgain: `${SCRIPT_GROUP}${options.route ?? ""}` }),
  });
  if (!result.ok) {
    // Named as the command agent's timeout is, so the line says which setting stopped the script.
    const why = result.timedOut
      ? `timed out: it ran longer than script_timeout_seconds (${options.timeoutMs / 1000} s)`
      : result.why;
    // The process's end as svc words it (an exit code, a signal, why it could not start), without stderr.
    const reason = result.timedOut ? TIMED_OUT : `script ${result.why}`;
    return { kind: "ignore", why: withStderr(why, result.stderr), reason };
  }
  const decided = interpretScriptOutput(result.stdout, options.payload);
  return decided.kind === "ignore"
    ? { kind: "ignore", why: withStderr(decided.why, result.stderr), reason: decided.reason }
    : decided;
}
