import { lstatSync, readlinkSync, type Stats, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { byWayOf, LOOP_OF_LINKS, linkChainSync, onTheWay } from "./linkChain.js";

/**
 * A symbolic link into a loop of links (ELOOP) where a directory goes, as a message says it, and what to do. This
 * module's words are the start's checks' (`homeWritable.ts`) and those of the writers that meet such a link while
 * the gateway runs (`noDirectoryAt`).
 */
export const INTO_A_LOOP = {
  said: `a symbolic link into ${LOOP_OF_LINKS}`,
  fix: "point the link at a directory",
} as const;

/**
 * What `path`, which is not there (or is in a loop of links: ELOOP), is when it is a symbolic link, and what makes
 * it a directory: `a symbolic link to <target>, which does not exist`, named where the system reads it, each link on
 * the way after it (`linkChainSync`), or `a symbolic link into a loop of links, or a chain of more than 40`. Undefined
 * for no link.
 */
export function linkTo(path: string): { readonly said: string; readonly fix: string } | undefined {
  try {
    readlinkSync(path);
  } catch {
    return undefined;
  }
  const chain = linkChainSync(path);
  const target = chain?.at(-1);
  if (chain === undefined || target === undefined) return INTO_A_LOOP;
  const to = `a symbolic link to ${target}${byWayOf(chain)}`;
  const away = onTheWay(target);
  // Below a file (`dang -> f1/x`, f1 a file), or a link to one: no directory can be made there, so none is to be.
  const way = away === "" ? noDirectoryOnTheWay(target) : undefined;
  if (way?.kind === "file" || way?.kind === "link to a file") {
    const is =
      way.kind === "file" ? `${way.what}, not a directory` : linkToNoDirectory(way.at, way.what).said;
    return {
      said: `${to}, which cannot be made: ${way.at}, on the way to it, is ${is}`,
      fix: "point the link at a directory",
    };
  }
  return { said: `${to}, which does not exist${away}`, fix: "create that directory" };
}

/**
 * What `found`, which is no directory, is as a message names it: a device (`/dev/null`, a service account's home), a
 * named pipe, a socket, or a file. None is svc's to move away where SVC_HOME is to be.
 */
export function kindOf(found: Stats): string {
  if (found.isCharacterDevice() || found.isBlockDevice()) return "a device";
  if (found.isFIFO()) return "a named pipe";
  if (found.isSocket()) return "a socket";
  return "a file";
}

/**
 * A name above SVC_HOME where a directory must be, and is not: a symbolic link into a loop of links (ELOOP), one to
 * nothing (a dotfiles checkout moved away) or to something no directory (`what` that is), or something no
 * directory itself (a file, a device: `what`).
 */
export type NoDirectory =
  | { readonly kind: "loop" | "link to nothing"; readonly at: string }
  | { readonly kind: "link to a file" | "file"; readonly at: string; readonly what: string };

/**
 * The first name on the way to `path` (`path` itself aside) that is no directory, walked from `/` with `lstat`, a
 * link followed where it leads; undefined when each is a directory (or a link to one) down to one not there yet
 * (made with `path`), or one this user may not look into (a refusal, said as one).
 */
export function noDirectoryOnTheWay(path: string): NoDirectory | undefined {
  const names = resolve(path)
    .split(sep)
    .filter((name) => name !== "")
    .slice(0, -1);
  let at: string = sep;
  for (const name of names) {
    at = join(at, name);
    let link = false;
    try {
      const found = lstatSync(at, { throwIfNoEntry: false });
      if (found === undefined) return undefined;
      if (found.isDirectory()) continue;
      if (!found.isSymbolicLink()) return { kind: "file", at, what: kindOf(found) };
      link = true;
      const target = statSync(at);
      if (!target.isDirectory()) return { kind: "link to a file", at, what: kindOf(target) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") return { kind: "loop", at };
      // ENOTDIR: a link to a name below a file, which is not there either.
      if (link && (code === "ENOENT" || code === "ENOTDIR")) return { kind: "link to nothing", at };
      return undefined;
    }
  }
  return undefined;
}

/** A symbolic link `path` to something that is there and is no directory (`what`): where it leads, and what to do. */
export function linkToNoDirectory(
  path: string,
  what: string,
): { readonly said: string; readonly fix: string } {
  const chain = linkChainSync(path);
  const target = chain?.at(-1);
  if (chain === undefined || target === undefined) return INTO_A_LOOP;
  return {
    said: `a symbolic link to ${target}${byWayOf(chain)}, which is ${what}, not a directory`,
    fix: "point the link at a directory",
  };
}
