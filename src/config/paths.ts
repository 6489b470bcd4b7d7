import { homedir, userInfo } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { SvcError } from "../errors.js";
import { terminalText } from "../io/terminalText.js";

/** Layout of the data directory (`~/.svc`, or `$SVC_HOME`); a named profile has the same layout below `profiles/<name>/`. */
export interface SvcPaths {
  readonly home: string;
  readonly profile: string | undefined;
  readonly root: string;
  readonly config: string;
  readonly env: string;
  readonly logs: string;
  readonly gatewayLog: string;
  readonly scripts: string;
  readonly skills: string;
  readonly subscriptions: string;
  readonly cronJobs: string;
  readonly sessions: string;
  readonly mcpTokens: string;
  readonly mcpCache: string;
  readonly pidFile: string;
  /** Agent runs accepted but unfinished at the last shutdown; run again at the next start. */
  readonly pendingRuns: string;
  /** Delivery ids of the last hour, saved at shutdown so retries after a restart stay duplicates. */
  readonly seenIds: string;
}

export const DEFAULT_PROFILE = "default";

/**
 * For a name refused by a rule of letters and digits, which are ASCII there: the first character outside
 * ASCII it holds, named (` — ASCII only: "é" is not`), since `café` reads as letters alone; else "".
 */
export function nonAsciiNote(name: string): string {
  const found = /\P{ASCII}/u.exec(name)?.[0];
  return found === undefined ? "" : ` — ASCII only: ${terminalText(JSON.stringify(found))} is not`;
}
/**
 * For a name refused by a rule of letters, digits and a few marks (`allowed`, one character): the first
 * character it holds outside them, named, with the name written with `-` in place of each run of such
 * characters (`git hub` → ` — " " is not one of them: write git-hub`); the ASCII note for a letter outside
 * ASCII; "" otherwise (a `${VAR}` written as a name is said elsewhere).
 */
export function nameCharNote(name: string, allowed: RegExp): string {
  const nonAscii = nonAsciiNote(name);
  if (nonAscii !== "" || name.includes("${")) return nonAscii;
  const bad = [...name].find((c) => !allowed.test(c));
  if (bad === undefined) return "";
  const fixed = [...name]
    .map((c) => (allowed.test(c) ? c : " "))
    .join("")
    .trim()
    .replace(/ +/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64);
  return ` — ${terminalText(JSON.stringify(bad))} is not one of them${fixed === "" ? "" : `: write ${fixed}`}`;
}

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const PROFILE_NAME_RULE =
  'profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit)';

/**
 * Why `name` cannot be a profile, or undefined: the whole rule, or — for a name of allowed characters
 * past 64 — its length, so the user need not count (`wrk` and `-x` alike would otherwise read as fine).
 */
export function profileNameProblem(name: string): string | undefined {
  if (PROFILE_NAME.test(name)) return undefined;
  if (name.length > 64 && PROFILE_NAME.test(name.slice(0, 64)))
    return `${name.length} characters long — a profile name has at most 64: shorten it`;
  return `${PROFILE_NAME_RULE}${nameCharNote(name, /[A-Za-z0-9_-]/)}`;
}

/**
 * The user's home directory: `HOME`, else the user database's entry. A container run as a user id the
 * image's /etc/passwd does not list (`docker run --user 12345`, OpenShift's random ids) with no `HOME` has
 * none: said with what to set, instead of Node's `uv_os_homedir returned ENOENT` and its stack.
 */
export function userHome(): string {
  try {
    // An empty HOME (`HOME=` in a unit or a CI step) counts as unset, as an empty SVC_HOME does: taken as
    // written it would put ~/.svc in the working directory (`.svc`).
    if (process.env.HOME?.trim() === "") return userInfo().homedir;
    return homedir();
  } catch (err) {
    const uid = process.getuid?.();
    throw new SvcError(
      "startup_refused",
      `this user${uid === undefined ? "" : ` (uid ${uid})`} has no home directory: HOME is ${process.env.HOME === undefined ? "not set" : "empty"} and the user database (/etc/passwd) has no entry for it, so ~/.svc means nothing — set SVC_HOME to the directory svc keeps its files in (a volume this user can write, in a container), or set HOME`,
      { cause: err },
    );
  }
}

/**
 * `$SVC_HOME`, else `~/.svc`. A leading `~` is the user's home: a shell expands it, but a value set in a
 * systemd unit, a compose file or a quoted string arrives as written (`~/.svc-work` would otherwise be a
 * directory named `~` under the working directory). The home is looked up only for those: an absolute
 * `SVC_HOME` needs none (a container's user may have none).
 */
export function svcHome(
  env: NodeJS.ProcessEnv = process.env,
  /** Another process's user home and working directory, when known (what its `~` and a relative path mean). */
  at: { readonly home?: string; readonly cwd?: string } = {},
): string {
  const fromEnv = env.SVC_HOME?.trim();
  if (fromEnv) assertUtf8Path("SVC_HOME", fromEnv);
  if (!fromEnv) return join(at.home ?? utf8UserHome(), ".svc");
  if (fromEnv === "~" || fromEnv.startsWith("~/")) return join(at.home ?? utf8UserHome(), fromEnv.slice(1));
  // The working directory only for a relative path: an absolute one needs none (it may be gone).
  if (at.cwd !== undefined || isAbsolute(fromEnv)) return resolve(at.cwd ?? "/", fromEnv);
  return resolve(workingDirectory(fromEnv), fromEnv);
}

/**
 * What `home` was taken from when it is `~/.svc` because SVC_HOME is unset: the user's home and what names it
 * (`HOME`, or the user database's entry when HOME is unset or empty), for a message that must not speak of an
 * SVC_HOME nobody set (`HOME=/dev/null`, a service account's). Undefined when SVC_HOME is set, or `home` is another
 * directory.
 */
export function homeFromUser(
  home: string,
  env: NodeJS.ProcessEnv = process.env,
): { readonly name: string; readonly dir: string } | undefined {
  if (env.SVC_HOME?.trim()) return undefined;
  const fromEnv = env.HOME?.trim() ? env.HOME : undefined;
  let dir: string;
  try {
    dir = fromEnv ?? userInfo().homedir;
  } catch {
    return undefined;
  }
  if (resolve(dir, ".svc") !== resolve(home)) return undefined;
  return {
    name: fromEnv === undefined ? "this user's home directory (from /etc/passwd)" : "HOME",
    dir: resolve(dir),
  };
}

/**
 * Node reads the environment as UTF-8 and puts U+FFFD in place of each byte that is not (a HOME or
 * SVC_HOME written in Latin-1, `/home/caf\xe9`): svc would then make and use another directory than the
 * one named, `/home/caf\u{FFFD}` in UTF-8. Refused instead, naming the variable and what to do.
 */
function assertUtf8Path(name: string, path: string): void {
  if (!path.includes("\u{FFFD}")) return;
  throw new SvcError(
    "startup_refused",
    `${name} is not valid UTF-8: it reads as ${JSON.stringify(path)}, with U+FFFD (�) in place of each byte of another encoding (Latin-1?), so svc would use another directory than the one named — set ${name} to a path written in UTF-8${name === "SVC_HOME" ? "" : ", or set SVC_HOME to one"}: rename the directory (convmv -f latin1 -t utf8 --notest <dir>) or pick another`,
  );
}

/** The user's home, refused when it is not valid UTF-8 (HOME, or the user database's entry). */
function utf8UserHome(): string {
  const home = userHome();
  const fromPasswd = process.env.HOME === undefined || process.env.HOME.trim() === "";
  assertUtf8Path(fromPasswd ? "the home directory (from /etc/passwd)" : "HOME", home);
  return home;
}

/** `process.cwd()`, or why a relative SVC_HOME cannot be found from it (a directory removed since, by a deploy). */
function workingDirectory(relative: string): string {
  try {
    return process.cwd();
  } catch (err) {
    throw new SvcError(
      "startup_refused",
      `SVC_HOME is the relative path ${relative}, but the working directory it is relative to is gone (${(err as Error).message}) — set SVC_HOME to an absolute path, or run svc from a directory that exists`,
      { cause: err },
    );
  }
}

/** A profile's name as requests and deliveries carry it: `undefined` for the default profile. */
export function namedProfile(profile: string | undefined): string | undefined {
  return profile !== undefined && profile !== DEFAULT_PROFILE ? profile : undefined;
}

/** ` in profile <name>` for a named profile, nothing for the default one (messages and log lines). */
export function inProfile(profile: string | undefined): string {
  const named = namedProfile(profile);
  return named === undefined ? "" : ` in profile ${named}`;
}

/** ` --profile <name>` for a named profile, nothing for the default one, so printed commands work as shown. */
export function profileFlag(profile: string | undefined): string {
  const named = namedProfile(profile);
  return named === undefined ? "" : ` --profile ${named}`;
}

/** The profiles among the names found in `<home>/profiles/`: the default first, then each valid name, sorted. */
export function profilesAmong(dirNames: readonly string[]): string[] {
  const named = dirNames.filter((name) => name !== DEFAULT_PROFILE && PROFILE_NAME.test(name));
  return [DEFAULT_PROFILE, ...[...new Set(named)].sort()];
}

/** Paths for the default profile (no name, or "default") or a named one. */
export function svcPaths(home: string = svcHome(), profile?: string): SvcPaths {
  const named = namedProfile(profile);
  const problem = named === undefined ? undefined : profileNameProblem(named);
  if (problem !== undefined) throw new SvcError("usage", `profile name "${named}" is not valid: ${problem}`);
  const root = named === undefined ? home : join(home, "profiles", named);
  return {
    home,
    profile: named,
    root,
    config: join(home, "config.yaml"),
    env: join(root, ".env"),
    logs: join(home, "logs"),
    gatewayLog: join(home, "logs", "gateway.log"),
    scripts: join(root, "scripts"),
    skills: join(root, "skills"),
    subscriptions: join(home, "webhook_subscriptions.json"),
    cronJobs: join(root, "cron", "jobs.json"),
    sessions: join(root, "sessions"),
    mcpTokens: join(root, "mcp-tokens"),
    mcpCache: join(root, "mcp-cache"),
    pidFile: join(home, "gateway.pid"),
    pendingRuns: join(home, "webhook-pending-runs.json"),
    seenIds: join(home, "webhook-seen-ids.json"),
  };
}
