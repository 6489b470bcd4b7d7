import type { Clock } from "../clock.js";
import { StateDirTakenOver } from "../io/state/journal/dirLock.js";
import type { JournalFs } from "../io/state/journal/fsFacade.js";
import { Journal } from "../io/state/journal/journal.js";
import type { SegmentProblem } from "../io/state/journal/segments.js";
import type { PendingRun } from "../io/stores/pendingRuns.js";
import { createSeenCache, type JournaledKeys } from "../streams/seenCache.js";
import { type JournalRecord, LiveState, runKey, SEEN_MAX, SEEN_TTL_MS, understood } from "./liveState.js";
import { recordText } from "./recordText.js";
import type { Recovered, StateStore, StoredGroup } from "./store.js";

export interface LocalStoreOptions {
  /** `$SVC_HOME/state`. */
  readonly dir: string;
  readonly now: () => number;
  /** The timers of the journal's look at its segment (default: the process's). */
  readonly timers?: Pick<Clock, "setTimeout" | "clearTimeout">;
  readonly fs?: JournalFs;
  readonly maxSegmentBytes?: number;
  readonly onProblem?: (problem: SegmentProblem) => void;
  readonly onError?: (err: unknown) => void;
  /** The journal's segment is written again after its state directory was lost and put back (see `Journal`). */
  readonly onWrittenAgain?: (file: string) => void;
}

/**
 * The `local` backend: each fact is applied to the live mirror and appended to the journal; the
 * journal's group commit makes it durable. Opening replays the journal (synchronously, at startup).
 */
export class LocalStateStore implements StateStore {
  readonly backend = "local" as const;
  readonly journal: Journal;
  private readonly live = new LiveState();
  private sincePrune = 0;
  /** Told once another gateway takes the state directory over (`whenTakenOver`). */
  private readonly takeoverListeners: Array<() => void> = [];

  constructor(private readonly options: LocalStoreOptions) {
    this.journal = new Journal(
      {
        dir: options.dir,
        now: options.now,
        ...(options.timers === undefined ? {} : { timers: options.timers }),
        understood,
        ...(options.fs === undefined ? {} : { fs: options.fs }),
        ...(options.maxSegmentBytes === undefined ? {} : { maxSegmentBytes: options.maxSegmentBytes }),
        ...(options.onProblem === undefined ? {} : { onProblem: options.onProblem }),
        ...(options.onWrittenAgain === undefined ? {} : { onWrittenAgain: options.onWrittenAgain }),
        onError: (err) => {
          options.onError?.(err);
          if (err instanceof StateDirTakenOver) for (const then of this.takeoverListeners.splice(0)) then();
        },
      },
      (records) => {
        for (const record of records) this.live.apply(record);
        this.live.notAhead(options.now());
      },
      () => this.live.snapshot(options.now()),
    );
  }

  /** Bytes of records in the journal's current segment (`svc_state_journal_bytes`). */
  journalBytes(): number {
    return this.journal.currentSegment().bytes;
  }

  /** False while journal writes fail: requests that need a record are answered 503. */
  available(): boolean {
    return this.journal.accepting();
  }

  takenOver(): boolean {
    return this.journal.isTakenOver();
  }

  whenTakenOver(then: () => void): void {
    if (this.takenOver()) then();
    else this.takeoverListeners.push(then);
  }

  /** Records replay could not read (reported once at startup). */
  ignoredRecords(): number {
    return this.live.ignored;
  }

  recover(): Recovered {
    return this.live.recovered(this.options.now());
  }

  shareSeen(keys: JournaledKeys): void {
    // Made ids' run keys in a ring like the cache's, of their own: they take no room among the senders'
    // ids, and the oldest past the cap go unsaid (no sender retries one).
    const made = createSeenCache({ ttlMs: SEEN_TTL_MS, maxEntries: SEEN_MAX, now: this.options.now });
    this.live.shareSeen(keys, this.options.now(), made.journaled);
  }

  runAccepted(run: PendingRun, at: number): void {
    this.record({ t: "a", run, at });
  }

  runKept(run: PendingRun): void {
    // Replaces the run's record (the same key): its reply and delivery go with it into each later snapshot.
    if (this.live.runs.has(runKey(run.routeName, run.deliveryId)))
      this.record({ t: "a", run, at: run.receivedAt });
  }

  runFinished(routeName: string, deliveryId: string): void {
    const k = runKey(routeName, deliveryId);
    // Runs never journaled (cron jobs, or already finished) need no record.
    if (this.live.runs.has(k)) this.record({ t: "f", k });
  }

  runRefused(routeName: string, deliveryId: string, written: boolean): void {
    const k = runKey(routeName, deliveryId);
    if (written) this.record({ t: "f", k, w: 1 });
    else this.live.withdraw(k);
  }

  remember(key: string, at: number): void {
    this.record({ t: "s", k: key, at });
  }

  delivered(key: string, at: number): void {
    this.record({ t: "d", k: key, at });
  }

  groupUpdated(group: StoredGroup): void {
    this.record({ t: "g", g: group });
  }

  groupFired(id: string): void {
    if (this.live.groups.has(id)) this.record({ t: "x", id });
  }

  durable(): Promise<void> | undefined {
    return this.journal.durable();
  }

  close(): Promise<void> {
    return this.journal.close();
  }

  private record(record: JournalRecord): void {
    // Appended first: a record that cannot be encoded (longer than any string) throws before it is live.
    this.journal.appendText(recordText(record));
    // Made here, so already of a known shape: not checked as a replayed one is.
    this.live.applyOwn(record);
    if (++this.sincePrune >= 1024) {
      this.sincePrune = 0;
      this.live.prune(this.options.now());
    }
  }
}
