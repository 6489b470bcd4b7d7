import { existsSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import { writeJsonAtomic } from "./atomicFile.js";

/**
 * Delivery ids seen in the last hour, kept across a restart so a sender's retry of an event
 * accepted before the restart is still a duplicate. Written at shutdown, read at start and removed once the gateway is up.
 */
const fileSchema = z.object({
  version: z.literal(1),
  ids: z.array(z.tuple([z.string(), z.number()])),
});

export type SeenIds = ReadonlyArray<readonly [key: string, expiresAt: number]>;

/** The saved ids (none without a file). Throws on a file that is not such a list. */
export function readSeenIds(path: string): SeenIds {
  if (!existsSync(path)) return [];
  return fileSchema.parse(JSON.parse(readFileSync(path, "utf8"))).ids;
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
