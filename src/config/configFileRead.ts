import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { SvcError } from "../errors.js";
import { byWayOf, linkChainSync, onTheWay } from "../io/linkChain.js";
import { permissionFix } from "../io/permissionFix.js";
import { notUtf8Text } from "../io/textEncoding.js";

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
 * Whether `path` is there to be read. A symbolic link to nothing (a config.yaml or `.env` kept in a dotfiles
 * checkout that moved) is refused, not taken for no file: the gateway would otherwise start on the embedded
 * default (no routes) or without a single secret, and say nothing about the link. `withoutIt` says what
 * removing the link leads to; undefined when nothing would take its place (a reload of a running config.yaml).
 */
export function isPresent(path: string, withoutIt: string | undefined): boolean {
  if (existsSync(path)) return true;
  try {
    readlinkSync(path);
  } catch {
    return false; // not there at all
  }
  // Named where the system reads it, every link on the way followed; a loop of links (ELOOP) points at no file
  // either, but no target of it is missing.
  const chain = linkChainSync(path);
  const target = chain?.at(-1);
  const said =
    chain === undefined || target === undefined
      ? "is a symbolic link into a loop of links (no file at its end)"
      : `is a symbolic link to ${target}${byWayOf(chain)}, which does not exist${onTheWay(target)}`;
  throw new SvcError(
    "config_unreadable",
    `${path}: ${said} — ${
      withoutIt === undefined
        ? "the running config came from this file: restore its target or point the link at the file, and reload again"
        : `restore its target or point the link at the file, or remove the link (${withoutIt})`
    }`,
  );
}
