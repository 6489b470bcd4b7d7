/** Every key svc writes in Redis starts with `<prefix>:` (`state.redis_key_prefix`, default `svc`). */
export const DEFAULT_KEY_PREFIX = "svc";

export interface RedisKeys {
  /** The idempotency record of one delivery (`<route>:<delivery id>`). */
  seen(key: string): string;
  /**
   * That the direct delivery of `<route>:<delivery id>` was stopped (the gateway's stop ended its wait;
   * nothing sent): set just before its idempotency record is removed, for the duplicates watching it.
   */
  stopped(key: string): string;
  /** When a run was stored under a delivery (`<route>:<delivery id>`): it expires an hour after. */
  added(key: string): string;
  /** The fixed-window counter of one route. */
  rate(route: string): string;
  /** A cron job's lease for one due time. */
  cronLease(profile: string, jobId: string, dueAt: string): string;
  /** A pending coalescing group (a hash), by group id. */
  coalesceGroup(group: string): string;
  /** A group taken for dispatch, by its generation (kept until its run is enqueued). */
  coalesceFiring(generation: number): string;
  /** What `coalesceFiring` puts before the generation (a script that learns the generation in Redis). */
  coalesceFiringPrefix(): string;
  /**
   * What the group id's last group dispatched, for `LAST_DISPATCHED_MS` after it fired (a hash: that event's
   * receive time and delivery id, and the earlier events that came late since).
   */
  coalesceLast(group: string): string;
  /** The counter that numbers coalescing groups. */
  coalesceSequence(): string;
  /** The pending groups by due time (a sorted set of `<generation>:<group id>`), which every instance sweeps. */
  coalesceDue(): string;
  /** The dynamic subscriptions (a hash by route name) and its revision counter. */
  subscriptions(): string;
  subscriptionsRevision(): string;
  /**
   * The key one instance (`instance`: an id of its process) writes, expiring within a second, to learn
   * whether a Redis that refused its writes (full, read-only) takes them again while no request comes.
   */
  writeProbe(instance: string): string;
  /**
   * The Redis server (its run_id) the instances last saw, and whether what it holds was `kept` or `lost`
   * across its restart: tells a Redis that loaded its data from a file from one that came back empty.
   */
  serverSeen(): string;
  /** The Pub/Sub channel the instances tell each other the session mirrors of their deliveries on. */
  sessionMirrors(): string;
  /**
   * That the job `jobId` of the queue `queue` is held outside its worker slot by the instance the key names
   * (its delivery waits to retry there), expiring with the lease that instance renews: a worker of any
   * instance that takes the job meanwhile gives it back unrun.
   */
  held(queue: string, jobId: string): string;
  /** BullMQ's own prefix for its queues. */
  bullPrefix(): string;
}

export function redisKeys(prefix = DEFAULT_KEY_PREFIX): RedisKeys {
  return {
    seen: (key) => `${prefix}:seen:${key}`,
    added: (key) => `${prefix}:added:${key}`,
    stopped: (key) => `${prefix}:stopped:${key}`,
    rate: (route) => `${prefix}:rate:${route}`,
    cronLease: (profile, jobId, dueAt) => `${prefix}:cron:${profile}:${jobId}:${dueAt}`,
    coalesceGroup: (group) => `${prefix}:coalesce:group:${group}`,
    coalesceFiring: (generation) => `${prefix}:coalesce:firing:${generation}`,
    coalesceFiringPrefix: () => `${prefix}:coalesce:firing:`,
    coalesceLast: (group) => `${prefix}:coalesce:last:${group}`,
    coalesceSequence: () => `${prefix}:coalesce:seq`,
    coalesceDue: () => `${prefix}:coalesce:due`,
    subscriptions: () => `${prefix}:subscriptions`,
    subscriptionsRevision: () => `${prefix}:subscriptions:revision`,
    writeProbe: (instance) => `${prefix}:probe:${instance}`,
    serverSeen: () => `${prefix}:server-seen`,
    sessionMirrors: () => `${prefix}:session-mirrors`,
    held: (queue, jobId) => `${prefix}:held:${queue}:${jobId}`,
    bullPrefix: () => `${prefix}:bull`,
  };
}
