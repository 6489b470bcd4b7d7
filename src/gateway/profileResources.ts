import { join } from "node:path";
import { DEFAULT_PROFILE, svcPaths } from "../config/paths.js";
import { directoryInPlace } from "../io/directoryInPlace.js";
import { createListReader } from "../io/listFiles.js";
import type { Logger } from "../io/log.js";
import { noDirectoryAt } from "../io/noDirectoryAt.js";
import { openFilesProblem } from "../io/openFiles.js";
import { existingProfiles } from "../io/profiles.js";
import {
  createRunJournal,
  RUN_JOURNAL_DIR,
  type RunJournal,
  removeExpiredRunJournals,
} from "../io/sessions/runJournal.js";
import { fileInTheWay, noRoomProblem } from "../io/stores/atomicFile.js";

/** What the gateway keeps per profile, made on first use: its paths, its run journal, its in_file lists. */
export type ProfileResources = ReturnType<typeof createProfileResources>;

/** `now`: the gateway's clock, which dates each run's journal line and judges which days have expired. */
export function createProfileResources(home: string, logger: Logger, now: () => number) {
  const date = () => new Date(now());
  const profileCache = new Map<string, ReturnType<typeof svcPaths>>();
  const profilePaths = (profile: string) => {
    let found = profileCache.get(profile);
    if (found === undefined) {
      found = svcPaths(home, profile);
      profileCache.set(profile, found);
    }
    return found;
  };
  const journals = new Map<string, RunJournal>();
  const runJournal = (profile: string) => {
    let journal = journals.get(profile);
    if (journal === undefined) {
      const sessions = profilePaths(profile).sessions;
      journal = createRunJournal(
        sessions,
        (err) => {
          const noRoom = noRoomProblem(err);
          // At the limit on open files the day's journal cannot be opened (tried again at each run): the bare
          // "EMFILE: too many open files, open …" said neither which limit nor how to raise it.
          const openFiles = openFilesProblem((err as NodeJS.ErrnoException | undefined)?.code);
          // A file in the place of sessions/, sessions/webhook-runs/ or one further up (a named profile's directory).
          const inTheWay =
            noRoom === undefined ? fileInTheWay(join(sessions, RUN_JOURNAL_DIR), err) : undefined;
          // A directory in the place of the day's journal.
          const directory = directoryInPlace(err);
          if (directory !== undefined)
            logger.warn(
              `[webhook] run session not recorded in ${sessions}: ${directory} (the gateway writes the day's journal there); said once until a run is recorded again`,
            );
          else if (inTheWay !== undefined) {
            // A link to a device (`sessions -> /dev/null`) is no file to move: the link is what to change.
            const { said, fix } = noDirectoryAt(inTheWay);
            logger.warn(
              `[webhook] run session not recorded in ${sessions}: ${said} — ${fix} (the gateway makes the directory); said once until a run is recorded again`,
            );
          } else if (openFiles !== undefined)
            logger.warn(
              `[webhook] run session not recorded in ${sessions}: ${openFiles}; said once until a run is recorded again`,
            );
          else if (noRoom === undefined)
            logger.warn({ err: String(err) }, "[webhook] run session not recorded");
          else logger.warn(`[webhook] run session not recorded in ${sessions}: ${noRoom}`);
        },
        date,
        (message) => logger.warn(message),
      );
      journals.set(profile, journal);
    }
    return journal;
  };
  const listReaders = new Map<string, ReturnType<typeof createListReader>>();
  const listReader = (profile: string) => {
    let reader = listReaders.get(profile);
    if (reader === undefined) {
      reader = createListReader({
        baseDir: profilePaths(profile).root,
        onUnreadable: (file, problem) =>
          logger.warn(
            `[webhook] in_file list ${file} cannot be used (${problem}) — filters naming it do not match, so their events are ignored until it can`,
          ),
      });
      listReaders.set(profile, reader);
    }
    return reader;
  };
  return {
    paths: profilePaths,
    runJournal,
    /**
     * At start: every profile's expired day journals removed (the default profile's and each one under
     * `profiles/`), not only those of a profile that records a run. A `profiles/` that cannot be listed is
     * warned about elsewhere; its profiles' days go at their next run.
     */
    removeExpiredJournals() {
      let profiles: string[];
      try {
        profiles = existingProfiles(home);
      } catch {
        profiles = [DEFAULT_PROFILE];
      }
      const today = date();
      for (const profile of profiles)
        removeExpiredRunJournals(profilePaths(profile).sessions, today, (message) => logger.warn(message));
    },
    listReader,
    /**
     * After a reload: the journals of the named profiles `unused` says nothing is bound to any more are
     * closed (their pending lines written), so a gateway that runs for days holds no file for each profile it
     * ever ran. A later run of one opens its journal again.
     */
    closeJournalsOf(unused: (profile: string) => boolean) {
      for (const [profile, journal] of journals) {
        if (profile === DEFAULT_PROFILE || !unused(profile)) continue;
        journals.delete(profile);
        void journal.close();
      }
    },
    /** At stop: every journal's pending lines written. */
    closeJournals: () => Promise.all([...journals.values()].map((journal) => journal.close())),
  };
}
