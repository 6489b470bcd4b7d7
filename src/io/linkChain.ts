import { readlinkSync, realpathSync } from "node:fs";
import { readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";

/**
 * The one walker of symbolic links that svc follows by hand, where the system's own resolution (`realpath`)
 * cannot: a link to nothing (a disk not mounted, a checkout moved), whose target is named or made. It resolves a
 * link as the system does: relative text from the directory the link really is in, a `..` after a name from
 * where that name leads (with `x -> sub/deep`, `x/../d` is `sub/d`, not `d`), and at most 40 links in one
 * resolution. Written once as a walk that asks for `readlink` and `realpath`, run with the sync calls (the
 * stores, the profile checks) or the promise ones (a route's script, judged per request).
 */

/** Symbolic links followed at most in one resolution, as the system follows them in one path (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40;

/** What the walk asks of the file system: the answer is undefined where the call fails (no link, not there). */
interface Ask {
  readonly op: "realpath" | "readlink";
  readonly path: string;
}

type Walk<T> = Generator<Ask, T, string | undefined>;

/** How many more links one resolution may follow (shared by every step of it, as the system counts). */
interface LinkBudget {
  left: number;
}

const linkBudget = (): LinkBudget => ({ left: MAX_LINKS });

/** A link met with no budget left: the resolution is in a loop of links (or one longer than the system follows). */
const LOOP = Symbol("loop");

/** Where a path is, or would be once made: its real path, and whether there is something there. */
export interface WouldBe {
  readonly real: string;
  readonly exists: boolean;
}

/**
 * `text` walked a name at a time from the real directory `from`, as the system walks a path: a `..` goes up from
 * where the names before it really lead, not from their text. Names without a `..` after them are kept as
 * written (no call is made for them).
 */
function* follow(from: string, text: string, budget: LinkBudget): Walk<string> {
  let at = from;
  // Whether `at` has names joined on since it was last resolved (a `..` must go up from where they lead).
  let written = false;
  for (const name of text.split(sep)) {
    if (name === "" || name === ".") continue;
    if (name === "..") {
      if (written) at = (yield* wouldBe(at, budget)).real;
      at = dirname(at);
      written = false;
    } else {
      at = join(at, name);
      written = true;
    }
  }
  return at;
}

/**
 * Where `path` points when it is a symbolic link, its text walked (`follow`) from the directory the link really
 * is in. Undefined for no link; `LOOP` when the budget is spent.
 */
function* hop(path: string, budget: LinkBudget): Walk<string | typeof LOOP | undefined> {
  const text = yield { op: "readlink", path };
  if (text === undefined) return undefined;
  if (budget.left <= 0) return LOOP;
  budget.left--;
  const from = isAbsolute(text) ? resolve("/") : (yield* wouldBe(dirname(resolve(path)), budget)).real;
  return yield* follow(from, text, budget);
}

/**
 * `path` with its links resolved; when it does not exist, its nearest existing parent resolved and the rest of it
 * joined on: where it would be once made. A link to nothing on the way is followed to where it points, as the
 * system would once its target is there. One `realpath` when `path` is there.
 */
function* wouldBe(path: string, budget: LinkBudget): Walk<WouldBe> {
  let parent = resolve(path);
  const rest: string[] = [];
  for (;;) {
    const real = yield { op: "realpath", path: parent };
    if (real !== undefined)
      return { real: rest.length === 0 ? real : join(real, ...rest.reverse()), exists: rest.length === 0 };
    const target = yield* hop(parent, budget);
    if (typeof target === "string") {
      const there = yield* wouldBe(target, budget);
      return rest.length === 0 ? there : { real: join(there.real, ...rest.reverse()), exists: false };
    }
    const up = dirname(parent);
    if (up === parent) return { real: resolve(path), exists: false };
    rest.push(basename(parent));
    parent = up;
  }
}

/** The links `path` leads through, each where its link points (`hop`); undefined for a loop. */
function* chain(path: string): Walk<string[] | undefined> {
  const budget = linkBudget();
  const hops: string[] = [];
  let at = path;
  for (;;) {
    const next = yield* hop(at, budget);
    if (next === LOOP) return undefined;
    if (next === undefined) return hops;
    hops.push(next);
    at = next;
  }
}

function askSync({ op, path }: Ask): string | undefined {
  try {
    return op === "realpath" ? realpathSync.native(path) : readlinkSync(path);
  } catch {
    return undefined;
  }
}

async function ask({ op, path }: Ask): Promise<string | undefined> {
  try {
    return op === "realpath" ? await realpath(path) : await readlink(path);
  } catch {
    return undefined;
  }
}

function runSync<T>(walk: Walk<T>): T {
  let step = walk.next();
  while (step.done !== true) step = walk.next(askSync(step.value));
  return step.value;
}

async function run<T>(walk: Walk<T>): Promise<T> {
  let step = walk.next();
  while (step.done !== true) step = walk.next(await ask(step.value));
  return step.value;
}

/**
 * The paths the symbolic link `path` leads through, in order, each where its link points as the system reads it:
 * the last is the first that is no link (not there, or a file or directory). Empty when `path` is no link;
 * undefined for a loop of links (more than 40 on the way).
 */
export function linkChainSync(path: string): string[] | undefined {
  return runSync(chain(path));
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
  return yield* wouldBe(yield* follow(resolve("/"), text, budget), budget);
}

/**
 * The links between a link and where it leads in the end (`linkChain`), as a message says them after that
 * target: ` (by way of <link> → <link>)`, or nothing for a link that points there itself.
 */
export function byWayOf(chain: readonly string[]): string {
  return chain.length > 1 ? ` (by way of ${chain.slice(0, -1).join(" → ")})` : "";
}
