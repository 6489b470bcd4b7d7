import { readFileSync, readlinkSync, statSync } from "node:fs";
import { SvcError } from "../errors.js";
import { closedDirectory, closedFix } from "../io/closedDir.js";
import { byWayOf, LOOP_OF_LINKS, linkChainSync, onTheWay } from "../io/linkChain.js";
import { permissionFix } from "../io/permissionFix.js";
import { notUtf8Text } from "../io/textEncoding.js";
import { thisUser } from "../io/userName.js";

/** A config.yaml or `.env` that cannot be read, with what to do about it. */
function unreadable(file: string, err: unknown): SvcError {
  const { code, message } = err as NodeJS.ErrnoException;
  const todo =
    code === "EISDIR"
      ? "it is a directory: move it away and write the file in its place"
      : (permissionFix(file, err) ?? "check that it is a regular file this user can read");
  return new SvcError("config_unreadable", `${file}: cannot be read (${message}) — ${todo}`);
}

/**
 * A config.yaml or `.env` as text. One saved in another encoding is refused naming the line: read as UTF-8,
 * a Latin-1 `é` in a secret would become U+FFFD (every signature made with the secret fails), and a UTF-16
 * file (what PowerShell 5's `>` writes) is no YAML at all.
 */
export function readUtf8(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw unreadable(file, err);
  }
  const problem = notUtf8Text(bytes);
  if (problem !== undefined) throw new SvcError("config_invalid", `${file}: ${problem}`);
  return bytes.toString("utf8");
}

/**
 * Why this user cannot get to `target`, the end of a link it may read: the first directory on the way it may not
 * look into, with its owner when another user (`<dir>/priv (owned by uid 0) cannot be looked into by this user`),
 * and what to do; `err` said when no such directory is found.
 */
function closedTarget(target: string, err: Error): string {
  const closed = closedDirectory(target);
  if (closed === undefined)
    return `which ${thisUser()} cannot get to (${err.message}) — point the link at a file this user can read`;
  return `which ${thisUser()} cannot get to: ${closed.named} cannot be looked into by this user — ${closedFix(closed, "point the link at a file this user can read", true)}`;
}

/**
 * Whether `path` is there to be read. A symbolic link to nothing (a config.yaml or `.env` kept in a dotfiles
 * checkout that moved) is refused, not taken for no file: the gateway would otherwise start on the embedded
 * default (no routes) or without a single secret, and say nothing about the link. So is one whose file this user
 * may not get to (a directory on the way closed to it), naming that directory: the file may well be there.
 * `withoutIt` says what removing the link leads to; undefined when nothing would take its place (a reload of a
 * running config.yaml).
 */
export function isPresent(path: string, withoutIt: string | undefined): boolean {
  // Why the system could not get to it (ENOENT: nothing there, said by no error).
  let failed: NodeJS.ErrnoException | undefined;
  try {
    if (statSync(path, { throwIfNoEntry: false }) !== undefined) return true;
  } catch (err) {
    failed = err as NodeJS.ErrnoException;
  }
  try {
    readlinkSync(path);
  } catch {
    return false; // not there at all
  }
  // Named where the system reads it, every link on the way followed; a loop of links (ELOOP), or a chain longer than
  // the system follows (which it gives up on alike), points at no file either, but no target of it is missing.
  const chain = linkChainSync(path);
  const target = chain?.at(-1);
  const away = target === undefined ? "" : onTheWay(target);
  // An end the walk kept as written (a `..` after a name) says what stops it on the way (onTheWay).
  if (chain !== undefined && target !== undefined && failed?.code === "EACCES" && away === "")
    throw new SvcError(
      "config_unreadable",
      `${path}: is a symbolic link to ${target}${byWayOf(chain)}, ${closedTarget(target, failed)}${withoutIt === undefined ? ", and reload again" : ""}`,
    );
  const said =
    chain === undefined || target === undefined
      ? `is a symbolic link into ${LOOP_OF_LINKS} (no file at its end)`
      : `is a symbolic link to ${target}${byWayOf(chain)}, which does not exist${away}`;
  throw new SvcError(
    "config_unreadable",
    `${path}: ${said} — ${
      withoutIt === undefined
        ? "the running config came from this file: restore its target or point the link at the file, and reload again"
        : `restore its target or point the link at the file, or remove the link (${withoutIt})`
    }`,
  );
}
