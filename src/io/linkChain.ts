import { accessSync, constants, lstatSync, readlinkSync, realpathSync, type Stats, statSync } from "node:fs";
import { readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, parse, resolve, sep } from "node:path";

/**
 * The one walker of symbolic links that svc follows by hand, where the system's own resolution (`realpath`)
 * cannot: a link to nothing (a disk not mounted, a checkout moved), whose target is named or made. It resolves a
 * link as the system does: relative text from the directory the link really is in, a `..` after a name from
 * where that name leads (with `x -> sub/deep`, `x/../d` is `sub/d`, not `d`; after a name not there, or a file,
 * nowhere), and at most 40 links in one resolution, the system's own count (ELOOP) taken where it answers. Written once as a walk that asks for `readlink` and `realpath`, run with the sync calls (the
 * stores, the profile checks) or the promise ones (a route's script, judged per request).
 */

/** Symbolic links followed at most in one resolution, as the system follows them in one path (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * Where a resolution that failed with ELOOP led, as a message says it (`a symbolic link into …`): the system gives up
 * past 40 links, in a loop of links or in a chain longer than that (`l0 -> l1 -> … -> l40 -> dir`), and its answer
 * does not tell them apart; nor does the walk, which leaves the names on the way to it.
 */
export const LOOP_OF_LINKS = `a loop of links, or a chain of more than ${MAX_LINKS}`;

/** What the walk asks of the file system (`directory`: whether `path` is one). */
interface Ask {
  readonly op: "realpath" | "readlink" | "directory";
  readonly path: string;
}

/**
 * The call's answer (for `directory`, `path` itself when it is one); `LOOP` where it fails with ELOOP (the path
 * crosses a loop of links, or more than the system follows, in a name on the way too); undefined where it fails
 * otherwise (no link, not there, no directory).
 */
type Answer = string | typeof LOOP | undefined;

type Walk<T> = Generator<Ask, T, Answer>;

/** How many more links one resolution may follow (shared by every step of it, as the system counts). */
interface LinkBudget {
  left: number;
}

const linkBudget = (): LinkBudget => ({ left: MAX_LINKS });

/**
 * A link met with no budget left, or a call that failed with ELOOP: the resolution is in a loop of links (or one
 * longer than the system follows).
 */
const LOOP = Symbol("loop");

/**
 * Where a path is, or would be once made: its real path, whether there is something there, and whether its
 * resolution is a loop of links (more than the system follows): nothing is there, nor will be.
 */
export interface WouldBe {
  readonly real: string;
  readonly exists: boolean;
  readonly loop: boolean;
}

/**
 * Where a path's text leads (`follow`): `at`, and whether the system gets there. A `..` after a name that is not
 * there (ENOENT) or is a file (ENOTDIR) gets it nowhere: `at` is then where that name leads with the rest of the
 * text as written after it (`<home>/gone/../x.sh`), which names no file.
 */
interface Reached {
  readonly at: string;
  readonly reachable: boolean;
}

/**
 * `text` walked a name at a time from the real directory `from`, as the system walks a path: a `..` goes up from
 * where the names before it really lead, not from their text, and only from a directory. Names without a `..`
 * after them are kept as written (no call is made for them).
 */
function* follow(from: string, text: string, budget: LinkBudget): Walk<Reached | typeof LOOP> {
  const names = text.split(sep).filter((name) => name !== "" && name !== ".");
  let at = from;
  // Whether `at` has names joined on since it was last resolved (a `..` must go up from where they lead).
  let written = false;
  for (const [i, name] of names.entries()) {
    if (name === "..") {
      if (written) {
        const there = yield* wouldBe(at, budget);
        if (there.loop) return LOOP;
        if (!there.exists || (yield { op: "directory", path: there.real }) === undefined)
          return { at: [there.real, ...names.slice(i)].join(sep), reachable: false };
        at = there.real;
      }
      at = dirname(at);
      written = false;
    } else {
      at = join(at, name);
      written = true;
    }
  }
  return { at, reachable: true };
}

/**
 * Where `path` points when it is a symbolic link, its text walked (`follow`) from the directory the link really
 * is in. Undefined for no link; `LOOP` when the budget is spent, or a name on the way is in a loop.
 */
function* hop(path: string, budget: LinkBudget): Walk<Reached | typeof LOOP | undefined> {
  const text = yield { op: "readlink", path };
  if (text === undefined || text === LOOP) return text;
  if (budget.left <= 0) return LOOP;
  budget.left--;
  if (isAbsolute(text)) return yield* follow(resolve("/"), text, budget);
  const from = yield* wouldBe(dirname(resolve(path)), budget);
  return from.loop ? LOOP : yield* follow(from.real, text, budget);
}

/**
 * `path` with its links resolved; when it does not exist, its nearest existing parent resolved and the rest of it
 * joined on: where it would be once made. A link to nothing on the way is followed to where it points, as the
 * system would once its target is there. One `realpath` when `path` is there.
 */
function* wouldBe(path: string, budget: LinkBudget): Walk<WouldBe> {
  let parent = resolve(path);
  // The names below `parent` on the way to `path`, the nearest last.
  const rest: string[] = [];
  const below = (at: string) => (rest.length === 0 ? at : join(at, ...[...rest].reverse()));
  for (;;) {
    const real = yield { op: "realpath", path: parent };
    // The first ELOOP ends the walk: no name below a loop is reached, nor would be.
    if (real === LOOP) return { real: below(parent), exists: false, loop: true };
    if (real !== undefined) return { real: below(real), exists: rest.length === 0, loop: false };
    const target = yield* hop(parent, budget);
    if (target === LOOP) return { real: below(parent), exists: false, loop: true };
    if (target !== undefined) {
      // Kept as written: joined, the `..` in it would be taken by its text.
      if (!target.reachable)
        return { real: [target.at, ...rest.reverse()].join(sep), exists: false, loop: false };
      const there = yield* wouldBe(target.at, budget);
      return rest.length === 0 ? there : { ...there, real: below(there.real), exists: false };
    }
    const up = dirname(parent);
    if (up === parent) return { real: resolve(path), exists: false, loop: false };
    rest.push(basename(parent));
    parent = up;
  }
}

/**
 * The links `path` leads through, each where its link points (`hop`); undefined for a loop. Once `path` is found
 * to be a link, the system's own answer for the whole path is asked too: it counts the links crossed in a name on
 * the way (`lnk/..`, a directory that is a loop) that the walk does not read one by one. A path that is no link
 * costs its one `readlink` (a loop on its way fails that with ELOOP).
 */
function* chain(path: string): Walk<string[] | undefined> {
  const budget = linkBudget();
  const hops: string[] = [];
  let at = path;
  for (;;) {
    const next = yield* hop(at, budget);
    if (next === LOOP) return undefined;
    if (next === undefined) return hops;
    if (hops.length === 0 && (yield { op: "realpath", path }) === LOOP) return undefined;
    hops.push(next.at);
    if (!next.reachable) return hops;
    at = next.at;
  }
}

/** A failed call's answer: `LOOP` for ELOOP, undefined for the rest. */
function failed(err: unknown): typeof LOOP | undefined {
  return (err as NodeJS.ErrnoException).code === "ELOOP" ? LOOP : undefined;
}

function askSync({ op, path }: Ask): Answer {
  try {
    if (op === "directory") return statSync(path).isDirectory() ? path : undefined;
    return op === "realpath" ? realpathSync.native(path) : readlinkSync(path);
  } catch (err) {
    return failed(err);
  }
}

async function ask({ op, path }: Ask): Promise<Answer> {
  try {
    if (op === "directory") return (await stat(path)).isDirectory() ? path : undefined;
    return op === "realpath" ? await realpath(path) : await readlink(path);
  } catch (err) {
    return failed(err);
  }
}

function runSync<T>(walk: Walk<T>, asked?: (ask: Ask) => void): T {
  let step = walk.next();
  while (step.done !== true) {
    asked?.(step.value);
    step = walk.next(askSync(step.value));
  }
  return step.value;
}

async function run<T>(walk: Walk<T>): Promise<T> {
  let step = walk.next();
  while (step.done !== true) step = walk.next(await ask(step.value));
  return step.value;
}

/**
 * The paths the symbolic link `path` leads through, in order, each where its link points as the system reads it:
 * the last is the first that is no link (not there, or a file or directory; or a path the system cannot get to,
 * `<home>/gone/../env`, kept as written). Empty when `path` is no link; undefined for a loop of links (more than
 * 40 on the way, counted as the system does: ELOOP).
 */
export function linkChainSync(path: string): string[] | undefined {
  return runSync(chain(path));
}

/**
 * `linkChainSync` with the calls it made, in order (`<op> <path>`): what a resolution costs, which a path that is
 * no link (every route's scripts directory, asked on each request for a missing script) keeps to one `readlink`.
 */
export function linkChainSyncCalls(path: string): { chain: string[] | undefined; calls: string[] } {
  const calls: string[] = [];
  const links = runSync(chain(path), (ask) => calls.push(`${ask.op} ${ask.path}`));
  return { chain: links, calls };
}

/** `linkChainSync`, with the promise calls. */
export function linkChain(path: string): Promise<string[] | undefined> {
  return run(chain(path));
}

/** Where the symbolic link `path` leads in the end (`linkChainSync`'s last); undefined for no link, or a loop. */
export function linkTargetSync(path: string): string | undefined {
  return linkChainSync(path)?.at(-1);
}

/**
 * `path` with its symbolic links resolved (one `realpath` when it is there); when it is not, where it would be:
 * its nearest existing parent resolved and the rest joined on, a link to nothing on the way followed to where it
 * points (`scripts -> /disk/scripts`, the disk not mounted, is `/disk/scripts`). A `..` in `path` goes up from
 * where the names before it lead (`asWritten`).
 */
export function realOrWouldBe(path: string): Promise<WouldBe> {
  return run(asWritten(path, linkBudget()));
}

/**
 * `path` as written, not collapsed by its text first: a `..` after a name that is a link goes up from where that
 * link leads (with `scripts/sub -> /elsewhere/deep`, `scripts/sub/../x.sh` is `/elsewhere/x.sh`), as the system
 * opens it.
 */
function* asWritten(path: string, budget: LinkBudget): Walk<WouldBe> {
  const text = isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`;
  const reached = yield* follow(resolve("/"), text, budget);
  if (reached === LOOP) return { real: resolve(path), exists: false, loop: true };
  if (!reached.reachable) return { real: reached.at, exists: false, loop: false };
  return yield* wouldBe(reached.at, budget);
}

/**
 * The links between a link and where it leads in the end (`linkChain`), as a message says them after that
 * target: ` (by way of <link> → <link>)`, or nothing for a link that points there itself.
 */
export function byWayOf(chain: readonly string[]): string {
  return chain.length > 1 ? ` (by way of ${chain.slice(0, -1).join(" → ")})` : "";
}

/**
 * For a link's end that the system cannot get to (`<home>/gone/../env`, kept as written from the name a `..`
 * follows), what that name is, as a message says it after the end: ` (<home>/gone, on the way, is not there)`, or
 * `is a file`; where this user may not look for it, the directory that refuses it (` (<dir>/priv, on the way,
 * cannot be looked into by this user)`); nothing for an end without a `..`, which is simply not there.
 */
export function onTheWay(end: string): string {
  const names = end.split(sep);
  const up = names.indexOf("..");
  if (up <= 0) return "";
  const step = names.slice(0, up).join(sep) || sep;
  let found: Stats | undefined;
  try {
    found = statSync(step, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EACCES") {
      const closed = closedOnTheWay(step);
      return closed === undefined ? "" : ` (${closed}, on the way, cannot be looked into by this user)`;
    }
    found = undefined;
  }
  if (found?.isDirectory() === true) return "";
  return ` (${step}, on the way, ${found === undefined ? "is not there" : "is a file"})`;
}

/**
 * The first directory on the way to `path` that this user may not look into (no search permission), if any. A name
 * reached that is a symbolic link (`path` itself too) is followed where it leads (`linkChainSync`), and the walk
 * goes on along that path: the directory named is the one that refuses (`priv`, with `lnk -> priv/deep`), never a
 * link on the way to it, whose owner and mode no chown or chmod of its name would change. Undefined for a loop of
 * links, and where a name is missing or a file. `access`: how search permission is asked (a test's, to refuse a
 * directory as another user is refused).
 */
export function closedOnTheWay(
  path: string,
  access: (dir: string, mode: number) => void = accessSync,
): string | undefined {
  let names = path.split(sep).filter((part) => part !== "");
  let at = parse(path).root;
  let links = MAX_LINKS;
  for (;;) {
    const name = names.shift();
    if (name === undefined) return undefined;
    try {
      access(at, constants.X_OK);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EACCES" ? at : undefined;
    }
    const next = join(at, name);
    let link = false;
    try {
      link = lstatSync(next).isSymbolicLink();
    } catch {}
    if (!link) {
      // No name in `at` is a link: a `..` after it goes up where its text does.
      at = next;
      continue;
    }
    const target = linkChainSync(next)?.at(-1);
    if (target === undefined || --links < 0) return undefined;
    names = [...target.split(sep).filter((part) => part !== ""), ...names];
    at = parse(target).root;
  }
}
