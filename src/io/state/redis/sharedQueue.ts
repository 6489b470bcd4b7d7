import { randomUUID } from "node:crypto";
import { DelayedError, type Job, Queue, type Worker } from "bullmq";
import { Redis } from "ioredis";
import { scopedSignal } from "../../../clock.js";
import type { Logger } from "../../log.js";
import { shellWord } from "../../shellWord.js";
import { isRefusal, optionsForUrl, queueOptions, type RedisHealth } from "./connection.js";
import { FinishWatchedWorker } from "./finishWatchedWorker.js";
import { jobIdOf, keyOfJobId } from "./jobIds.js";
import type { RedisKeys } from "./keys.js";
import { refusalBackoff } from "./refusalBackoff.js";

export { jobIdOf };

/** How long a finished job (and so its id) is kept: an enqueue of the same id meanwhile is a no-op. */
export const FINISHED_JOB_TTL_SECONDS = 3600;
/** A producer call that has not answered by then counts as Redis unreachable (answered 503). */
const ENQUEUE_TIMEOUT_MS = 3000;

/** How soon another instance takes over a job whose instance died (BullMQ stall detection). */
export interface StallSettings {
  /** The job lock an instance renews while it runs a job (BullMQ default 30 s). */
  readonly lockDurationMs?: number;
  /** How often each worker looks for jobs whose lock expired (BullMQ default 30 s). */
  readonly stalledIntervalMs?: number;
  /**
   * How long an idle worker waits for word of a job before it looks by itself (BullMQ's `drainDelay`,
   * default 5 s; tests lengthen it to see that a job is found through that word).
   */
  readonly idleWaitSeconds?: number;
  /** How long a job put off (`RunLater`) waits in Redis before a worker looks at it again (default 60 s). */
  readonly laterMs?: number;
  /**
   * How many times a job is taken over from a lost instance before it is given up (default 2: given up at
   * its third loss); tests give up at the first.
   */
  readonly maxStalledCount?: number;
}

/** How many times a job is taken over from a lost instance before it is given up, by default. */
export const MAX_STALLED_COUNT = 2;

/** How long a job put off waits by default before a worker looks at it again. */
export const RUN_LATER_MS = 60_000;

/**
 * Thrown by `process` for a job that cannot run yet (its route is not served here now): the job goes back
 * to Redis, delayed by `StallSettings.laterMs`, neither finished nor failed, and any instance looks at it
 * again then. Nothing accepted is dropped for want of its route.
 */
export class RunLater extends Error {
  override readonly name = "RunLater";
}

/**
 * Thrown by `process` for a job this instance gives up as it stops (its agent ended by the stop's own signal):
 * the instance takes no further job (its stop is under way, its worker would otherwise take this one again
 * before the stop pauses it) and the job goes back to Redis at once, neither finished nor failed, for any
 * instance to run (this one after its restart).
 */
export class RunAfterStop extends Error {
  override readonly name = "RunAfterStop";
}

export interface SharedQueueOptions<T> {
  readonly url: string;
  /** BullMQ queue name (no `:`). */
  readonly name: string;
  readonly keys: RedisKeys;
  readonly health: RedisHealth;
  readonly logger: Logger;
  /** Jobs this instance runs at once. */
  readonly concurrency: number;
  /** Runs one job; rejecting marks it failed (not retried). */
  process(
    data: T,
    signal: AbortSignal,
    job: Job<T>,
    token: string | undefined,
    slot: QueueSlot<T>,
  ): Promise<void>;
  /**
   * Jobs whose `process` may go on outside the worker's slots at once (`QueueSlot.release`); past it a
   * release keeps its slot, and `onOutsideCap` is told the first time.
   */
  readonly outsideCap?: number;
  onOutsideCap?(cap: number): void;
  readonly stall?: StallSettings;
  /**
   * A job whose `process` rejects is tried again, up to `attempts` in all, after `backoffMs` doubling
   * each time (default: one attempt, the failure is the job's outcome).
   */
  readonly retry?: { readonly attempts: number; readonly backoffMs: number };
  /** What a job is in the log, with its count (default: `<name> job(s)`). */
  readonly noun?: string;
  /**
   * A job given up without `process` running it: taken over from lost instances (killed, frozen past their
   * lock, stopped past their drain) `maxStalledCount` times and lost once more, BullMQ fails it as the next
   * worker takes it (`reason`: "job stalled more than allowable limit"; `losses`: how many times it was
   * lost). Told only on the instance whose worker failed it (one takes a job from Redis; the event follows
   * the failure's write there), in place of the `job failed` line. Without it, that line.
   */
  givenUp?(data: T, reason: string, losses: number): void;
  /**
   * A job whose `process` ended here, whose end Redis did not record (`err`): its lock had expired first
   * (Redis frozen or paused past it) or another instance had taken it over, so the shared queue runs it
   * again on some instance (this one included) — unless the job itself is gone (`Missing key for job …`:
   * Redis restarted empty, flushed or evicted it; also told for a job released from its slot whose `done`
   * mark finds it gone). `refused`: a refusal of a write (full: `OOM …`) the worker got while the job ran —
   * its lock's renewal is such a write, so a Redis refusing writes past the lock lets the lock expire. Without
   * it, a WARN naming the job.
   */
  notRecorded?(data: T, err: string, refused?: string): void;
  /**
   * What a released job's data becomes as this instance's stop hands it on (at once) with what it goes on with
   * due at some time (`QueueSlot.release`'s `dueAt`): `redisAhead` is how far Redis's clock is ahead of this
   * instance's (ms; behind when negative), so the data can say when that is due on Redis's clock, for the
   * instance that takes it to wait out the rest, reading that time on its own clock
   * (`QueueSlot.fromRedisClock`). Without it, the job goes on with its data as it is.
   */
  handedOn?(data: T, redisAhead: number): T;
  /**
   * Told when this instance's counts change (`running`, `outside`: a job started, finished or moved out of
   * its slot) and when its enqueue stored a job (one more waiting): `--inspect` reads the counts again then.
   */
  changed?(): void;
}

/**
 * The worker slot a job's `process` holds. `release(kept, done, dueAt)` hands it back while `process` goes on
 * (a delivery waiting to retry): the job's data becomes `kept` and the job is moved to the delayed set for a
 * lease this instance renews while `process` runs (`StallSettings.lockDurationMs`, on Redis's clock or this
 * instance's, whichever reads later), so the worker takes its next job at once and an instance that dies
 * meanwhile leaves the job to another one once the lease is over (which runs it with `kept`); no
 * instance's worker runs it meanwhile (a held mark in Redis renewed with the lease: a worker whose clock found
 * the lease over, or that took it from the wait list such a worker moved it to, gives it back unrun). When `process` ends, the
 * job's data becomes `done` and the job is let run at once: `process` must finish a `done` job without doing
 * anything. Called again once released, it
 * stores the new `kept` (the next retry). `dueAt` (epoch ms): when `kept` is to go on; a stop that cuts
 * `process` short lets the job run at once for another instance, whose `process` waits until then (its data
 * made by `SharedQueueOptions.handedOn`, which names that time on Redis's clock), so the job holds its place
 * meanwhile (a delivery, its recipient's turn) rather than waiting in Redis where no instance sees it. Resolves
 * false (the slot kept) at `outsideCap` or when Redis did not take the writes.
 */
export interface QueueSlot<T> {
  release(kept: T, done: T, dueAt?: number): Promise<boolean>;
  /**
   * A time on Redis's clock (epoch ms: a due time a hand-on named, `SharedQueueOptions.handedOn`) as this
   * instance's clock reads it. Rejects when Redis does not answer within 3 s.
   */
  fromRedisClock(at: number): Promise<number>;
  /**
   * Told the job's place in this instance's order of deliveries joining their recipients' lines (increasing:
   * `SendOptions.inLine`): a stop hands its released jobs on in that order, so the instance that takes them
   * queues them to a recipient in the order this one did.
   */
  inLine(turn: number): void;
  /**
   * Stores `kept` as the job's data, as `release` does once released, but neither hands the slot back nor
   * takes it: released or not, an instance that takes the job over goes on with it. Never rejects.
   */
  store(kept: T, done: T, dueAt?: number): Promise<void>;
  /**
   * Once `process` has ended and Redis recorded the job finished, the job is removed with its add mark and
   * `record` (the idempotency record of its key) in one command, so the key is free at once for another
   * instance too: the next record and enqueue under it store a new job, which runs. Until then the key is
   * kept as any finished job's is. Not done when the job's end was not recorded (it runs again somewhere).
   */
  forgetWhenFinished(record: string): void;
  /**
   * Once `process` has ended and Redis recorded the job finished, the job is removed with its add mark, as
   * `forgetWhenFinished` does, the key's idempotency record left as it is: a job whose hash was gone from
   * Redis (evicted), taken with only its id left, is not kept finished without its settings.
   */
  removeWhenFinished(): void;
}

/** What a released job goes on with: its data once `process` ends, and when what it goes on with is due. */
interface Held<T> {
  done: T;
  dueAt: number | undefined;
  /** Its place in the order of deliveries joining their recipients' lines here (`QueueSlot.inLine`). */
  turn: number | undefined;
}

/** How many jobs may go on outside the worker's slots by default (as `RETRYING_DELIVERY_CAP`). */
const OUTSIDE_CAP = 1000;
/** The lock an instance renews while it runs a job, by default (BullMQ's lock duration). */
export const LOCK_MS = 30_000;
/**
 * How often the locks of the jobs an instance runs are renewed at most (or every quarter lock, when that is
 * sooner). A lock keeps counting down on Redis's side while Redis is frozen or away; renewed only every
 * quarter lock (7.5 s), one had 22.5 s left when an outage began, and a 25 s freeze ran the job twice. One
 * script a round renews them all.
 */
const LOCK_RENEW_MAX_MS = 2000;
/** The lease of a job that goes on outside its slot, by default (BullMQ's lock duration). */
const LEASE_MS = LOCK_MS;
/** How often a released job's `done` mark Redis did not take is written again: at most, and at least six times a lease. */
const MARK_RETRY_MS = 5000;
/** A job whose hash is gone from Redis (BullMQ's `Missing key for job …`): restarted empty, flushed or evicted. */
const JOB_GONE = /^Missing key for job /;
/** A promote of a job no longer delayed (its lease ran out and a worker moved it on). */
const NOT_DELAYED = /is not in the delayed state/;

/** How an enqueue treats a finished job already stored under its key. */
export interface EnqueueOptions {
  /** Delay before the job may run. */
  readonly delayMs?: number;
  /**
   * A finished (or failed) job under the key that was added longer ago than this is replaced by the new
   * one, so it runs: the key is a delivery id whose hour is over (a sender's redelivery under the same id,
   * as GitHub's Redeliver sends it), not a retry of the stored one. Without it, any stored job is kept.
   * The age is measured on Redis's clock (a key that expires this long after the add), so instances whose
   * clocks disagree judge it alike.
   */
  readonly renewAfterMs?: number;
  /**
   * With `renewAfterMs`: what it sends before the add was already done by `recordAndClear` as the key's
   * idempotency record was made (that moment on, nothing else adds under the key), so nothing is sent.
   */
  readonly cleared?: boolean;
}

/**
 * What an add with `renewAfterMs` does first, over the keys and arguments from `k` and `a` on: removes the
 * job KEYS[k+1] when it is finished (completed or failed) and its add mark KEYS[k+5] (set with the add,
 * expiring ARGV[a+1] ms later on Redis's clock) is gone: out of the completed and failed sets (KEYS[k+2],
 * KEYS[k+3]) with its logs (KEYS[k+4]), so an add of the same id ARGV[a+2] right behind it stores a new job.
 * A waiting, delayed or running job, or a finished one still marked, is left as it is (the add is then a
 * no-op: the fragment returns `kept`); when the add will store a job, it is marked.
 */
function dropFinishedLua(k: number, a: number, kept: string): string {
  return `
local f = redis.call('HMGET', KEYS[${k + 1}], 'finishedOn', 'timestamp')
if f[2] then
  if not f[1] or redis.call('EXISTS', KEYS[${k + 5}]) == 1 then return ${kept} end
  redis.call('ZREM', KEYS[${k + 2}], ARGV[${a + 2}])
  redis.call('ZREM', KEYS[${k + 3}], ARGV[${a + 2}])
  redis.call('DEL', KEYS[${k + 1}], KEYS[${k + 4}])
end
redis.call('SET', KEYS[${k + 5}], '1', 'PX', ARGV[${a + 1}])
`;
}

/** Sent on the producer's connection right before an add with `renewAfterMs` (ARGV[1]; ARGV[2] the job id). */
const DROP_FINISHED_SCRIPT = `${dropFinishedLua(0, 0, "0")}return 1\n`;

/**
 * A delivery id's idempotency record (KEYS[1], SET NX with the token ARGV[1], expiring in ARGV[2] s) and,
 * when it was made, what an add with `renewAfterMs` does first (KEYS[2..6], ARGV[3..4]), in one command:
 * the record is made before any add under the id, so its add needs no drop of its own. Returns 'OK' when
 * the record was made, nil when one was there (a duplicate: nothing else done).
 */
const RECORD_DROP_FINISHED_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then return false end
${dropFinishedLua(1, 2, "'OK'")}return 'OK'
`;

/**
 * A finished job (KEYS[1], ARGV[1] its id) removed out of turn with what keeps its key taken: out of the
 * completed and failed sets (KEYS[2], KEYS[3]), with its logs (KEYS[4]), its add mark (KEYS[5]) and the
 * idempotency record of its key (KEYS[6]). A job not finished (run again meanwhile, its end not recorded)
 * is left as it is: returns 0.
 */
const FORGET_FINISHED_SCRIPT = `
if not redis.call('HGET', KEYS[1], 'finishedOn') then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[1], KEYS[4], KEYS[5], KEYS[6])
return 1
`;

/**
 * A delayed job (ARGV[1], in the delayed set KEYS[1]) set to be due ARGV[2] ms from now on Redis's clock or
 * on the clock of the instance that sets it (ARGV[3], its time in epoch ms), whichever reads later: the lease
 * of a job released from its slot, as it is renewed (`leaseEndsAt` as it is set). On Redis's clock, so an
 * instance whose clock runs behind does not have the others find it over at once; on the instance's own
 * when that runs ahead, as its own worker judges a delayed job due on its own clock (BullMQ's), and would
 * otherwise take back the job it holds. The score is BullMQ's
 * (the due time in ms, times 0x1000), and the queue's marker KEYS[2] is set to the first due time, as BullMQ
 * sets it when it delays a job, so a worker waiting for one wakes then. The job's held mark KEYS[3] (that
 * the instance ARGV[4] holds it outside its slot) is set to expire ARGV[2] ms from now on Redis's clock,
 * first of all, unless another instance holds the job now (it took the job over and released it in its turn):
 * it stands while the job is not delayed too (moved to the wait list by a worker whose clock found the lease
 * over), so any worker that takes it gives it back. A job no longer delayed (taken meanwhile) is otherwise
 * left as it is: returns 0.
 */
const LEASE_SCRIPT = `
local h = redis.call('GET', KEYS[3])
if not h or h == ARGV[4] then redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2]) end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
local now = math.max(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(ARGV[3]))
redis.call('ZADD', KEYS[1], (now + tonumber(ARGV[2])) * 0x1000, ARGV[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then redis.call('ZADD', KEYS[2], math.floor(tonumber(first[2]) / 0x1000), '1') end
return 1
`;

/**
 * What a worker that took a job (its hash KEYS[2]) learns of its held mark KEYS[1]: `{ms, now}` while an
 * instance holds it outside its slot (`ms`: what is left of that instance's lease; `now`: Redis's time in
 * epoch ms), else `{0, now, data}` with the job's data as Redis has it now: the holder writes its `done`
 * mark before it lets the job go, so a worker that took the job just before reads what it is to run.
 */
const HELD_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = redis.call('PTTL', KEYS[1])
if ms > 0 then return {ms, now} end
return {0, now, redis.call('HGET', KEYS[2], 'data')}
`;

/** The held mark KEYS[1] removed when this instance (ARGV[1]) set it: its job is let go. */
const LET_GO_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

/** What the drop of a finished job reads and clears: the job, its queue's finished sets, its logs, its `added` mark. */
type FinishedKeys = readonly [job: string, completed: string, failed: string, logs: string, added: string];

type DropRedis = Redis & {
  svcDropFinished(...args: [...FinishedKeys, renewAfterMs: number, jobId: string]): Promise<number>;
  svcForgetFinished(...args: [...FinishedKeys, record: string, jobId: string]): Promise<number>;
  svcLease(
    delayed: string,
    marker: string,
    held: string,
    jobId: string,
    ms: number,
    instanceNow: number,
    instance: string,
  ): Promise<number>;
  svcHeld(held: string, job: string): Promise<[number, number, string | null | undefined]>;
  svcLetGo(held: string, instance: string): Promise<number>;
};

type RecordDropRedis = Redis & {
  svcRecordDropFinished(
    ...args: [
      record: string,
      ...FinishedKeys,
      token: string,
      seconds: number,
      renewAfterMs: number,
      jobId: string,
    ]
  ): Promise<string | null>;
};

/**
 * Makes the idempotency record `record` of `key` (SET NX, `seconds`, the request's `token`) and, when it
 * was made, clears the way for the add of `key` with `renewAfterMs` (as `enqueue` would) in the same
 * command; resolves "OK" when the record was made, null for a duplicate.
 */
export type RecordAndClear = (
  record: string,
  key: string,
  token: string,
  seconds: number,
  renewAfterMs: number,
) => Promise<string | null>;

/**
 * A BullMQ queue every instance enqueues to and works off. A job id is derived from the caller's key,
 * so enqueueing the same key twice (a retried dispatch, a second instance) adds one job; finished jobs
 * are kept an hour for that reason and are never run again.
 */
export interface SharedQueue<T> {
  /** Persists the job in Redis; resolves once it is stored (rejects while Redis is unreachable). */
  enqueue(key: string, data: T, options?: EnqueueOptions): Promise<void>;
  /**
   * The idempotency record of a key with what `enqueue` with `renewAfterMs` sends before its add, as one
   * command on `client` (the connection the records are made on): an enqueue of the key after it passes
   * `cleared` and sends nothing before its add.
   */
  recordAndClear(client: Redis): RecordAndClear;
  /**
   * Lets the delayed job of `key` run now. BullMQ times a delay on the clock of the instance that stored
   * it and runs it once a worker's clock reaches that time: after a clock set back (NTP), not until the
   * clock has come round to it again.
   */
  promote(key: string): Promise<void>;
  /** Whether a job of `key` is stored (waiting, running, or finished within its hour). */
  stored(key: string): Promise<boolean>;
  /** Starts this instance's worker. */
  start(): void;
  /**
   * Stops taking jobs and waits up to `drainMs` for the running ones; past it they are aborted and left
   * locked, and another instance takes them over once the lock expires.
   */
  close(drainMs: number): Promise<void>;
  /** Jobs this instance is running now in its worker's slots. */
  running(): number;
  /** Jobs this instance goes on with outside its worker's slots (`QueueSlot.release`). */
  outside(): number;
  /**
   * Jobs waiting in Redis for a worker of any instance; rejects when Redis does not answer within
   * `timeoutMs` (an outage: commands wait for the reconnect).
   */
  waiting(timeoutMs: number): Promise<number>;
  /** The BullMQ queue (tests, counts). */
  readonly queue: Queue<T>;
}

/**
 * How long a stop waits for BullMQ's closing (past the drain): Redis going away mid-close leaves it
 * waiting for an answer that does not come, and the stop goes on without it.
 */
const CLOSE_WAIT_MS = 5000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer from Redis in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

export function createSharedQueue<T>(options: SharedQueueOptions<T>): SharedQueue<T> {
  const { keys, health, logger } = options;
  const prefix = keys.bullPrefix();
  const queueKey = `${prefix}:${options.name}`;
  const finishedKeys = (key: string): FinishedKeys => {
    const job = `${queueKey}:${jobIdOf(key)}`;
    return [job, `${queueKey}:completed`, `${queueKey}:failed`, `${job}:logs`, keys.added(key)];
  };
  const producer = new Redis<"legacy">(options.url, optionsForUrl(options.url, queueOptions("producer")));
  producer.defineCommand("svcDropFinished", { numberOfKeys: 5, lua: DROP_FINISHED_SCRIPT });
  producer.defineCommand("svcForgetFinished", { numberOfKeys: 6, lua: FORGET_FINISHED_SCRIPT });
  producer.defineCommand("svcLease", { numberOfKeys: 3, lua: LEASE_SCRIPT });
  producer.defineCommand("svcHeld", { numberOfKeys: 2, lua: HELD_SCRIPT });
  producer.defineCommand("svcLetGo", { numberOfKeys: 1, lua: LET_GO_SCRIPT });
  health.watch(`${options.name} producer`, producer);
  const queue = new Queue<T>(options.name, { connection: producer, prefix });
  // The connections' own events report an outage (once); BullMQ repeats them per call.
  queue.on("error", (err: Error) =>
    logger.debug({ queue: options.name, err: err.message }, "[state] queue error"),
  );
  /** A bound of the stop reached (or a close that failed): the stop goes on, and the debug log says so. */
  const wentOn = (err: unknown) =>
    logger.debug(
      { queue: options.name, err: String(err) },
      `[state] ${options.name} queue: a close did not end; the stop goes on without it`,
    );
  /** This instance, as its held marks name it. */
  const instance = randomUUID();
  const heldKey = (id: string) => keys.held(options.name, id);
  /**
   * The delayed job `id` due `ms` from now on Redis's clock or this instance's, whichever reads later
   * (`LEASE_SCRIPT`): false when it is no longer delayed. A worker takes a delayed job once its own clock
   * reaches its due time: a lease timed on the clock of an instance running behind was over at once for the
   * others (which took the job over while its delivery still waited to retry here), and one timed on Redis's
   * clock alone was over at once for this instance's own worker when its clock ran ahead by more than the
   * lease (which took the job back, released it again and delivered the reply once a copy, up to the cap).
   * Its held mark is renewed with it (on Redis's clock), delayed or not.
   */
  const renewLease = async (id: string, ms: number): Promise<boolean> =>
    (await (producer as DropRedis).svcLease(
      queue.keys.delayed as string,
      queue.keys.marker as string,
      heldKey(id),
      id,
      Math.max(0, Math.round(ms)),
      Date.now(),
      instance,
    )) === 1;
  /**
   * The held mark of the job `id` removed, when this instance set it (another that took the job over and
   * released it in its turn holds it now): a worker that takes the job from here on runs it. Never rejects: a
   * mark left expires with its lease, no longer renewed.
   */
  const letGo = (id: string | undefined): Promise<void> =>
    id === undefined
      ? Promise.resolve()
      : (producer as DropRedis).svcLetGo(heldKey(id), instance).then(
          () => {},
          (err: unknown) =>
            logger.debug({ queue: options.name, job: id, err: String(err) }, "[state] held mark not removed"),
        );
  /**
   * How long an instance (this one included) still holds the job a worker took outside its slot (ms, its
   * lease's rest) and when that ends on this instance's clock, or undefined when none does: then the job's
   * data is set to what Redis holds now (what its holder left it with, `done` once its delivery ended). A job
   * taken for the first time is held by none (a job is held once a worker took it and released it). Undefined
   * when Redis does not answer too: the job runs, as it did before any instance looked.
   */
  const heldElsewhere = async (job: Job<T>): Promise<number | undefined> => {
    if (job.id === undefined || job.attemptsStarted < 2) return undefined;
    try {
      const [ms, now, data] = await (producer as DropRedis).svcHeld(heldKey(job.id), `${queueKey}:${job.id}`);
      // A time certainly in the future on this instance's clock, as `leaseEndsAt`'s.
      if (ms > 0) return Date.now() + Math.max(0, now - Date.now()) + ms;
      if (typeof data === "string") job.data = JSON.parse(data) as T;
    } catch (err) {
      logger.debug({ queue: options.name, job: job.id, err: String(err) }, "[state] held mark not read");
    }
    return undefined;
  };
  /** How far Redis's clock is ahead of this instance's (ms; behind when negative). */
  const redisAhead = async (): Promise<number> => {
    const [seconds, micros] = await producer.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - Date.now();
  };
  /**
   * When a lease set now ends, on this instance's clock (what `moveToDelayed` takes): `leaseMs` from now on
   * Redis's clock or this one, whichever reads later, as `renewLease` sets it. Never due at once for this
   * instance's worker, nor for an instance whose clock is right.
   */
  const leaseEndsAt = async (): Promise<number> => {
    const ahead = await redisAhead();
    return Date.now() + Math.max(0, ahead) + leaseMs;
  };
  const abort = new AbortController();
  let worker: Worker<T> | undefined;
  // BullMQ leaves connections it was given open: they are closed here.
  let workerConnection: Redis | undefined;
  /** The worker's blocking connection (BullMQ's own, which waits for jobs). */
  let blocking: Awaited<Worker<T>["backend"]["blockingClient"]>;
  /** Jobs this instance is running, and who waits for there to be none (the drain). */
  let running = 0;
  /** Jobs released from their slots whose `process` goes on (the drain waits for them too). */
  let outside = 0;
  let capSaid = false;
  const outsideCap = options.outsideCap ?? OUTSIDE_CAP;
  const leaseMs = options.stall?.lockDurationMs ?? LEASE_MS;
  /**
   * Released jobs whose `process` ended here and whose `done` mark Redis has not taken yet (refused: full,
   * read-only; or unanswered: the connection lost), each with what writes it again now and what gives it up
   * (this instance's stop). The mark is written again every MARK_RETRY_MS and when the worker's connection
   * is ready again, and the job's lease renewed meanwhile, so the stored reply is not delivered a second time
   * by whichever instance would take the job once its lease is over.
   */
  const unmarked = new Map<Job<T>, { readonly write: () => void; readonly giveUp: () => void }>();
  const idle: Array<() => void> = [];
  const wakeIfIdle = () => {
    if (running === 0 && outside === 0 && unmarked.size === 0) for (const wake of idle.splice(0)) wake();
  };
  /**
   * Jobs to be removed once they are recorded finished: with their key's record (`QueueSlot.forgetWhenFinished`),
   * or `null`, without (`QueueSlot.removeWhenFinished`).
   */
  const forgetting = new WeakMap<Job<T>, string | null>();
  const forgetFinished = (job: Job<T>) => {
    const record = forgetting.get(job);
    if (record === undefined || job.id === undefined) return;
    forgetting.delete(job);
    const key = keyOfJobId(job.id);
    const finished = finishedKeys(key);
    // Without a record, the job's own key stands in for it (deleted with the job anyway).
    (producer as DropRedis).svcForgetFinished(...finished, record ?? finished[0], job.id).then(
      (removed) => {
        if (removed === 0)
          logger.debug({ queue: options.name, job: job.id }, "[state] job not finished: its key is kept");
      },
      (err: unknown) => {
        // Removed with the finished jobs past their hour as later jobs finish.
        if (record === null) {
          logger.debug({ queue: options.name, job: job.id, err: String(err) }, "[state] job not removed");
          return;
        }
        const deliveryId = key.slice(key.indexOf(":") + 1);
        logger.warn(
          { queue: options.name, job: job.id, err: String(err) },
          `[state] ${options.name} job ${job.id}: its delivery ID could not be forgotten in Redis (${String(err)}), so the sender's retry of it within the hour is answered duplicate — svc webhook redeliver ${shellWord(deliveryId)} on the instance that answered its request sends the event again`,
        );
      },
    );
  };
  /** The ends of released jobs still under way (a stop past its drain waits for them). */
  const ending = new Set<Promise<void>>();
  /**
   * Released jobs this instance's stop cut short: let run for another instance as the stop ends, at once, told
   * when what they go on with is due (`handedOn`).
   */
  const handOn: Array<{
    readonly id: string | undefined;
    readonly dueAt: number | undefined;
    readonly turn: number | undefined;
  }> = [];
  /** The job's `done` mark written, then the job let run (any worker finishes it); resolves once settled. */
  const markDone = (job: Job<T>, done: T, renew: NodeJS.Timeout) =>
    new Promise<void>((resolve) => {
      // What it went on with: `updateData` sets the job's data before Redis has taken it.
      const ran = job.data;
      let writing = false;
      let retry: NodeJS.Timeout | undefined;
      const settle = () => {
        clearInterval(renew);
        clearInterval(retry);
        unmarked.delete(job);
        resolve();
      };
      const write = async () => {
        if (writing || !unmarked.has(job)) return;
        writing = true;
        try {
          await job.updateData(done);
          // Whoever takes it now only finishes it: no longer held (its lease and mark no longer renewed, the
          // mark removed after any renewal sent before on the same connection), so a worker runs it.
          clearInterval(renew);
          await letGo(job.id);
          // A lease that ran out meanwhile let a worker move the job on already: with `done`, it only finishes it.
          await job.promote().catch((err: unknown) => {
            if (!NOT_DELAYED.test(String(err))) throw err;
          });
          settle();
        } catch (err) {
          // Given up meanwhile (this instance's stop), which said so.
          if (!unmarked.has(job)) return;
          const message = err instanceof Error ? err.message : String(err);
          if (!JOB_GONE.test(message)) {
            logger.debug(
              { queue: options.name, job: job.id, err: message },
              "[state] done mark not written; written again",
            );
            return;
          }
          // Restarted empty, flushed or evicted: no instance takes the job, nor runs it again.
          settle();
          if (options.notRecorded !== undefined) options.notRecorded(ran, message);
          else
            logger.warn(
              { queue: options.name, job: job.id, err: message },
              `[state] ${options.name} job ${job.id}: its end was not recorded in Redis (${message}): its job is gone from Redis (restarted empty, flushed or evicted), so it does not run again`,
            );
        } finally {
          writing = false;
        }
      };
      const giveUp = () => {
        settle();
        logger.warn(
          { queue: options.name, job: job.id },
          `[state] ${options.name} job ${job.id}: its end was not recorded in Redis (it refused the write or did not answer until this instance stopped) — it runs again once its lease is over`,
        );
      };
      unmarked.set(job, { write: () => void write(), giveUp });
      retry = setInterval(() => void write(), Math.min(MARK_RETRY_MS, leaseMs / 6));
      void write();
    });
  /**
   * A released job's `process` goes on here: its lease is renewed until it ends and Redis has taken its
   * `done` mark; then the job is let run (any worker finishes it), or, when this instance's stop cut it short,
   * let run for another instance once the worker is closed (a killed instance's lease runs out instead).
   */
  const goOnOutside = (job: Job<T>, work: Promise<void>, held: Held<T>) => {
    const renew = setInterval(() => {
      const id = job.id;
      if (id === undefined) return;
      renewLease(id, leaseMs).then(
        (renewed) => {
          if (!renewed)
            logger.debug({ queue: options.name, job: id }, "[state] lease not renewed: not delayed");
        },
        (err: unknown) =>
          logger.debug({ queue: options.name, job: id, err: String(err) }, "[state] lease not renewed"),
      );
    }, leaseMs / 3);
    const end = (finished: boolean) => {
      outside -= 1;
      options.changed?.();
      if (finished) return markDone(job, held.done, renew);
      clearInterval(renew);
      // Cut short by this instance's stop: handed on once its worker is closed (which might take it again),
      // its held mark removed then.
      handOn.push({ id: job.id, dueAt: held.dueAt, turn: held.turn });
      return Promise.resolve();
    };
    const ended = work
      .then(
        () => end(true),
        (err: unknown) => {
          if (!abort.signal.aborted)
            logger.error(
              { queue: options.name, job: job.id, err: String(err) },
              `[state] ${options.name} job failed`,
            );
          return end(!abort.signal.aborted);
        },
      )
      .finally(wakeIfIdle);
    ending.add(ended);
    void ended.finally(() => ending.delete(ended));
  };
  /**
   * This instance stops (`close`, or a job given back with `RunAfterStop`): its worker is paused, but a fetch
   * already under way may still take a job (right after the worker started, or that one again, back in Redis
   * at once); any such job is given back unrun, for another instance (this one after its restart).
   */
  let givingBack = false;
  /**
   * The last command of the worker's that Redis refused (full, read-only, an ACL), with when (epoch ms, as a
   * job's `processedOn`): BullMQ renews a running job's lock with a script whose first write Redis refuses
   * when full, and says so only by such an error.
   */
  let lastRefusal: { readonly at: number; readonly reason: string } | undefined;
  /**
   * The locks of the jobs this instance's worker runs, job id by token (a job taken over by this same worker
   * while its first copy still ran has a token of its own): renewed on a timer of svc's own, which follows
   * the clock that is never set. BullMQ's own renewal (off: `lockRenewTime: -1`) renews a lock only once
   * the system clock says enough time has passed since its last renewal: after the clock was set back, none
   * until the clock had come round again, so the lock expired under runs still going on and the stall check
   * ran them again; and it tracks a job by its id alone, so the end of that first copy stopped the renewal
   * of the copy taken over.
   */
  const locks = new Map<string, string>();
  let renewingLocks: NodeJS.Timeout | undefined;
  let lockRenewal: Promise<void> | undefined;
  const renewLocks = (on: Worker<T>, lockMs: number) => {
    if (lockRenewal !== undefined || locks.size === 0) return;
    const tokens = [...locks.keys()];
    const ids = tokens.map((token) => locks.get(token) as string);
    // What BullMQ's renewal would have said: a lock lost, or a refusal (full: the renewal is a write).
    lockRenewal = on
      .extendJobLocks(ids, tokens, lockMs)
      .then(
        (lost) => {
          for (const id of lost) on.emit("error", new Error(`could not renew lock for job ${id}`));
        },
        (err: unknown) => {
          on.emit("error", err instanceof Error ? err : new Error(String(err)));
        },
      )
      .finally(() => {
        lockRenewal = undefined;
      });
  };

  return {
    queue,
    running: () => running,
    outside: () => outside,
    waiting: (timeoutMs) => withTimeout(queue.getWaitingCount(), timeoutMs, "count"),
    stored: async (key) => (await producer.exists(`${prefix}:${options.name}:${jobIdOf(key)}`)) > 0,
    async promote(key) {
      const job = await withTimeout(queue.getJob(jobIdOf(key)), ENQUEUE_TIMEOUT_MS, "promote");
      if (job !== undefined && (await job.isDelayed())) await job.promote();
    },
    recordAndClear(client) {
      if (!("svcRecordDropFinished" in client))
        client.defineCommand("svcRecordDropFinished", { numberOfKeys: 6, lua: RECORD_DROP_FINISHED_SCRIPT });
      return (record, key, token, seconds, renewAfterMs) =>
        (client as RecordDropRedis).svcRecordDropFinished(
          record,
          ...finishedKeys(key),
          token,
          seconds,
          renewAfterMs,
          jobIdOf(key),
        );
    },
    async enqueue(key, data, { delayMs, renewAfterMs, cleared } = {}) {
      const jobId = jobIdOf(key);
      try {
        if (renewAfterMs !== undefined && cleared !== true) {
          // Sent first on the producer's connection, so Redis runs it before the add below (no extra wait);
          // a failure here fails the add too, which answers for both. Before the connection is ready (the
          // first enqueue of a start, a reconnect) it would fail unsent and leave the job unmarked: it then
          // waits for the connection, as the add does.
          const drop = () =>
            (producer as DropRedis).svcDropFinished(...finishedKeys(key), renewAfterMs, jobId);
          if (producer.status === "ready") drop().catch(() => {});
          else await withTimeout(queue.waitUntilReady().then(drop), ENQUEUE_TIMEOUT_MS, "enqueue");
        }
        await withTimeout(
          // BullMQ's own job types are generic over name and data; the cast keeps ours.
          (queue as unknown as Queue).add(options.name, data, {
            jobId,
            removeOnComplete: { age: FINISHED_JOB_TTL_SECONDS },
            removeOnFail: { age: 24 * FINISHED_JOB_TTL_SECONDS },
            attempts: options.retry?.attempts ?? 1,
            ...(options.retry === undefined
              ? {}
              : { backoff: { type: "exponential", delay: options.retry.backoffMs } }),
            ...(delayMs === undefined ? {} : { delay: Math.max(0, delayMs) }),
          }),
          ENQUEUE_TIMEOUT_MS,
          "enqueue",
        );
      } catch (err) {
        health.fail(err);
      }
      health.taken();
      options.changed?.();
    },
    start() {
      if (worker !== undefined) return;
      workerConnection = new Redis<"legacy">(options.url, optionsForUrl(options.url, queueOptions("worker")));
      health.watch(`${options.name} worker`, workerConnection);
      // Its connection back (a brief loss): the `done` marks it could not write are written at once.
      workerConnection.on("ready", () => {
        for (const { write } of unmarked.values()) write();
      });
      worker = new FinishWatchedWorker<T>(
        options.name,
        // Two parameters: BullMQ then makes no AbortController per job (its signal is only for
        // `cancelJob`, which svc never calls); every run gets a signal that follows this instance's stop, as in memory.
        async (job, token) => {
          // First: a stop's give-back (below) would make it due at once, not under its holder's lease.
          const heldUntil = await heldElsewhere(job);
          if (heldUntil !== undefined) {
            // Its delivery goes on outside its slot on an instance (this one or another), found due by a worker
            // whose clock read its lease over (stepped forward past it, or moved to the wait list by such a
            // worker, where any instance takes it): given back unrun for the rest of the lease, which its
            // holder renews, not delivered a second time. Its holder killed, the lease runs out as before.
            logger.debug(
              { queue: options.name, job: job.id },
              "[state] a job an instance holds outside its slot was taken: given back unrun",
            );
            await job.moveToDelayed(heldUntil, token);
            // Its delivery ended meanwhile, its done mark written: let run for any worker to finish it (its
            // holder lets it run too once the mark is gone, should it have read it delayed only after).
            if ((await producer.exists(heldKey(job.id as string)).catch(() => 1)) === 0)
              await job
                .promote()
                .catch((err: unknown) =>
                  logger.debug({ queue: options.name, job: job.id, err: String(err) }, "[state] not let run"),
                );
            throw new DelayedError();
          }
          if (givingBack && !abort.signal.aborted) {
            await job.moveToDelayed(Date.now(), token);
            throw new DelayedError();
          }
          running += 1;
          options.changed?.();
          if (token !== undefined && job.id !== undefined) locks.set(token, job.id);
          let out = false;
          const held: Held<T> = { done: job.data, dueAt: undefined, turn: undefined };
          let released: () => void = () => {};
          const handedBack = new Promise<void>((resolve) => {
            released = resolve;
          });
          const slot: QueueSlot<T> = {
            async release(kept, done, dueAt) {
              if (abort.signal.aborted) return out;
              if (out) {
                // Its next retry: stored as the earlier one was, so a hand-on goes on from there.
                await slot.store(kept, done, dueAt);
                return true;
              }
              if (outside >= outsideCap) {
                if (!capSaid) options.onOutsideCap?.(outsideCap);
                capSaid = true;
                return false;
              }
              try {
                // Held here from before its move: a worker of any instance that took it gives it back unrun.
                if (job.id !== undefined)
                  await producer.set(heldKey(job.id), instance, "PX", Math.max(1, Math.round(leaseMs)));
                // Stored first: the job is delayed only once it holds what it goes on with. Its lease ends a
                // lease from now on Redis's clock or this instance's, whichever reads later (`leaseEndsAt`):
                // BullMQ delays it on this instance's clock, so the move is timed on the difference.
                await job.updateData(kept);
                await job.moveToDelayed(await leaseEndsAt(), token);
              } catch (err) {
                await letGo(job.id);
                logger.debug({ queue: options.name, job: job.id, err: String(err) }, "[state] slot kept");
                return false;
              }
              out = true;
              held.done = done;
              held.dueAt = dueAt;
              running -= 1;
              outside += 1;
              options.changed?.();
              released();
              return true;
            },
            async fromRedisClock(at) {
              return at - (await withTimeout(redisAhead(), ENQUEUE_TIMEOUT_MS, "time"));
            },
            inLine(turn) {
              held.turn = turn;
            },
            forgetWhenFinished(record) {
              forgetting.set(job, record);
            },
            removeWhenFinished() {
              forgetting.set(job, null);
            },
            async store(kept, done, dueAt) {
              if (abort.signal.aborted) return;
              await job.updateData(kept).then(
                // What a hand-on goes on with once released (before, the job ends as BullMQ ends it).
                () => Object.assign(held, { done, dueAt }),
                (err: unknown) =>
                  logger.debug(
                    { queue: options.name, job: job.id, err: String(err) },
                    "[state] retry not stored",
                  ),
              );
            },
          };
          let work: Promise<void> | undefined;
          try {
            // A signal of the job's own, so what a run composes from it leaves nothing in `abort.signal` (scopedSignal).
            work = scopedSignal([abort.signal], (signal) =>
              options.process(job.data, signal, job, token, slot),
            );
            await Promise.race([work, handedBack]);
            if (out) {
              // The slot is free: the worker takes its next job while this one goes on.
              goOnOutside(job, work, held);
              throw new DelayedError();
            }
          } catch (err) {
            if (out) throw err;
            if (err instanceof RunAfterStop && !abort.signal.aborted) {
              givingBack = true;
              await worker?.pause(true).catch(() => {});
              await job.moveToDelayed(Date.now(), token);
              throw new DelayedError();
            }
            if (err instanceof RunLater && !abort.signal.aborted) {
              await job.moveToDelayed(Date.now() + (options.stall?.laterMs ?? RUN_LATER_MS), token);
              throw new DelayedError();
            }
            // Aborted by this instance's stop: recorded neither finished nor failed, so the job's lock
            // expires and another instance (or this one after its restart) runs it again.
            if (abort.signal.aborted) await new Promise<never>(() => {});
            throw err;
          } finally {
            if (token !== undefined) locks.delete(token);
            if (!out) {
              running -= 1;
              options.changed?.();
              wakeIfIdle();
            }
          }
        },
        {
          connection: workerConnection,
          prefix,
          concurrency: Math.max(1, options.concurrency),
          // Renewed here instead (`locks`).
          lockRenewTime: -1,
          maxStalledCount: options.stall?.maxStalledCount ?? MAX_STALLED_COUNT,
          ...(options.stall?.lockDurationMs === undefined
            ? {}
            : { lockDuration: options.stall.lockDurationMs }),
          ...(options.stall?.stalledIntervalMs === undefined
            ? {}
            : { stalledInterval: options.stall.stalledIntervalMs }),
          ...(options.stall?.idleWaitSeconds === undefined
            ? {}
            : { drainDelay: options.stall.idleWaitSeconds }),
        },
        (job, err) => {
          const refused =
            lastRefusal !== undefined && lastRefusal.at >= (job.processedOn ?? 0)
              ? lastRefusal.reason
              : undefined;
          if (options.notRecorded !== undefined) options.notRecorded(job.data, err.message, refused);
          else
            logger.warn(
              { queue: options.name, job: job.id, err: err.message },
              `[state] ${options.name} job ${job.id}: its end was not recorded in Redis (${err.message}) — it runs again on some instance (this one included)`,
            );
        },
      );
      const started = worker;
      const lockMs = started.opts.lockDuration ?? LOCK_MS;
      renewingLocks = setInterval(() => renewLocks(started, lockMs), Math.min(lockMs / 4, LOCK_RENEW_MAX_MS));
      // Kept to be ended by the stop if it is waiting to reconnect (see close).
      started.backend.blockingClient?.then(
        (client) => {
          blocking = client;
        },
        () => {},
      );
      const backOff = refusalBackoff(started, () => worker === started);
      worker.on("error", (err: Error) => {
        // A refusal (an ACL without a command the worker needs, a full Redis) stops every run here while
        // requests may still be answered 202: said, not left at debug. Outages are the connections' to report.
        if (isRefusal(err)) {
          lastRefusal = { at: Date.now(), reason: err.message };
          health.refusedInBackground(`the ${options.name} queue's worker`, err);
          backOff();
        } else logger.debug({ queue: options.name, err: err.message }, "[state] worker error");
      });
      worker.on("completed", forgetFinished);
      worker.on("failed", (job, err) => {
        if (job === undefined || err.name === "DelayedError") return;
        if (job.deferredFailure !== undefined && options.givenUp !== undefined) {
          options.givenUp(job.data, job.deferredFailure, Math.max(1, job.stalledCounter));
          return;
        }
        const fields = { queue: options.name, job: job.id, err: err.message };
        if (job.attemptsMade < (job.opts.attempts ?? 1))
          logger.warn(fields, `[state] ${options.name} job failed; it is tried again`);
        else logger.error(fields, `[state] ${options.name} job failed`);
      });
    },
    async close(drainMs) {
      const stopping = worker;
      worker = undefined;
      if (stopping !== undefined) {
        // No new jobs from here; the running ones get the drain. (BullMQ's own close waits for them
        // without a bound, and once called, a forced close only waits on the same promise.) A job whose
        // fetch is under way is given back unrun: the stop's drain does not count it, and the gateway's run
        // slots may be stopping already (it would be left taken, unrun, until the stall check).
        givingBack = true;
        await stopping.pause(true).catch(() => {});
        let timer: NodeJS.Timeout | undefined;
        const drained =
          running + outside + unmarked.size === 0 ||
          (await new Promise<boolean>((resolve) => {
            idle.push(() => resolve(true));
            timer = setTimeout(() => resolve(false), drainMs);
          }));
        clearTimeout(timer);
        if (!drained) {
          // Nothing is saved to a file, as with one process: they stay in Redis, locked by this instance.
          if (running > 0)
            logger.warn(
              { queue: options.name, jobs: running },
              `[state] ${running} ${options.noun ?? `${options.name} job(s)`} still running when the drain ended stopped; they stay in Redis and run again from the start on some instance (this one after its restart) once their lock expires, within about a minute (at most a minute and a half)`,
            );
          // Released from their slots: what they go on with is stored with them, and they are handed on below.
          if (outside > 0)
            logger.warn(
              { queue: options.name, jobs: outside },
              `[state] ${outside} ${options.noun ?? `${options.name} job(s)`} whose delivery waited to retry stopped when the drain ended; their replies stay in Redis and are delivered by another instance (this one after its restart), without running their agent again`,
            );
          abort.abort();
          for (const { giveUp } of [...unmarked.values()]) giveUp();
          // A job released from its slot is handed on to another instance once its worker is closed (below).
          await withTimeout(Promise.all(ending), CLOSE_WAIT_MS, "hand on").catch(wentOn);
        }
        // Forced when runs were aborted: their jobs stay locked, unfinished, until the lock expires.
        // Forced while Redis is unreachable: an unforced close sends QUIT, which waits for Redis.
        // Otherwise not: a run counted as ended may still be recording its job as finished, and a
        // forced close would cut that off and the job would run again elsewhere. (A job BullMQ fetched
        // just as the worker paused is given back, and this close waits for that.)
        const force = !drained || health.isDown();
        // Redis drops the clients blocked on it when it becomes a replica (a failover), and the worker's
        // blocking connection then waits to reconnect. An unforced close disconnects it and waits for its
        // "end", which ioredis does not emit for a connection waiting to reconnect (it has no socket to
        // close): the stop waited out the bound below. It carries nothing then: ended here, its retry cancelled
        // and its status set as BullMQ sets it once closed.
        if (!force && blocking?.status === "reconnecting") {
          blocking.disconnect();
          blocking.status = "end";
        }
        if (workerConnection !== undefined) health.closing(workerConnection);
        // The locks of runs stopped past the drain expire, for another instance to run them again.
        clearInterval(renewingLocks);
        await withTimeout(stopping.close(force), CLOSE_WAIT_MS, "close").catch(wentOn);
        // Its lease would have it wait up to 30 s more: another instance takes it now. One not due yet (a
        // retry's wait: its platform's Retry-After is not cut short) is told when it is due on Redis's clock,
        // and that instance waits out the rest, holding the job's place meanwhile (its delivery's turn in its
        // chat: a later reply there goes out after it, as behind a retry that never stopped). Left delayed
        // until then, no instance saw it, and a reply to the same chat went out between a message's parts.
        // Let run one after another in the order they joined their recipients' lines here (those that never
        // did last, as they were cut short), each once the one before is in the wait list, which workers take
        // from in that order: the instance that takes two deliveries to one chat queues them there as this
        // one had (the one waiting to retry first, the one waiting its turn behind it next). Let run together,
        // the one waiting to retry, whose data is written first, went in last, and its chat read the later
        // reply first.
        const handing = async () => {
          const jobs = handOn
            .splice(0)
            .sort((a, b) => (a.turn ?? Number.POSITIVE_INFINITY) - (b.turn ?? Number.POSITIVE_INFINITY));
          const ready = await Promise.all(
            jobs
              .map(async ({ id, dueAt }) => {
                const job = id === undefined ? undefined : await queue.getJob(id);
                if (job === undefined || job.id === undefined) return undefined;
                // In the wait list already (a worker's clock found its lease over), it goes on as it is.
                const delayed = await job.isDelayed();
                if (delayed && dueAt !== undefined && options.handedOn !== undefined)
                  await job.updateData(options.handedOn(job.data, await redisAhead()));
                // No longer held here: the worker that takes it runs it.
                await letGo(job.id);
                return delayed ? job : undefined;
              })
              .map((prepared) => prepared.catch(wentOn)),
          );
          // A promote that fails (the job taken meanwhile) holds up none of the others.
          for (const job of ready) if (job !== undefined) await job.promote().catch(wentOn);
        };
        await withTimeout(handing(), CLOSE_WAIT_MS, "hand on").catch(wentOn);
        // Of the idle workers, Redis tells one when a job is stored or a delayed one falls due (BullMQ's
        // marker); the others look by themselves only every 5 s. When this one was told, no other instance
        // was: a base marker wakes one of theirs, which takes what is waiting and times what is delayed (a
        // coalescing group due now fires on time, not up to 5 s late). Where nothing waits it finds nothing.
        // Not waited for: a Redis that stops answering holds up the stop no longer than before.
        if (!health.isDown()) producer.zadd(queue.keys.marker as string, 0, "0").catch(() => {});
      }
      health.closing(producer);
      await withTimeout(queue.close(), CLOSE_WAIT_MS, "close").catch(wentOn);
      producer.disconnect();
      workerConnection?.disconnect();
    },
  };
}
