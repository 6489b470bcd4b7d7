import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type FileText, fileText } from "./fileText.js";
import { pathWithin } from "./pathWithin.js";
import { checkRelative, unfitName } from "./workspacePaths.js";

export type Inside<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: string };

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

function contains(root: string, real: string): boolean {
  return pathWithin(real, root);
}

function describe(err: unknown, path: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `"${path}" does not exist`;
  if (code === "ENOTDIR") return `"${path}": a part of it is not a directory`;
  if (code === "EISDIR") return `"${path}" is a directory`;
  return `"${path}": ${code ?? (err as Error).message}`;
}

const leadsOutside = (rel: string) => fail(`"${rel}" leads outside the workspace (a symlink) — refused`);

/** The real path of an existing `rel` in `root` (and the root's), refused when it (through symlinks) leaves `root`. */
async function resolveInside(root: string, rel: string): Promise<Inside<{ realRoot: string; real: string }>> {
  const problem = checkRelative(rel);
  if (problem !== undefined) return fail(problem);
  try {
    const realRoot = await realpath(root);
    const real = await realpath(join(realRoot, rel));
    if (!contains(realRoot, real)) return leadsOutside(rel);
    return { ok: true, value: { realRoot, real } };
  } catch (err) {
    return fail(describe(err, rel));
  }
}

/**
 * Opens the checked `real` path for reading: a final symlink is not followed and a FIFO is not waited on
 * (its open would wait for a writer), and where the open file really is (Linux: its /proc/self/fd link) must
 * still be inside, since a part of the path may have been swapped for a symlink since the check.
 */
async function openInside(realRoot: string, real: string, rel: string): Promise<Inside<FileHandle>> {
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP")
      return fail(`"${rel}" changed while it was read (it is now a symlink) — refused`);
    return fail(describe(err, rel));
  }
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => realpath(real));
    if (contains(realRoot, opened)) return { ok: true, value: handle };
  } catch (err) {
    await handle.close();
    return fail(describe(err, rel));
  }
  await handle.close();
  return leadsOutside(rel);
}

export interface ReadResult extends FileText {
  readonly size: number;
  readonly truncated: boolean;
}

export async function readInside(root: string, rel: string, maxBytes: number): Promise<Inside<ReadResult>> {
  const resolved = await resolveInside(root, rel);
  if (!resolved.ok) return resolved;
  // A device or FIFO is refused before it is opened too: opening some devices acts (a watchdog, a tape).
  const before = await stat(resolved.value.real).catch((err: unknown) => describe(err, rel));
  if (typeof before === "string") return fail(before);
  if (!before.isFile()) return fail(`"${rel}" is not a file`);
  const opened = await openInside(resolved.value.realRoot, resolved.value.real, rel);
  if (!opened.ok) return opened;
  const handle = opened.value;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return fail(`"${rel}" is not a file`);
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const truncated = info.size > maxBytes;
    const text = fileText(buffer.subarray(0, bytesRead), truncated);
    if (text === undefined) return fail(`"${rel}" is a binary file (${info.size} bytes)`);
    return { ok: true, value: { ...text, size: info.size, truncated } };
  } catch (err) {
    return fail(describe(err, rel));
  } finally {
    await handle.close();
  }
}

/** The real directory for `dirRel`, creating missing parts (0700); a symlinked part must stay inside. */
async function directoryInside(realRoot: string, dirRel: string): Promise<Inside<string>> {
  let current = realRoot;
  for (const part of dirRel.split(/[\\/]/).filter((p) => p !== "" && p !== ".")) {
    const next = join(current, part);
    try {
      const info = await lstat(next);
      if (info.isSymbolicLink()) {
        const real = await realpath(next);
        if (!contains(realRoot, real))
          return fail(`"${dirRel}" leads outside the workspace (a symlink) — refused`);
        if (!(await stat(real)).isDirectory()) return fail(`"${dirRel}": "${part}" is not a directory`);
        current = real;
      } else if (info.isDirectory()) current = next;
      else return fail(`"${dirRel}": "${part}" is not a directory`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return fail(describe(err, dirRel));
      await mkdir(next, { mode: 0o700 });
      current = next;
    }
  }
  return { ok: true, value: current };
}

/**
 * The checked directory `dir` opened (a symlink in its place not followed) and the path to use it by:
 * on Linux its descriptor's /proc/self/fd link, which stays on the directory opened however a part of `dir`
 * is swapped for a symlink afterwards (as openat would), once that directory is found still inside.
 */
async function holdDirectory(
  realRoot: string,
  dir: string,
  rel: string,
  action: "written" | "listed",
): Promise<Inside<{ handle: FileHandle; path: string }>> {
  let handle: FileHandle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR")
      return fail(`"${rel}" changed while it was ${action} (a directory of it is now a symlink) — refused`);
    return fail(describe(err, rel));
  }
  const path = `/proc/self/fd/${handle.fd}`;
  const opened = await readlink(path).catch(() => undefined);
  // Without /proc (macOS), the checked path itself.
  if (opened === undefined) return { ok: true, value: { handle, path: dir } };
  if (contains(realRoot, opened)) return { ok: true, value: { handle, path } };
  await handle.close();
  return leadsOutside(rel);
}

/**
 * Writes `content` to `rel` in `root`: parents created, written to a temp file and renamed into place
 * (a rename replaces a symlink at `rel` itself, never the file it points to).
 */
export async function writeInside(
  root: string,
  rel: string,
  content: string,
  maxBytes: number,
): Promise<Inside<number>> {
  const problem = checkRelative(rel) ?? unfitName(rel);
  if (problem !== undefined) return fail(problem);
  const name = basename(rel);
  if (name === "" || name === "." || rel.endsWith("/")) return fail(`"${rel}" names a directory, not a file`);
  const size = Buffer.byteLength(content);
  if (size > maxBytes) return fail(`content is ${size} bytes; the most file_write accepts is ${maxBytes}`);
  let pinned: FileHandle | undefined;
  try {
    const realRoot = await realpath(root);
    const dir = await directoryInside(realRoot, dirname(rel));
    if (!dir.ok) return dir;
    const held = await holdDirectory(realRoot, dir.value, rel, "written");
    if (!held.ok) return held;
    pinned = held.value.handle;
    const target = join(held.value.path, name);
    const existing = await lstat(target).catch(() => undefined);
    if (existing?.isDirectory()) return fail(`"${rel}" is a directory`);
    // Its name kept short: a target name near the 255-byte limit must not make the temporary one too long.
    const temp = join(held.value.path, `.${name.slice(0, 64)}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await writeFile(temp, content, { mode: 0o600, flag: "wx" });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return { ok: true, value: size };
  } catch (err) {
    return fail(describe(err, rel));
  } finally {
    await pinned?.close();
  }
}

export interface Entry {
  readonly name: string;
  readonly kind: "file" | "dir" | "link" | "other";
  readonly size: number;
}

export async function listInside(
  root: string,
  rel: string,
  maxEntries: number,
): Promise<Inside<{ entries: Entry[]; total: number }>> {
  const resolved = await resolveInside(root, rel === "" ? "." : rel);
  if (!resolved.ok) return resolved;
  let pinned: FileHandle | undefined;
  try {
    if (!(await stat(resolved.value.real)).isDirectory())
      return fail(`"${rel}" is a file, not a directory — read it with file_read`);
    const held = await holdDirectory(resolved.value.realRoot, resolved.value.real, rel, "listed");
    if (!held.ok) return held;
    pinned = held.value.handle;
    const dir = held.value.path;
    const dirents = await readdir(dir, { withFileTypes: true });
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const entries: Entry[] = [];
    for (const dirent of dirents.slice(0, maxEntries)) {
      const kind = dirent.isSymbolicLink()
        ? "link"
        : dirent.isDirectory()
          ? "dir"
          : dirent.isFile()
            ? "file"
            : "other";
      const size = kind === "file" ? (await lstat(join(dir, dirent.name))).size : 0;
      entries.push({ name: dirent.name, kind, size });
    }
    return { ok: true, value: { entries, total: dirents.length } };
  } catch (err) {
    return fail(describe(err, rel));
  } finally {
    await pinned?.close();
  }
}
