import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { svcPaths } from "../../../src/config/paths.js";
import { createIdempotency } from "../../../src/gateway/idempotency.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

/** A home whose webhook-seen-ids.json cannot be written: its directory is a file. */
function unwritable(home: string) {
  writeFileSync(join(home, "not-a-dir"), "");
  return { ...svcPaths(home), seenIds: join(home, "not-a-dir", "webhook-seen-ids.json") };
}

describe("delivery ids that a stop could not save to webhook-seen-ids.json", () => {
  it("with the local journal, the warning says the journal keeps them (their retries are still duplicates)", () => {
    const home = tempHome();
    try {
      const log = captureLogger();
      const paths = unwritable(home.dir);
      const idempotency = createIdempotency({
        paths,
        logger: log.logger,
        clock: { now: () => 0 },
        journal: { dir: join(home.dir, "state"), replayedIds: 0 },
      });
      idempotency.seen.checkAndAdd("r:1");
      idempotency.save();
      expect(log.messages()).toEqual([
        `[webhook] delivery ids not saved to ${paths.seenIds}; the journal (${join(home.dir, "state")}) keeps them, so retries after the restart are still duplicates`,
      ]);
    } finally {
      home.cleanup();
    }
  });

  it("without it, that their retries after the restart run again", () => {
    const home = tempHome();
    try {
      const log = captureLogger();
      const paths = unwritable(home.dir);
      const idempotency = createIdempotency({ paths, logger: log.logger, clock: { now: () => 0 } });
      idempotency.seen.checkAndAdd("r:1");
      idempotency.save();
      expect(log.messages()).toEqual([
        `[webhook] delivery ids not saved to ${paths.seenIds}; retries after the restart will run again`,
      ]);
    } finally {
      home.cleanup();
    }
  });
});

describe("a webhook-seen-ids.json a start cannot read (emptied by a full disk, edited by hand)", () => {
  for (const [name, replayedIds] of [
    [
      "with the local journal replaying ids, the warning says the journal keeps them (their retries are still duplicates)",
      3,
    ],
    [
      "with a local journal that replayed none (state/ deleted), that the ids are forgotten and their retries run",
      0,
    ],
    ["without it, that the ids are forgotten and their retries run", undefined],
  ] as const)
    it(name, () => {
      const home = tempHome();
      try {
        const log = captureLogger();
        const paths = svcPaths(home.dir);
        writeFileSync(paths.seenIds, "");
        createIdempotency({
          paths,
          logger: log.logger,
          clock: { now: () => 0 },
          ...(replayedIds === undefined ? {} : { journal: { dir: join(home.dir, "state"), replayedIds } }),
        });
        expect(log.messages()).toEqual([
          replayedIds === undefined
            ? `[webhook] ${paths.seenIds} could not be read; delivery ids seen before the restart are forgotten (their retries will run)`
            : replayedIds === 0
              ? `[webhook] ${paths.seenIds} could not be read, and the journal (${join(home.dir, "state")}) replayed no delivery ids (it was removed, or started afresh); delivery ids seen before the restart are forgotten (their retries will run)`
              : `[webhook] ${paths.seenIds} could not be read; the journal (${join(home.dir, "state")}) keeps the delivery ids seen before the restart, so their retries are still duplicates`,
        ]);
      } finally {
        home.cleanup();
      }
    });
});
