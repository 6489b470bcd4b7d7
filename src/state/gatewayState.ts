import { existsSync } from "node:fs";
import { join } from "node:path";
import { type CoalesceObserver, type Coalescer, currentGroupId } from "../actors/coalescer.js";
import { type KeptDeliveryOf, pendingRunOf, savedRunOf } from "../actors/pendingRuns.js";
import { NOT_RUN, type QueuedRun, type RunExecutor } from "../actors/runs.js";
import type { Clock } from "../clock.js";
import type { StateSettings } from "../config/sections/state.js";
import {
  describeError,
  isSvcError,
  RunFailedAtStop,
  RunKeptForRestart,
  StoppedWhileWaiting,
  SvcError,
} from "../errors.js";
import type { Logger } from "../io/log.js";
import { noDirectoryAt } from "../io/noDirectoryAt.js";
import { openFilesFix } from "../io/openFiles.js";
import {
  awaitForeignLock,
  LOCK_FILE,
  StateDirBusyError,
  StateDirTakenOver,
} from "../io/state/journal/dirLock.js";
import { RecordsNotWritten } from "../io/state/journal/groupCommit.js";
import {
  JournalNotRecreated,
  PreviousSegmentLeft,
  RestateFailed,
  RotationBlocked,
  RotationFailed,
  RotationLeftSegment,
} from "../io/state/journal/rotation.js";
import { readJournal } from "../io/state/journal/segments.js";
import { fileInPlaceOf } from "../io/stores/atomicFile.js";
import { FOREIGN_UNTOUCHED_MS } from "../io/stores/fileLock.js";
import type { PendingRun, PendingRunsReport } from "../io/stores/pendingRuns.js";
import type { AcceptedEvent, EventModes, ResolvedRoute } from "../streams/context.js";
import type { SeenCache } from "../streams/seenCache.js";
import type { HeldGroups } from "../streams/stages/dispatch.js";
import { seenKey } from "../streams/stages/idempotency.js";
import { LiveState, runKey, SEEN_TTL_MS, understood } from "./liveState.js";
import { LocalStateStore } from "./localStore.js";
import { memoryStateStore } from "./memoryStore.js";
import { importPendingRunsFile } from "./pendingRunsImport.js";
import { assertRecordable } from "./recordable.js";
import type { Recovered, StateStore, StoredGroup } from "./store.js";

/** `$SVC_HOME/state`: the journal's segments. */
export const stateDir = (home: string): string => join(home, "state");

/** `$SVC_HOME/state/agents`: the process groups of the agents and route scripts running now (`src/io/processGroups.ts`). */
export const agentGroupsDir = (home: string): string => join(stateDir(home), "agents");
/** Where the gateway notes its scheduled cron runs while they run (`io/cronRunNotes.ts`). */
export const cronRunsDir = (home: string): string => join(stateDir(home), "cron-runs");

const PENDING = 0;
const DURABLE = 1;
const FAILED = 2;

/** The journal batch an answered run's record is in: set on the queued run (a symbol: never serialised). */
const RECORD = Symbol("record batch");
type RecordedRun = QueuedRun & { [RECORD]?: RecordBatch };

/** The answered runs whose records one journal sync makes durable, and how that sync ended. */
interface RecordBatch {
  readonly recorded: Promise<void>;
  state: typeof PENDING | typeof DURABLE | typeof FAILED;
  /** Failed: whether its records may be in the file all the same (a failed sync), to be marked finished. */
  written?: boolean;
  /** Its runs, until it settles: a failed one takes those still waiting back out of the queue. */
  readonly runs: QueuedRun[];
}

/**
 * The log line for a journal error: a failed write answers the waiting requests 503; a failed rotation
 * costs nothing yet (the current segment keeps taking the records), unless it left a segment it could
 * not remove (one blocked by a file not the gateway's at the next segment's name names that file, once); a previous segment left after a rotation is only disk space.
 */
export function journalErrorLine(dir: string, err: unknown): { cause: string; message: string } {
  // At the limit on open files (a new segment, the directory opened to sync it) the disk is not at fault.
  const diskFix = (what: string) =>
    openFilesFix(err instanceof Error && err.cause !== undefined ? err.cause : err, "the disk") ?? what;
  if (err instanceof JournalNotRecreated) {
    const lost = `[state] the journal in ${dir} could not be made again after the state directory was removed or moved while the gateway ran`;
    const later = `the requests waiting for it answer 503 (their senders retry), as do later ones until it can be (tried again each second, said again only if what is in the directory's place changes)`;
    // Something no directory in its place (a file, a link to a device, to nothing, into a loop): named, with what to change.
    const inTheWay = fileInPlaceOf(dir);
    if (inTheWay !== undefined) {
      const { said, fix } = noDirectoryAt(inTheWay);
      return {
        cause: describeError(err.cause),
        message: `${lost}: ${said}; ${later} — ${fix} (the gateway makes the directory)`,
      };
    }
    return {
      cause: describeError(err.cause),
      message: `${lost}: ${later} — check that ${dir} can be created and written by this user, the disk has room and no other gateway took it`,
    };
  }
  if (err instanceof StateDirTakenOver)
    return {
      cause: err.message,
      message:
        err.by === undefined
          ? `[state] ${join(dir, LOCK_FILE)} no longer names this gateway: another gateway took the state directory over while this one ran, judging it killed, and has released it since (it stopped; ${err.left ?? "its segment"} is its segment, and this gateway's is gone) — this gateway was paused or hung (docker pause, SIGSTOP, a VM suspended) for more than ${FOREIGN_UNTOUCHED_MS / 1000} s where the other could not check its pid; that gateway replayed this journal and ran what it holds, so requests here answer 503 from now on (their senders retry), no run starts here any more (the runs queued here, a coalescing group's and a fired cron job's included, are that gateway's, and this gateway's cron schedule is stopped; a run under way goes on), and this gateway neither takes the lock again nor writes a segment beside that one's — stop this gateway with kill ${process.pid}, then start it again: the start replays what the other gateway left`
          : `[state] ${join(dir, LOCK_FILE)} no longer names this gateway: another gateway (${lockHolderWords(err.by)}) took the state directory over while this one ran, judging it killed — this gateway was paused or hung (docker pause, SIGSTOP, a VM suspended) for more than ${FOREIGN_UNTOUCHED_MS / 1000} s where the other could not check its pid, or the file was replaced by hand; that gateway replayed this journal and runs what it holds, so requests here answer 503 from now on (their senders retry) and no run starts here any more (the runs queued here, a coalescing group's and a fired cron job's included, are that gateway's, and this gateway's cron schedule is stopped; a run under way goes on) — stop this gateway with kill ${process.pid} (svc gateway stop may find the other one's gateway.pid and stop that one) and leave the other running`,
    };
  if (err instanceof RotationBlocked)
    return {
      cause: describeError(err.cause),
      message: `[state] ${err.file} is in the way of the journal's next segment and is not this gateway's — move it out of the state directory; until then the journal does not rotate (current segment ${(err.bytes / (1024 * 1024)).toFixed(1)} MB, growing with every record)${err.restating ? " and runs that finished and groups that fired while writes failed would run again after a restart" : ""}; the current segment keeps every record, and the rotation goes on once the file is moved, without a restart`,
    };
  if (err instanceof RestateFailed)
    return {
      cause: describeError(err.cause),
      message: `[state] restating the journal in ${dir} after its writes failed did not succeed either; until it does, runs that finished and groups that fired while writes failed would run again after a restart — it is tried again as the journal takes more records; ${diskFix("check the disk has room")}`,
    };
  if (err instanceof RotationFailed)
    return {
      cause: describeError(err.cause),
      message: `[state] rotating the journal in ${dir} failed; the current segment keeps every record and the rotation is tried again once it grew by another quarter — ${diskFix("check the disk has room")}`,
    };
  if (err instanceof RotationLeftSegment)
    return {
      cause: describeError(err.cause),
      message: `[state] a failed journal rotation left ${err.file}, which could not be removed and would hide newer records: requests answer 503 from now on — check the disk, remove that file, then restart the gateway`,
    };
  if (err instanceof PreviousSegmentLeft)
    return {
      cause: describeError(err.cause),
      message: `[state] ${err.file} could not be removed after a journal rotation; the new segment supersedes it, and the next start removes it`,
    };
  return {
    cause: describeError(err),
    message: `[state] writing the journal in ${dir} failed; the requests waiting for it answer 503 (their senders retry), as do later ones while writes fail (said once until a write succeeds again) — ${diskFix("check the disk has room and the directory is writable")}`,
  };
}

/** The gateway's refusal when the journal in `dir` cannot be opened: why, and what to check. */
function journalNotOpened(dir: string, err: unknown): string {
  return `${dir}: the state journal cannot be opened (${describeError(err)}) — check that the directory and its files can be read and written by this user and the disk has room`;
}

/**
 * Why the gateway could not open the local journal of `home`, found by reading its segments as the start
 * replays them, without writing or locking anything (`svc config check`): a segment file it cannot read (one
 * this user cannot read, one too large to read; a link or a directory at a segment's name is set aside by a
 * start, no refusal). Undefined with `state.backend: redis`, with no
 * state directory yet, or when every segment reads. A lock held by a running gateway is no problem here.
 */
export function journalProblem(settings: StateSettings, home: string): string | undefined {
  if (settings.backend === "redis") return undefined;
  const dir = stateDir(home);
  if (!existsSync(dir)) return undefined;
  try {
    readJournal(dir, { understood });
  } catch (err) {
    return journalNotOpened(dir, err);
  }
  return undefined;
}

/** `pid 12 of pid:[4026532000]`: the gateway a state directory lock's text names. */
function lockHolderWords(text: string): string {
  const [pid, , , namespace] = text.trim().split(" ");
  return namespace === undefined || namespace === "-" ? `pid ${pid}` : `pid ${pid} of ${namespace}`;
}

/**
 * Before `openStateStore` with the local journal: a state directory lock of another PID namespace that its
 * gateway touched moments ago (a container restarted after its gateway was killed) is waited for until it
 * is left untouched long enough to be taken over (`awaitForeignLock`), said at INFO. A stop signal during
 * the wait (`signal`) ends it with `StoppedWhileWaiting`.
 */
export async function awaitStateDir(
  settings: StateSettings,
  home: string,
  logger: Logger,
  clock: Pick<Clock, "sleep">,
  signal?: AbortSignal,
): Promise<void> {
  if (settings.backend === "redis") return;
  const dir = stateDir(home);
  try {
    await awaitForeignLock(dir, {
      sleep: (ms, aborted) => clock.sleep(ms, aborted),
      info: (line) => logger.info(line),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (err) {
    if (signal?.aborted === true)
      throw new StoppedWhileWaiting(`stopped while waiting for ${join(dir, LOCK_FILE)} to be left untouched`);
    throw err;
  }
}

/** Opens the configured backend (replaying the journal: synchronous, before the listener opens). */
export function openStateStore(
  settings: StateSettings,
  home: string,
  logger: Logger,
  now: () => number,
  timers?: Pick<Clock, "setTimeout" | "clearTimeout">,
): StateStore {
  const dir = stateDir(home);
  // Redis keeps what a 202 promises itself (src/state/redisState.ts): no local journal.
  if (settings.backend === "redis") {
    const journal = journalLeft(dir, now());
    const owed = journal?.owed;
    const left = leftInJournal(dir, owed);
    if (left !== undefined) logger.warn(left);
    return {
      ...memoryStateStore(),
      ...(owed === undefined ? {} : { owedByLocalJournal: owed.runs }),
      ...(journal === undefined || journal.seen.length === 0 ? {} : { seenByLocalJournal: journal.seen }),
    };
  }
  let store: LocalStateStore;
  try {
    store = new LocalStateStore({
      dir,
      now,
      ...(timers === undefined ? {} : { timers }),
      onProblem: ({ file, problem }) => logger.warn(`[state] ${file}: ${problem}`),
      onWrittenAgain: (file) =>
        logger.info(
          `[state] the journal in ${dir} is written again: the state directory is back in its place, and ${file} with it; requests are recorded (and answered 202) again`,
        ),
      onError: (err) => {
        const { cause, message } = journalErrorLine(dir, err);
        logger.error({ err: cause }, message);
      },
    });
  } catch (err) {
    if (err instanceof StateDirBusyError || isSvcError(err, "startup_refused"))
      throw new SvcError("startup_refused", err.message);
    throw new SvcError("startup_refused", journalNotOpened(dir, err));
  }
  const opened = store.journal.opened;
  if (opened.records > 0 || opened.segments > 0)
    logger.info(
      `[state] journal ${dir}: ${opened.records} record(s) replayed from ${opened.segments} segment(s)`,
    );
  if (store.ignoredRecords() > 0)
    logger.warn(`[state] journal ${dir}: ${store.ignoredRecords()} record(s) not understood were skipped`);
  return store;
}

/**
 * What a local journal still owes (runs not finished, pending groups) when the backend is now `redis`,
 * which never reads it: said at each start, so a switch with a backlog does not drop it silently.
 */
export function leftInJournal(dir: string, owed: JournalLeft["owed"]): string | undefined {
  if (owed === undefined) return undefined;
  return `[state] ${dir}: ${owed.runs.size} agent run(s) and ${owed.groups} pending coalescing group(s) were accepted with state.backend: local and have not run; state.backend: redis does not read that journal — run the gateway with backend: local until they have run (a copy of one that a stop saved to webhook-pending-runs.json is left there for it, not run here), then switch back (or, to drop them, delete the directory and the copies a stop saved to webhook-pending-runs.json, which would run here once the journal is gone)`;
}

/** What a local journal leaves to a `redis` start, which never opens it (`journalLeft`). */
export interface JournalLeft {
  /** The runs (`route:delivery id`) it holds unfinished and how many groups pending; undefined when none. */
  readonly owed?: { readonly runs: ReadonlySet<string>; readonly groups: number };
  /** The delivery ids of the last hour a `local` start would restore (`StateStore.seenByLocalJournal`). */
  readonly seen: ReadonlyArray<readonly [key: string, at: number, delivered: boolean]>;
}

/**
 * Reads a local journal as a `local` start replays it, in one pass: what it still owes and the delivery ids
 * it remembers at `now`; undefined when it cannot be read.
 */
export function journalLeft(dir: string, now: number): JournalLeft | undefined {
  const live = new LiveState();
  try {
    for (const record of readJournal(dir, { understood }).records) live.apply(record);
  } catch {
    return undefined;
  }
  // As a local start counts them: a time ahead of now (the clock set back since) counts from now.
  live.notAhead(now);
  const seen = live.seenKeys(now);
  if (live.runs.size === 0 && live.groups.size === 0) return { seen };
  return { owed: { runs: new Set(live.runs.keys()), groups: live.groups.size }, seen };
}

type Lookup = (routeName: string) => ResolvedRoute | undefined;

function routeFor(run: PendingRun, lookup: Lookup): ResolvedRoute | undefined {
  const found = lookup(run.routeName);
  return found !== undefined && found.profile === run.profile ? found : undefined;
}

/**
 * The saved groups, one record per group: a named profile's group journaled by an earlier version under
 * `<route>\u0000<key>` is recorded again under `<route>@<profile>\u0000<key>` when a start reopens it (the
 * new record first), so a kill between the two writes leaves both. They are one group: the newer record
 * (the later last event; the one under the current id when both are alike) is kept, and the other is
 * returned to be ended, neither reopened nor counted again (its events are the kept one's).
 */
function oneRecordPerGroup(groups: readonly StoredGroup[]): {
  kept: StoredGroup[];
  dropped: string[];
} {
  const byId = new Map(groups.map((group) => [group.id, group] as const));
  const dropped = new Set<string>();
  for (const group of groups) {
    const id = currentGroupId(group.id, group.latest.routeName, group.latest.profile);
    const renamed = id === group.id ? undefined : byId.get(id);
    if (renamed === undefined) continue;
    dropped.add(renamed.lastAt >= group.lastAt ? group.id : renamed.id);
  }
  return { kept: groups.filter((group) => !dropped.has(group.id)), dropped: [...dropped] };
}

const asEvent = (run: PendingRun, route: ResolvedRoute): AcceptedEvent => ({
  ...run,
  route: route.route,
  payload: {},
  headers: {},
});

/**
 * The gateway's side of the state store: wrappers that record each fact where it happens (run accepted,
 * run finished, group changed, direct delivery done), and the recovery at startup. The gateway wires
 * these in; the logic lives here.
 */
export class GatewayState {
  private recovered: Recovered | undefined;
  private readonly groupFirstAt = new Map<string, number>();
  /**
   * The saved groups left in the journal at start (their route gone), by journal id, until an event of their
   * route reopens them (`heldGroupsOf`). A group a new event opens meanwhile for the same route and key
   * (its route back under another profile) is journaled under an id of its own (`journalIds`), so its
   * records neither replace the saved group's nor, once it fires, remove it. Such an id starts with a NUL
   * (no route name does) and is none of the saved groups' ids (`savedGroups`), which a start may reopen.
   */
  private readonly heldGroups = new Map<string, StoredGroup>();
  /** How many of them each route name holds: an event of another route looks no further. */
  private readonly heldRoutes = new Map<string, number>();
  private readonly savedGroups = new Set<string>();
  private readonly journalIds = new Map<string, string>();
  private aliases = 0;

  constructor(
    readonly store: StateStore,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  /** Runs the journal took care of (pending, or finished within the hour); a cron fire's key is not one. */
  private knownRuns(): Set<string> {
    const recovered = this.recoveredOnce();
    return new Set<string>([
      ...recovered.runKeys,
      ...recovered.runs.map((run) => runKey(run.routeName, run.deliveryId)),
    ]);
  }

  /** The runs `importSavedRuns` took in, for `resume` to queue. */
  private imported: PendingRun[] | undefined;

  /**
   * Takes the runs of webhook-pending-runs.json into the journal (`importPendingRunsFile`), before the
   * listener opens: `resume` then queues the saved runs without awaiting anything, so the runs of the
   * requests that come in once it is open queue behind them.
   */
  async importSavedRuns(pendingRunsFile: string, report: PendingRunsReport): Promise<void> {
    this.imported = await importPendingRunsFile(pendingRunsFile, this.knownRuns(), this.store, report);
  }

  private recoveredOnce(): Recovered {
    this.recovered ??= this.store.recover();
    return this.recovered;
  }

  /** How many idempotency keys the store recovered (the journal replayed) at this start. */
  recoveredSeen(): number {
    return this.recoveredOnce().seen.length;
  }

  /**
   * The idempotency keys of the last hour, into the cache (before the first request). The journal's live
   * mirror keeps its keys in the same cache from then on.
   */
  restoreSeen(seen: SeenCache): void {
    const keys = this.recoveredOnce().seen;
    if (this.store.shareSeen !== undefined) this.store.shareSeen(seen.journaled);
    else seen.restore(keys.map(([key, at]) => [key, at + SEEN_TTL_MS] as const));
  }

  /** The pipeline's `durable` dependency: 202s wait for it (none for the memory backend). */
  pipelineDeps(): { durable?: () => Promise<void> | undefined } {
    return this.store.backend === "memory" ? {} : { durable: () => this.store.durable() };
  }

  /**
   * Records each agent run the queue took. With `answered`, the run is a request's, answered 202 only
   * once its record is durable: it starts once that is so, and never when the write failed (the request
   * was answered 503 instead and the sender's retry runs it): still waiting, it is withdrawn from the
   * queue, so a stop does not save it either. A coalescing group's run is owed whatever happens to its
   * record: it does not wait.
   */
  enqueue(
    enqueue: (event: AcceptedEvent) => QueuedRun | undefined,
    options: {
      readonly answered?: { readonly withdraw: (run: QueuedRun) => boolean };
    } = {},
  ): (event: AcceptedEvent) => boolean {
    const answered = options.answered;
    // The runs of one journal batch share it: one settle handler for them all, not one per run.
    let batch: RecordBatch | undefined;
    const settle = (settling: RecordBatch, failure?: { err: unknown }) => {
      settling.state = failure === undefined ? DURABLE : FAILED;
      const runs = settling.runs.splice(0);
      if (failure === undefined) return;
      settling.written = !(failure.err instanceof RecordsNotWritten);
      for (const run of runs) {
        // One a slot took already is stopped in `trackRuns` before its agent starts.
        if (answered?.withdraw(run)) this.notRun(run, settling.written);
      }
    };
    return (event) => {
      const run = enqueue(event);
      if (run === undefined) return false;
      try {
        this.store.runAccepted(pendingRunOf(event), this.now());
      } catch (err) {
        // No record at all (one longer than any JSON text): its request is answered 500, so it must not run.
        answered?.withdraw(run);
        throw err;
      }
      const recorded = answered === undefined ? undefined : this.store.durable();
      if (recorded === undefined) return true;
      if (batch?.recorded !== recorded) {
        const opened: RecordBatch = { recorded, state: PENDING, runs: [] };
        recorded.then(
          () => settle(opened),
          (err: unknown) => settle(opened, { err }),
        );
        batch = opened;
      }
      batch.runs.push(run);
      // On the queued run itself: no lookup table to grow with the queue.
      (run as RecordedRun)[RECORD] = batch;
      return true;
    };
  }

  /**
   * A run whose request was answered 503: forgotten with its delivery id, so neither a later snapshot nor
   * a restart runs it or answers the sender's retry duplicate. Recorded so when its record may be in the
   * file (a failed sync), else only forgotten: a record written for it would end the outage in the log
   * whenever the disk still had room for that one.
   */
  private notRun(run: { readonly routeName: string; readonly deliveryId: string }, written: boolean): void {
    this.store.runRefused(run.routeName, run.deliveryId, written);
    this.logger.warn(
      { route: run.routeName, delivery_id: run.deliveryId },
      `[state] ${run.routeName}: run not started — its event could not be recorded and was answered 503 (the sender's retry runs it)`,
    );
  }

  /**
   * A run dropped at its turn whose event may be sent again (a fired job whose store could not be read): it
   * and its delivery ID are forgotten, as a 503's are, so neither a restart runs it nor is the sender's retry
   * answered `duplicate`.
   */
  forgetRun(run: { readonly routeName: string; readonly deliveryId: string }): void {
    this.store.runRefused(run.routeName, run.deliveryId, true);
  }

  /**
   * Marks a run finished when it ends (done or failed), not when a stop aborted it: that one runs again. Once
   * another gateway took the state directory over, no run starts: that gateway replayed the journal and runs
   * the runs queued here (a coalescing group's and a fired cron job's too); started here as well, they would
   * run twice.
   */
  trackRuns(execute: RunExecutor): RunExecutor {
    return async (run, signal, slot) => {
      if (this.store.takenOver?.() === true) return NOT_RUN;
      // A request's run waits for its record (usually durable by the time a slot takes it) and is not
      // run when the write failed: that request was answered 503.
      const batch = (run as RecordedRun)[RECORD];
      if (batch !== undefined && batch.state !== DURABLE) {
        const refused =
          batch.state === FAILED ||
          (await batch.recorded.then(
            () => false,
            () => true,
          ));
        if (refused) {
          this.notRun(run, batch.written !== false);
          return;
        }
      }
      let kept = false;
      let ended = false;
      try {
        const result = await execute(run, signal, slot);
        ended = true;
        return result;
      } catch (err) {
        kept = err instanceof RunKeptForRestart;
        ended = err instanceof RunFailedAtStop;
        throw err;
      } finally {
        // Not before its delivery ends, when the run handed its slot back to wait for a retry: a crash
        // meanwhile leaves it unfinished in the journal, so the next start delivers it again. A run that
        // ended as the stop came (a mail some recipients got, its retry for the others cut short), with its
        // reply or a failed run's notice, is finished: run again, it would deliver a second time.
        if (ended || (!signal.aborted && !kept)) this.store.runFinished(run.routeName, run.deliveryId);
      }
    };
  }

  /**
   * A stop keeps `runs` unfinished: those whose reply was made (`kept`) are journaled again with it and
   * where its delivery stood, so the next start delivers that reply from there without running the agent.
   * Never throws: a record that cannot be written leaves the run as it was journaled (its agent runs again).
   */
  keepDeliveries(runs: readonly QueuedRun[], kept: KeptDeliveryOf): void {
    if (this.store.runKept === undefined) return;
    for (const run of runs) {
      const delivery = kept(run);
      if (delivery === undefined) continue;
      try {
        this.store.runKept(savedRunOf(run, delivery));
      } catch (err) {
        this.logger.warn(
          { route: run.routeName, delivery_id: run.deliveryId, err: describeError(err) },
          `[state] ${run.routeName}: the reply of the run stopped while it was delivered could not be journaled; the next start runs its agent again`,
        );
      }
    }
  }

  /**
   * Event-triggered cron fires are remembered for idempotency (the job itself is the cron store's), but for
   * a delivery id the gateway made, which no sender sends again. With the journal, an event whose record
   * could never be written does not join a coalescing group, whether its route is current or a reload retired
   * it (`coalesceRetired` joins the group the reloaded route opened for its key).
   */
  eventModes(modes: EventModes): EventModes {
    const fire = modes.fireCronJob;
    const coalesce = modes.coalesce;
    const coalesceRetired = modes.coalesceRetired;
    return {
      ...modes,
      ...(fire === undefined
        ? {}
        : {
            fireCronJob: (jobRef: string, event: AcceptedEvent) => {
              const result = fire(jobRef, event);
              if (result !== "queue_full" && result !== "unreadable" && event.madeId !== true)
                this.store.remember(seenKey(event.routeName, event.deliveryId), this.now());
              return result;
            },
          }),
      ...(coalesce === undefined || this.store.backend !== "local"
        ? {}
        : {
            coalesce: (event: AcceptedEvent) => {
              assertRecordable(event);
              return coalesce(event);
            },
          }),
      ...(coalesceRetired === undefined || this.store.backend !== "local"
        ? {}
        : {
            coalesceRetired: (event: AcceptedEvent) => {
              assertRecordable(event);
              return coalesceRetired(event);
            },
          }),
    };
  }

  /**
   * A successful direct delivery is recorded (and durable) before its 200: a retry after a restart is a
   * duplicate. A record that could not be written (disk full) still answers 200 (the delivery was made: a
   * 503 would have the sender's retry deliver it again now), and the log says what it costs. One under a
   * delivery id the gateway made is not recorded: no sender sends that id again.
   */
  deliverDirect(
    deliver: (event: AcceptedEvent) => Promise<boolean>,
  ): (event: AcceptedEvent) => Promise<boolean> {
    return async (event) => {
      const ok = await deliver(event);
      if (ok && event.madeId !== true) {
        this.store.delivered(seenKey(event.routeName, event.deliveryId), this.now());
        await this.store
          .durable()
          ?.catch(() =>
            this.logger.warn(
              { route: event.routeName, delivery_id: event.deliveryId },
              `[state] ${event.routeName}: delivered, but the journal could not record it (answered 200 delivered all the same); it is recorded once the journal can be written again, and a retry of this delivery id after a restart before then would deliver it again`,
            ),
          );
      }
      return ok;
    };
  }

  /** The id group `id` of the coalescer is journaled under: its own, unless a saved group kept holds it. */
  private journalId(id: string): string {
    if (!this.heldGroups.has(id)) return id;
    let alias = this.journalIds.get(id);
    while (alias === undefined || this.savedGroups.has(alias)) {
      this.aliases += 1;
      alias = `\u0000${this.aliases}\u0000${id}`;
    }
    this.journalIds.set(id, alias);
    return alias;
  }

  readonly coalesceObserver: CoalesceObserver = {
    updated: (id, latest, merged, offered) => {
      const at = this.now();
      const firstAt = this.groupFirstAt.get(id) ?? at;
      this.store.groupUpdated({
        id: this.journalId(id),
        latest: pendingRunOf(latest),
        merged,
        firstAt,
        lastAt: at,
      });
      // Only once written: a group whose record threw was never opened, and the key's next group counts its
      // max wait from its own first event.
      this.groupFirstAt.set(id, firstAt);
      // The group's record names its latest event's id only: an event that joined behind a newer one
      // has its id remembered on its own, so its retry after a restart is still a duplicate (an id the
      // gateway made has no retry).
      if (offered.deliveryId !== latest.deliveryId && offered.madeId !== true)
        this.store.remember(seenKey(offered.routeName, offered.deliveryId), at);
    },
    // Superseded by a run already dispatched: its id is remembered as a joined event's is, so its retry
    // after a restart is a duplicate, not an event that opens a group and runs the older data.
    superseded: (_id, offered) => {
      if (offered.madeId !== true)
        this.store.remember(seenKey(offered.routeName, offered.deliveryId), this.now());
    },
    fired: (id) => {
      this.groupFirstAt.delete(id);
      this.store.groupFired(this.journalId(id));
      this.journalIds.delete(id);
    },
    // Every event of it was answered 503: the group is gone, and so are their ids, as a refused run's are.
    ended: (id, refused) => {
      this.groupFirstAt.delete(id);
      this.store.groupFired(this.journalId(id));
      this.journalIds.delete(id);
      for (const event of refused) this.store.runRefused(event.routeName, event.deliveryId, true);
    },
  };

  /**
   * Queues the runs accepted and not finished before the restart, reopens the pending coalescing groups
   * with what is left of their windows, and takes in an existing webhook-pending-runs.json (upgrades, and
   * graceful stops) once it is durable in the journal. Runs and groups whose route is gone stay recorded.
   */
  async resume(deps: {
    /** Whether a stop signal came meanwhile: the runs then stay in the journal, queued by the next start. */
    readonly stopping?: () => boolean;
    /** Puts recovered runs back on the run queue (no cap: they were answered 202 long ago). */
    readonly resumeRuns: (runs: readonly QueuedRun[]) => void;
    readonly coalescer: Coalescer;
    readonly lookup: Lookup;
    readonly pendingRunsFile: string;
    readonly onPendingUnreadable: PendingRunsReport["onPendingUnreadable"];
    readonly onPendingEntriesKept: PendingRunsReport["onPendingEntriesKept"];
    /** The runs, and the pending groups (each by its latest event), whose route is gone: they stay in the journal. */
    readonly onKept: (runs: readonly PendingRun[], groups: readonly PendingRun[]) => void;
  }): Promise<void> {
    const recovered = this.recoveredOnce();
    // The groups first, before anything is awaited: a request for one of their keys may come in while
    // the file below is taken in (the listener is open), and must find its group reopened.
    const kept: PendingRun[] = [];
    const keptGroups: PendingRun[] = [];
    const at = this.now();
    let groups = 0;
    // A group fired as its run was recorded: a write cut between the run's record and the group's end
    // keeps both, and the run is the group's (the same event: same id, same receive time); reopened, it
    // would make the same run a second time. (A run of that id received earlier is another event's: a
    // redelivery after the hour, grouped while the first one's run still waited.)
    const pendingRuns = new Map(
      recovered.runs.map((run) => [runKey(run.routeName, run.deliveryId), run.receivedAt] as const),
    );
    const { kept: saved, dropped } = oneRecordPerGroup(recovered.groups);
    for (const id of dropped) this.store.groupFired(id);
    for (const group of saved) {
      const latest = group.latest;
      if (pendingRuns.get(runKey(latest.routeName, latest.deliveryId)) === latest.receivedAt) {
        this.store.groupFired(group.id);
        continue;
      }
      this.savedGroups.add(group.id);
      const route = routeFor(group.latest, deps.lookup);
      if (route === undefined) {
        keptGroups.push(group.latest);
        this.heldGroups.set(group.id, group);
        this.heldRoutes.set(latest.routeName, (this.heldRoutes.get(latest.routeName) ?? 0) + 1);
        continue;
      }
      groups += 1;
      this.reopen(group, route, deps.coalescer, at);
    }
    // Taken in before the listener opened (`importSavedRuns`), nothing is awaited: a request that comes in
    // now queues behind the saved runs, so a kept run's delivery takes its chat's turn before a new run's.
    const imported =
      this.imported !== undefined
        ? this.imported
        : await importPendingRunsFile(deps.pendingRunsFile, this.knownRuns(), this.store, deps);
    this.imported = undefined;
    const queued = [];
    for (const run of [...recovered.runs, ...imported]) {
      const route = routeFor(run, deps.lookup);
      if (route === undefined) kept.push(run);
      else queued.push({ ...run, route: route.route });
    }
    if (deps.stopping?.() === true) {
      if (queued.length > 0)
        this.logger.info(
          `[state] ${queued.length} agent run(s) left unfinished at the last shutdown stay in the journal: the gateway is stopping — they run at the next start`,
        );
    } else {
      deps.resumeRuns(queued);
      if (queued.length > 0)
        this.logger.info(
          `[state] ${queued.length} agent run(s) left unfinished at the last shutdown queued again (from the journal)`,
        );
    }
    if (groups > 0)
      this.logger.info(
        `[state] ${groups} pending coalescing group(s) reopened with what is left of their windows`,
      );
    // One line however large the backlog (a line per run was thousands at each start).
    if (kept.length > 0 || keptGroups.length > 0) deps.onKept(kept, keptGroups);
  }

  /**
   * Reopens a saved group with what is left of its windows. A clock set back while the gateway was down
   * leaves the saved times ahead of now: a window never has more left than its whole length, and the
   * group's max wait counts from now on. The group is recorded again with those times, so a start after a
   * kill before it fired counts from this one too. A route that no longer coalesces still owes the group
   * its one run: it fires at once (`firesNow`: before `reopen` returns).
   */
  private reopen(
    group: StoredGroup,
    route: ResolvedRoute,
    coalescer: Coalescer,
    at: number,
    firesNow = false,
  ): void {
    const policy = route.route.coalesce;
    const firstAt = Math.min(group.firstAt, at);
    const lastAt = Math.min(group.lastAt, at);
    // A named profile's group journaled by a version whose ids named no profile is recorded under its id
    // now (the new record first: a kill between the two leaves both, which the next start takes as one
    // group, `oneRecordPerGroup`).
    const id = currentGroupId(group.id, group.latest.routeName, group.latest.profile);
    this.groupFirstAt.set(id, firstAt);
    if (id !== group.id) {
      this.store.groupUpdated({ ...group, id, firstAt, lastAt });
      this.store.groupFired(group.id);
    } else if (firstAt !== group.firstAt || lastAt !== group.lastAt)
      this.store.groupUpdated({ ...group, firstAt, lastAt });
    const quietMs = policy === undefined ? 0 : policy.window_seconds * 1000;
    const maxMs = policy === undefined ? 0 : policy.max_wait_seconds * 1000;
    coalescer.restore({
      id,
      latest: asEvent(group.latest, route),
      merged: group.merged,
      quietLeftMs: Math.min(quietMs, lastAt + quietMs - at),
      maxLeftMs: Math.min(maxMs, firstAt + maxMs - at),
      ...(firesNow ? { firesNow } : {}),
    });
  }

  /**
   * The groups held at start (their route was gone), for the dispatch stage, which releases them with their
   * route's first event once the route is back (a reload, a subscription enabled again), whatever the
   * route's mode now. A route that still coalesces reopens them with what is left of their windows, so a
   * newer event for such a group's key joins it: one group, one run with the newest event. A route that
   * no longer coalesces (a plain agent route, `deliver_only`, `cron_job`) has them fire at once, before
   * its event is dispatched: each group's run, the agent run its events were accepted for, is queued ahead
   * of that event's, never left for the next start to run after it.
   */
  heldGroupsOf(coalescer: Coalescer, lookup: Lookup): HeldGroups {
    const held = this.heldGroups;
    return {
      get size() {
        return held.size;
      },
      release: (routeName) => {
        if (this.heldRoutes.has(routeName)) this.reopenHeld(routeName, coalescer, lookup);
      },
    };
  }

  private reopenHeld(routeName: string, coalescer: Coalescer, lookup: Lookup): void {
    let reopened = 0;
    let fired = 0;
    for (const [id, group] of this.heldGroups) {
      if (group.latest.routeName !== routeName) continue;
      const route = routeFor(group.latest, lookup);
      if (route === undefined) continue;
      this.heldGroups.delete(id);
      const left = (this.heldRoutes.get(routeName) ?? 1) - 1;
      if (left > 0) this.heldRoutes.set(routeName, left);
      else this.heldRoutes.delete(routeName);
      const coalesces = route.route.coalesce !== undefined;
      this.reopen(group, route, coalescer, this.now(), !coalesces);
      if (coalesces) reopened += 1;
      else fired += 1;
    }
    if (reopened > 0)
      this.logger.info(
        { route: routeName },
        `[state] ${routeName}: ${reopened} coalescing group(s) held since the start (the route was gone) reopened with the route's first event since, which joins its key's group`,
      );
    if (fired > 0)
      this.logger.info(
        { route: routeName },
        `[state] ${routeName}: ${fired} coalescing group(s) held since the start (the route was gone) run now, ahead of the route's first event since — the route no longer coalesces; each runs as the agent run its events were accepted for`,
      );
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
