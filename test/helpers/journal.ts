import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { JournalFs } from "../../src/io/state/journal/fsFacade.js";
import { Journal } from "../../src/io/state/journal/journal.js";
import type { SegmentProblem } from "../../src/io/state/journal/segments.js";
import { type TempHome, tempHome } from "./home.js";

const homes: TempHome[] = [];
const journals: Journal[] = [];

/** Closes every journal `openJournal` opened and removes every `journalDir` after each test. */
export function cleanUpJournals(): void {
  afterEach(async () => {
    for (const journal of journals.splice(0)) await journal.close().catch(() => {});
    for (const home of homes.splice(0)) home.cleanup();
  });
}

/** A fresh `state` directory under a throwaway home. */
export function journalDir(): string {
  const home = tempHome();
  homes.push(home);
  return join(home.dir, "state");
}

export interface OpenJournalOptions {
  readonly fs?: JournalFs;
  readonly maxSegmentBytes?: number;
  /** What is live (the snapshot restates it): a fixed list, or read afresh at each snapshot. */
  readonly live?: unknown[] | (() => Iterable<unknown>);
  readonly problems?: SegmentProblem[];
  readonly errors?: unknown[];
}

/** Opens a journal on `path`; `replayed` holds what the open read back. */
export function openJournal(path: string, options: OpenJournalOptions = {}) {
  const replayed: unknown[] = [];
  const live = options.live ?? [];
  const journal = new Journal(
    {
      dir: path,
      ...(options.fs === undefined ? {} : { fs: options.fs }),
      ...(options.maxSegmentBytes === undefined ? {} : { maxSegmentBytes: options.maxSegmentBytes }),
      onProblem: (problem) => options.problems?.push(problem),
      onError: (err) => options.errors?.push(err),
    },
    (records) => replayed.push(...records),
    typeof live === "function" ? live : () => [...live],
  );
  journals.push(journal);
  return { journal, replayed };
}

/** The segment files in `path` (not a rotation's temp file). */
export const segmentFiles = (path: string): string[] =>
  readdirSync(path).filter((name) => name.endsWith(".seg"));
