import { describeError, isSvcError } from "../errors.js";
import { homeProblem } from "../io/homeWritable.js";
import { thisUser } from "../io/userName.js";

/**
 * The file-system errors a broken data directory gives a command that reads or writes a file in it
 * (EEXIST: `mkdir -p` of an SVC_HOME that is a file, before a config.yaml edit writes into it; ELOOP: an SVC_HOME
 * in, or below, a loop of links).
 */
const FILE_ERRNO = /\b(?:ENOENT|ENOTDIR|EEXIST|EACCES|EPERM|EROFS|ELOOP)\b/;

/**
 * What a command's failure says when its cause is SVC_HOME itself (a symbolic link to a directory that is
 * gone, a file in its place, a directory this user cannot write): the problem with SVC_HOME and how to
 * fix it, as `svc gateway run` and `svc config check` say it, before the bare `ENOENT: ..., mkdir
 * '<SVC_HOME>'`. Undefined for any other failure (usage errors, a store's own problems). `home` is asked
 * for only then: a failure to find SVC_HOME at all (a user with no home directory) is said as it is.
 */
export function homeCause(err: unknown, home: () => string): string | undefined {
  const failure = describeError(err);
  if (isSvcError(err, "usage") || !FILE_ERRNO.test(failure)) return undefined;
  let problem: string | undefined;
  try {
    problem = homeProblem(home());
  } catch {
    return undefined; // SVC_HOME itself cannot be found (no home directory, a working directory gone): said as it is
  }
  // The failure itself follows in brackets: a file outside SVC_HOME may be what was missing. A failure
  // that is that problem already (the gateway's own refusal of an unwritable SVC_HOME) is said once.
  if (problem === undefined || failure.includes(problem)) return undefined;
  return `${problem} (${withoutSaidFix(failure, problem)})`;
}

/**
 * `failure` without its fix when `problem`, SVC_HOME's, says it already: a store's file below a directory this user
 * may not look into (`SVC_HOME=/root/svc`) names that directory and what to do as SVC_HOME's problem does, which would be said twice, the second in brackets.
 */
function withoutSaidFix(failure: string, problem: string): string {
  const cut = failure.indexOf(" — ");
  if (cut < 0) return failure;
  // What the fix has this user do, after why: `on the way to it, /root … cannot be looked into by …: /root is one of
  // the system's own directories, not to be opened to this user: set SVC_HOME to a directory this user can write`.
  const fix = failure.slice(cut + " — ".length);
  const looked = `cannot be looked into by ${thisUser()}: `;
  const at = fix.indexOf(looked);
  const todo = at < 0 ? fix : fix.slice(at + looked.length);
  return problem.includes(todo) ? failure.slice(0, cut) : failure;
}
