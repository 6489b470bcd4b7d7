import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { z } from "zod";
import { SvcError } from "../../errors.js";
import { zeroFilledProblem } from "../zeroFilled.js";
import { writeJsonAtomic } from "./atomicFile.js";
import { readStoreText } from "./storeText.js";

/**
 * Delivery ids seen in the last hour, kept across a restart so a sender's retry of an event
 * accepted before the restart is still a duplicate. Written at shutdown, read at start and removed once the gateway is up.
 */
const fileSchema = z.object({
  version: z.literal(1),
  ids: z.array(z.tuple([z.string(), z.number()])),
});

export type SeenIds = ReadonlyArray<readonly [key: string, expiresAt: number]>;

/** The saved ids (none without a file). Throws `store_corrupt`, saying why, on a file that is not such a list. */
export function readSeenIds(path: string): SeenIds {
  if (!existsSync(path)) return [];
  let parsed: unknown;
  const text = readStoreText(path);
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SvcError("store_corrupt", `${path}: ${zeroFilledProblem(text) ?? "not valid JSON"}`, {
      cause: err,
    });
  }
  const read = fileSchema.safeParse(parsed);
  if (read.success) return read.data.ids;
  const version = (parsed as { version?: unknown } | null)?.version;
  throw new SvcError(
    "store_corrupt",
    typeof version === "number" && version !== 1
      ? `${path}: format version ${version}, written by a newer version of svc (this one reads version 1)`
      : `${path}: not a list of delivery ids ({"version": 1, "ids": [[key, expires at], ...]})`,
  );
}

/**
 * The saved ids, or none when the file cannot be read: it is then moved aside (`<file>.unreadable-<ms>`,
 * kept as it was for the user to look at; a newer version's file is never overwritten by this one's
 * save at stop) and reported with where it went (`movedTo` is the file itself when it was empty, holding
 * nothing to keep, or when even the move failed).
 */
export function readSeenIdsOrMoveAside(
  path: string,
  onUnreadable: (movedTo: string, err: unknown) => void,
): SeenIds {
  try {
    return readSeenIds(path);
  } catch (err) {
    const movedTo = `${path}.unreadable-${Date.now()}`;
    try {
      // An empty file (a save cut by a full disk) holds nothing to keep.
      if (statSync(path).size === 0) throw err;
      renameSync(path, movedTo);
      onUnreadable(movedTo, err);
    } catch {
      onUnreadable(path, err);
    }
    return [];
  }
}

/**
 * Removed once the gateway that read it is up (a stale copy must not come back after a crash), not
 * when it is read: a start that fails (its port is taken) must leave the ids for the next one.
 */
export function removeSeenIds(path: string): void {
  rmSync(path, { force: true });
}

/** Atomically, mode 0600 (ids can name private repositories' deliveries). */
export function saveSeenIds(path: string, ids: SeenIds): void {
  if (ids.length === 0) rmSync(path, { force: true });
  else writeJsonAtomic(path, { version: 1, ids });
}
