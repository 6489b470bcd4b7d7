import type { PendingRun } from "../io/stores/pendingRuns.js";
import type { JournaledKeys } from "../streams/seenCache.js";

/**
 * Everything a 202 promises, behind one interface (DESIGN.md 6a). The pipeline and the actors talk to
 * this, never to a backend. Each recording method returns at once; what it recorded is kept across a
 * crash once the promise from `durable()` taken afterwards resolves, and not before: a caller answers
 * 202 only then.
 */
export interface StateStore {
  /** `memory`: nothing outlives the process (tests, benchmarks); `local`: the journal under $SVC_HOME/state/. */
  readonly backend: "memory" | "local";
  /**
   * What the previous process left: accepted runs not recorded finished, pending coalescing groups and
   * the idempotency keys of the last hour. Called once, at startup, before the first request.
   */
  recover(): Recovered;
  /**
   * With `redis` (a `memory` store here): the runs (`route:delivery id`) the local journal of this home
   * still owes. They run with `backend: local` only, so a copy a stop saved to the pending-runs file is
   * left there, not run here: it would run twice.
   */
  readonly owedByLocalJournal?: ReadonlySet<string>;
  /**
   * With `redis` (a `memory` store here): the delivery ids of the last hour the local journal of this home
   * remembers, with when each was first accepted and whether it is a direct delivery that was made. The
   * gateway carries them into Redis before it listens, so a sender's retry of one is still a duplicate.
   */
  readonly seenByLocalJournal?: ReadonlyArray<readonly [key: string, at: number, delivered: boolean]>;
  /**
   * False while what a 202 promises cannot be recorded (`local`: journal writes failing), so requests that
   * need it are answered 503 (`svc_state_available`). Absent: always available (`memory`).
   */
  available?(): boolean;
  /**
   * `local`: whether another gateway took the state directory over (`StateDirTakenOver`, said at ERROR): it
   * replayed the journal and runs what it holds, so this gateway answers 503, starts no run and saves none
   * for a next start from then on. Absent: never.
   */
  takenOver?(): boolean;
  /** `local`: `then` is called once another gateway takes the state directory over (at once if it has). */
  whenTakenOver?(then: () => void): void;
  /** Bytes of records in the journal's current segment (`local`; `svc_state_journal_bytes`). */
  journalBytes?(): number;
  /**
   * `local`: from now on the store keeps its idempotency keys in the pipeline's cache (`keys`, its journal
   * side), moving there those it recovered, so each accepted key is held once. Called once, after `recover`.
   * The keys of runs whose delivery id the gateway made stay out of it (a ring of the store's own).
   */
  shareSeen?(keys: JournaledKeys): void;
  /** An agent run was accepted (queued): it runs after a restart until `runFinished` is recorded. */
  runAccepted(run: PendingRun, at: number): void;
  /**
   * A stop keeps `run` unfinished with the reply its agent made and where its delivery stood (`reply`,
   * `retry`): a restart delivers that reply from there, without running the agent again. Recorded for a
   * run still unfinished only.
   */
  runKept?(run: PendingRun): void;
  /** The run ended (done or failed for good): a restart never runs it again. */
  runFinished(routeName: string, deliveryId: string): void;
  /**
   * The run's request was answered 503 (its record could not be made durable): the run and its
   * idempotency key are forgotten, so the sender's retry runs it, also after a restart. `written`: the
   * record may be in the file all the same (its sync failed), so one saying so is appended; otherwise
   * (the write failed and was cut back) nothing is (a record saying so would be written, and its sync
   * succeed, on a disk with room for it only, ending the outage as far as the log can tell).
   */
  runRefused(routeName: string, deliveryId: string, written: boolean): void;
  /** An idempotency key (route:delivery id) accepted at `at`: a retry within the hour is a duplicate. */
  remember(key: string, at: number): void;
  /** A direct (`deliver_only`) delivery of `key` succeeded: a retry after a restart is a duplicate. */
  delivered(key: string, at: number): void;
  /** A coalescing group's state after an event joined it (the whole state: the last record wins). */
  groupUpdated(group: StoredGroup): void;
  /** The group fired (its run was recorded with `runAccepted` just before) or was dropped. */
  groupFired(id: string): void;
  /** Resolves once everything recorded so far is durable; undefined when it already is (or never will be: memory). */
  durable(): Promise<void> | undefined;
  /** Makes what is recorded durable and releases the files. */
  close(): Promise<void>;
}

/** A pending coalescing group as stored: its latest event, how many merged, and when. */
export interface StoredGroup {
  readonly id: string;
  readonly latest: PendingRun;
  /** Events merged so far, the first one included. */
  readonly merged: number;
  /** When the first event joined (the max wait counts from here) and the last one (the quiet window). */
  readonly firstAt: number;
  readonly lastAt: number;
}

export interface Recovered {
  /** Accepted and not finished, oldest first. */
  readonly runs: PendingRun[];
  readonly groups: StoredGroup[];
  /** Idempotency keys with the time each was first accepted, oldest first. */
  readonly seen: Array<[key: string, at: number]>;
  /**
   * The keys recorded as agent runs (pending or finished): those among `seen`, and those of runs whose
   * delivery id the gateway made (`PendingRun.madeId`), which `seen` leaves out.
   */
  readonly runKeys: string[];
}

export const NOTHING_RECOVERED: Recovered = { runs: [], groups: [], seen: [], runKeys: [] };
