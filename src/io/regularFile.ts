import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  type Stats,
} from "node:fs";
import { open } from "node:fs/promises";

/**
 * What stands where a file svc reads and writes itself should be, when it is no regular file and no
 * directory (whose read fails on its own, EISDIR): a named pipe, a socket or a device.
 */
export function otherKind(stats: Stats | BigIntStats): string | undefined {
  if (stats.isFile() || stats.isDirectory()) return undefined;
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  return "a device";
}

/** A file read refused because the path is a named pipe, a socket or a device. */
export class NotRegularFile extends Error {
  readonly code = "ENOTREG";
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`is not a regular file (${kind})`);
  }
}

/**
 * The bytes of `path`, a file svc reads and replaces itself. A named pipe in its place would make the read
 * wait for a writer (the whole gateway with it, the read being synchronous) and a device could never end:
 * it is opened without waiting and refused (`NotRegularFile`). Other errors are `readFileSync`'s.
 */
export function readRegularFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const kind = otherKind(fstatSync(fd));
    if (kind !== undefined) throw new NotRegularFile(path, kind);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `readRegularFile`, with the `{ bigint: true }` stat of the file the bytes were read from (not of whatever
 * stands at `path` a moment before or after): what a cache of the file's parse is keyed on.
 */
export function readRegularFileStat(path: string): { bytes: Buffer; stat: BigIntStats } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd, { bigint: true });
    const kind = otherKind(stat);
    if (kind !== undefined) throw new NotRegularFile(path, kind);
    return { bytes: readFileSync(fd), stat };
  } finally {
    closeSync(fd);
  }
}

/** `readRegularFile` off the event loop, for a file read at each run (a skill): the same refusal. */
export async function readRegularFileAsync(path: string): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const kind = otherKind(await handle.stat());
    if (kind !== undefined) throw new NotRegularFile(path, kind);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
