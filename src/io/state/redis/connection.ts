import type { Redis, RedisOptions } from "ioredis";
import { StoppedWhileWaiting, SvcError } from "../../../errors.js";
import { StateUnavailableError } from "../../../streams/stateUnavailable.js";
import { importExternal } from "../../importExternal.js";
import type { Logger } from "../../log.js";
import { secureContextFor, systemCaCertificates } from "../../mcp/systemCas.js";
import { connectFailure } from "./connectFailure.js";
import { redisKeys } from "./keys.js";
import { LOADING_HINT, sayWhileLoading } from "./loadingWait.js";
import { notRespReply } from "./notRedis.js";
import { renamedAway } from "./renamedCommands.js";
import { sentinelProblem } from "./sentinel.js";
import { olderThanNeeded } from "./serverVersion.js";
import { failedOffline, failureReason, startRedisFix, turnedAway, type Unreachable } from "./unreachable.js";

/** Query options ioredis reads as credentials (`?password=`, `?username=`, `?sentinelPassword=`, ...). */
const CREDENTIAL_OPTION = /pass|user|auth|secret|token|key|cred/i;

/** Whether a state.redis_url holds a credential: a `user:password@` password or a credential-named query option. */
export function redisUrlHoldsCredential(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (
      parsed.password !== "" || [...parsed.searchParams.keys()].some((name) => CREDENTIAL_OPTION.test(name))
    );
  } catch {
    return false;
  }
}

/**
 * The URL as logs and messages may show it: host, port and database, never a credential. ioredis reads
 * its options from the query too (`redis://host:6379/0?password=...` connects with that password), so a
 * credential-named option's value is shown as `[redacted]`; the fragment, which ioredis ignores, is dropped.
 */
export function redisLabel(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.hash = "";
    const options = [...parsed.searchParams].map(([name, value]) =>
      CREDENTIAL_OPTION.test(name)
        ? `${encodeURIComponent(name)}=[redacted]`
        : // A socket's ?path= reads as the path it is: its slashes are not escaped.
          `${encodeURIComponent(name)}=${encodeURIComponent(value).replaceAll("%2F", "/")}`,
    );
    parsed.search = "";
    return options.length === 0 ? parsed.toString() : `${parsed.toString()}?${options.join("&")}`;
  } catch {
    return "redis (unparseable URL)";
  }
}

/** ioredis options as svc sets them (`replyMapping` left out: its optional type trips exactOptionalPropertyTypes). */
export type ConnectionSettings = Omit<RedisOptions, "replyMapping">;

/**
 * A connection's options for `url`: `rediss://` verifies the server against the system's CAs (Node's
 * list, the system trust store — `SSL_CERT_FILE` or the distribution's bundle, where an administrator adds
 * a company CA — and `NODE_EXTRA_CA_CERTS`), as an MCP server's `ssl_verify: true` does; Node's own list
 * alone leaves the trust store out. A `redis://` URL gets no TLS option: any would turn TLS on.
 */
export function optionsForUrl(url: string, options: ConnectionSettings): ConnectionSettings {
  if (!/^rediss:/i.test(url)) return options;
  const ca = systemCaCertificates();
  return ca === undefined ? options : { ...options, tls: { secureContext: secureContextFor({ ca }) } };
}

/** Reconnects forever, at most every 2 s: the gateway recovers by itself when Redis returns. */
const retryStrategy = (times: number) => Math.min(50 * times, 2000);

/**
 * Options for the request path's connection: a command fails at once while Redis is unreachable (no
 * offline queue, no retries), so a request is answered 503 instead of waiting for a reconnect.
 */
export function commandOptions(): ConnectionSettings {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy,
    lazyConnect: true,
  };
}

/** Options for BullMQ's producer (fails fast like the request path) and workers (retry forever, as BullMQ requires). */
export function queueOptions(role: "producer" | "worker"): ConnectionSettings {
  return role === "producer"
    ? { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy }
    : { maxRetriesPerRequest: null, connectTimeout: 2000, retryStrategy };
}

/**
 * Says in the log that Redis is unreachable once per outage (not once per request or per connection),
 * and that it is back once every watched connection is ready again. `fail` turns a command's error into
 * the StateUnavailableError the pipeline answers 503 for.
 */
export interface RedisHealth {
  /** Follows a connection's state under `name` (the request path's, BullMQ's producer and worker). */
  watch(name: string, redis: Redis): void;
  /**
   * A watched connection the stop is about to close: what its close brings is no outage (a liveness PING
   * written after its QUIT was answered fails with EPIPE once Redis has closed the socket), and it is
   * pinged no more.
   */
  closing(redis: Redis): void;
  isDown(): boolean;
  /** Whether an outage was logged and is not over yet: requests that need Redis are answered 503. */
  inOutage(): boolean;
  /**
   * Whether Redis refused a command of the request path (full, read-only, ...) and has taken no write of it
   * since: requests are answered 503 meanwhile, as in an outage, though Redis answers.
   */
  refusing(): boolean;
  /**
   * A write of the request path was taken (an idempotency record, a stored job): a refusal is over (said
   * in the log once, when there was one).
   */
  taken(): void;
  /**
   * PINGs every watched connection each `everyMs` (undefined: never), so a Redis whose `timeout` closes
   * idle clients never closes one: each close would be logged as an outage and back, and a request in
   * between answered 503. The first one watched is pinged at least every LIVENESS_PING_MS, and a PING it
   * gets no answer to is an outage, as a request's command would be. `everyMs` is read now (`idlePingMs`)
   * and again each time Redis is back after an outage: a Redis restarted with another `timeout`, or one
   * set on the running server (whose closes are such an outage), is followed. While a write was refused
   * (`refusing`: full, read-only, ...) the first one is also sent a SET of the instance's own probe key
   * (expiring in PROBE_KEY_MS), and the refusal is over once Redis takes it: an idle instance does not
   * stay unavailable until a request comes. A healthy instance sends no SET.
   */
  keepAlive(everyMs: () => Promise<number | undefined>): Promise<void>;
  /** Called each time Redis is reachable again after a logged outage, right after that is logged. */
  onBack(listener: () => void): void;
  /**
   * Called with each liveness PING of the first connection watched (`keepAlive`), while it is ready and no
   * outage is logged: a check that rides on it sends its command beside the PING, on the same connection.
   */
  onLivenessPing(listener: (redis: Redis) => void): void;
  fail(err: unknown): never;
  /**
   * A command of a background connection (`what`: a queue's worker) that Redis refused: logged at most once
   * a minute per `what`, since no request is answered 503 for it while its work stops.
   */
  refusedInBackground(what: string, err: unknown): void;
}

/** How often a connection that stayed open is pinged after a command failed on it. */
const PROBE_MS = 1000;
/**
 * How often the request path's connection (whose commands time out) is pinged whatever Redis's `timeout`:
 * a Redis that stops answering while no request comes (frozen, or its host gone without closing the
 * connection) is an outage all the same — logged, and `svc_state_available` 0 — not only once a request
 * is answered 503 for it.
 */
export const LIVENESS_PING_MS = 5000;
/** A command's failure for want of an answer in time: ioredis's `commandTimeout`, or the enqueue's own bound. */
const TIMED_OUT = /^Command timed out$|: no answer from Redis in \d+ ms$/;
/** How long the key written to learn whether Redis takes writes again lives (`keepAlive`). */
const PROBE_KEY_MS = 1000;
/**
 * Refusals a SET of the probe key shares with the request path's writes: a Redis that takes it takes
 * those again. Not NOPERM (an ACL may allow the SET and still refuse a script) nor an unknown error.
 */
const WRITE_REFUSAL = /^(OOM|READONLY|MISCONF|LOADING)\b/;
/** A failed connect no server took (none listening, no route, no answer): the outage line says it all. */
const NO_SERVER_TOOK_IT = /ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/;
/** A Redis that keeps refusing commands (full, read-only, ...) is logged at most this often. */
const REFUSAL_LOG_MS = 60_000;

/**
 * An error Redis answered (OOM when full, READONLY on a replica, MISCONF, LOADING, NOAUTH): the server is
 * reachable, and a PING succeeding says nothing about whether it takes commands again.
 */
export const isRefusal = (err: unknown): boolean => err instanceof Error && err.name === "ReplyError";

/**
 * A Redis that refused the credentials of `url` (`reason`: WRONGPASS, or NOAUTH when it asks for a password
 * the URL does not give): what it did, as a line goes on after naming the server, and the fix (the example
 * keeps the URL's scheme, TLS or not). Undefined for another reason.
 */
export function credentialsRefusal(
  url: string,
  reason: string,
): { readonly said: string; readonly fix: string } | undefined {
  const scheme = /^rediss:/i.test(url) ? "rediss" : "redis";
  if (/NOAUTH/.test(reason))
    return {
      said: "asks for a password, and state.redis_url gives none",
      fix: `write it in state.redis_url (${scheme}://:password@host:6379/0, or ${scheme}://user:password@… for an ACL user; keep it in .env)`,
    };
  if (/WRONGPASS|without any password configured/i.test(reason))
    return {
      said: "refused the credentials",
      fix: `fix the user and password in state.redis_url (${scheme}://user:password@host:6379/0; keep them in .env)`,
    };
  return undefined;
}

/** What to do about a refusal, by the error code Redis put first in its answer. */
export function refusalHint(reason: string): string {
  const code = /^[A-Z]+/.exec(reason)?.[0];
  switch (code) {
    case "OOM":
      return "a full Redis: free memory or raise its maxmemory";
    case "NOPERM":
      return "its ACL does not let the user of state.redis_url do this: grant it the command and the keys under the prefix";
    case "READONLY":
      return "a read-only replica: point state.redis_url at the primary";
    case "MISCONF":
      return "Redis cannot save its snapshot: check its disk and its log";
    case "LOADING":
      return LOADING_HINT;
    case "NOAUTH":
    case "WRONGPASS":
      return "fix the user and password in state.redis_url";
    default:
      return "see Redis's log";
  }
}

/**
 * `greeting` reads what the server says unasked on a new connection (`serverGreeting`; undefined for a
 * `rediss://` URL, whose server speaks TLS first): a reconnect it turns away is logged with its reason.
 * `reconnectFailure` (for a `rediss://` URL) says why a reconnect failed, as the start would
 * (`connectFailure`): a reconnect whose server took the connection and dropped it is logged with that
 * problem and its fix (a client certificate it now requires), once in the outage.
 */
export function createRedisHealth(
  label: string,
  logger: Logger,
  /** What "at most once a minute" is counted on: by default a clock that is never set, so a step back (NTP) does not silence the log. */
  now: () => number = () => performance.now(),
  greeting?: () => Promise<string | undefined>,
  /** The instance's own key (`RedisKeys.writeProbe`) written while a write is refused; undefined: none. */
  probeKey?: string,
  /** What waits for Redis on this instance: the requests it takes, or (a worker: no webhook adapter) its runs. */
  serves: "requests" | "runs" = "requests",
  reconnectFailure?: (reason: string) => Promise<Unreachable>,
): RedisHealth {
  /** Watched connections that are not ready. */
  const notReady = new Set<string>();
  /** Watched connections the stop closes (`closing`). */
  const closedOnPurpose = new WeakSet<Redis>();
  let reported = false;
  const report = (reason: string) => {
    if (reported) return;
    reported = true;
    logger.error(
      { redis: label, reason },
      `[state] Redis at ${label} is unreachable (${reason}); ${serves === "runs" ? "the shared queue's runs wait until it is back (this instance takes no requests: platforms.webhook is off)" : "requests that need it are answered 503 until it is back"}`,
    );
  };
  /**
   * A reconnect the server answers with a refusal of the URL's credentials (its password changed while the
   * gateway ran) is no outage that ends by itself: said once per outage, with the fix.
   */
  let credentialsRefused = false;
  const refusedCredentials = (reason: string) => {
    if (credentialsRefused) return;
    credentialsRefused = true;
    const waits =
      serves === "runs" ? "the shared queue's runs wait" : "requests that need it are answered 503";
    // A server that now asks for a password the URL lacks is said as the start says it.
    const noPassword = /^NOAUTH\b/.test(reason) ? credentialsRefusal(label, reason) : undefined;
    logger.error(
      { redis: label, reason },
      noPassword === undefined
        ? `[state] Redis at ${label} refused the credentials of state.redis_url on reconnecting (${reason}); ${waits} until it takes them — ${refusalHint(reason)}`
        : `[state] Redis at ${label} ${noPassword.said} on reconnecting (${reason}); ${waits} until it is given one — ${noPassword.fix}, then restart the gateway`,
    );
  };
  /**
   * A reconnect the server closed at once (a reset, a broken pipe) may have been turned away, with a reason
   * it gives unasked (its maxclients reached): read once per outage, and said with the fix when it is one.
   */
  let awayExplained = false;
  let readingGreeting = false;
  const explainAway = () => {
    if (greeting === undefined || awayExplained || readingGreeting) return;
    readingGreeting = true;
    void greeting().then((line) => {
      readingGreeting = false;
      const away = turnedAway(label, line);
      if (away === undefined || awayExplained || !reported) return;
      awayExplained = true;
      logger.error(
        { redis: label, reason: line },
        `[state] Redis at ${label} turned svc's connection away: ${away.problem} — ${away.fix}`,
      );
    });
  };
  /**
   * A `rediss://` reconnect that failed once a server took it (a TLS alert, a reset; not a refused connect
   * or a timeout, which say no more than the outage): its cause as the start names it, said once per
   * outage unless it is only a Redis to start. A failure found to be only that (a connection closed before
   * its handshake by a Redis stopping, or by its CLIENT KILL) is probed once per outage; a later reconnect
   * that fails otherwise (the alert of a Redis now requiring a client certificate) is probed in its turn.
   */
  let reconnectExplained = false;
  let explainingReconnect = false;
  /** The reasons (`failureReason`) this outage's probes found nothing more about than a Redis to start. */
  const unexplained = new Set<string>();
  const explainReconnect = (reason: string) => {
    if (reconnectFailure === undefined || reconnectExplained || explainingReconnect) return;
    if (NO_SERVER_TOOK_IT.test(reason)) return;
    // Each probe of a rediss:// server is one more TLS connect: a failure said alike is probed once.
    const said = failureReason(reason);
    if (unexplained.has(said)) return;
    explainingReconnect = true;
    void reconnectFailure(reason).then(({ problem, fix }) => {
      explainingReconnect = false;
      if (reconnectExplained || !reported) return;
      if (fix === startRedisFix(label)) {
        unexplained.add(said);
        return;
      }
      reconnectExplained = true;
      logger.error(
        { redis: label, reason },
        `[state] Redis at ${label} cannot be reconnected to: ${problem} — ${fix}`,
      );
    });
  };
  /** Reads how often to ping the connections (`keepAlive`), again each time Redis is back. */
  let readPingMs: (() => Promise<number | undefined>) | undefined;
  /** What `onBack` registered. */
  const backListeners: Array<() => void> = [];
  /** What `onLivenessPing` registered. */
  const pingListeners: Array<(redis: Redis) => void> = [];
  const back = () => {
    if (!reported || notReady.size > 0) return;
    reported = false;
    credentialsRefused = false;
    awayExplained = false;
    reconnectExplained = false;
    unexplained.clear();
    logger.info(
      { redis: label },
      `[state] Redis at ${label} is reachable again; ${serves === "runs" ? "the shared queue's runs go on" : "requests are served"}`,
    );
    for (const listener of backListeners) listener();
    if (readPingMs !== undefined)
      void readPingMs().then(
        (everyMs) => {
          if (everyMs !== pingMs) pingEvery(everyMs, true);
        },
        () => {},
      );
  };
  /** When a refusal was last logged, and its kind (the error's code: OOM, READONLY, …). */
  let refusedAt: number | undefined;
  let refusedCode: string | undefined;
  /** Refused since the last write taken (see `refusing`). */
  let refused = false;
  /** The last refusal's reason, when a SET of `probeKey` tells whether it is over (WRITE_REFUSAL). */
  let refusedWrite: string | undefined;
  const writesTaken = () => {
    if (!refused) return;
    refused = false;
    const reason = refusedWrite;
    refusedWrite = undefined;
    logger.info(
      { redis: label },
      `[state] Redis at ${label} takes writes again${reason === undefined ? "" : ` (it refused them: ${reason})`}; ${serves === "runs" ? "the shared queue's runs go on" : "requests are served"}`,
    );
  };
  /**
   * Redis answered a command (or PING) with a refusal (full, read-only, a failing snapshot, …): not an
   * outage, so no "unreachable" / "reachable again" pair each second while it lasts. Logged once a minute
   * for one kind; another kind (a full Redis, then a replica after a failover) is named at once, with its own fix.
   */
  const refusal = (reason: string) => {
    refused = true;
    refusedWrite = WRITE_REFUSAL.test(reason) ? reason : undefined;
    const at = now();
    const code = /^[A-Z]+/.exec(reason)?.[0];
    if (refusedAt === undefined || at - refusedAt >= REFUSAL_LOG_MS || code !== refusedCode) {
      refusedAt = at;
      refusedCode = code;
      logger.error(
        { redis: label, reason },
        `[state] Redis at ${label} refused a command (${reason}); ${serves === "runs" ? "the shared queue's runs wait" : "requests that need it are answered 503"} while it refuses (${refusalHint(reason)}; logged at most once a minute)`,
      );
    }
  };
  /** A SET of `probeKey` under way (one at a time). */
  let probingWrite = false;
  const probeWrite = (redis: Redis) => {
    if (probeKey === undefined || refusedWrite === undefined || probingWrite) return;
    probingWrite = true;
    redis.set(probeKey, "1", "PX", PROBE_KEY_MS).then(
      () => {
        probingWrite = false;
        writesTaken();
      },
      // Refused again, or unanswered (which the PING beside it reports).
      () => {
        probingWrite = false;
      },
    );
  };
  /** When each background refusal was last logged. */
  const backgroundRefusedAt = new Map<string, number>();
  /** The first connection watched: pinged after a command failed on a connection that stayed open. */
  let pinged: Redis | undefined;
  /** Every connection watched (kept alive while `keepAlive` runs). */
  const watched: Redis[] = [];
  let keepingAlive: NodeJS.Timeout | undefined;
  let probing = false;
  /**
   * A command that timed out (a frozen or overloaded server) leaves its connection open, so no `ready`
   * says when Redis answers again: a PING each second does, and the outage's end is logged as for a
   * reconnect (and the next outage is reported again).
   */
  const probeUntilBack = () => {
    if (probing || pinged === undefined || notReady.size > 0) return;
    probing = true;
    const probe = (redis: Redis) => {
      redis.ping().then(
        () => {
          probing = false;
          back();
        },
        () => {
          // Closed on purpose (the gateway's stop): nothing more to wait for.
          if (redis.status === "end") probing = false;
          else setTimeout(() => probe(redis), PROBE_MS).unref();
        },
      );
    };
    const redis = pinged;
    setTimeout(() => probe(redis), PROBE_MS).unref();
  };
  /** A command (or PING) that got no answer on a connection that stayed open: an outage until a PING answers. */
  const unanswered = (reason: string) => {
    report(reason);
    probeUntilBack();
  };
  /**
   * A request's command that got no answer in time (`commandTimeout`, the enqueue's bound) on a connection
   * that stayed open is an outage only once a PING gets none in time either: one slow command (a loaded
   * server or host, as just after Redis is back with every instance catching up) is answered 503 alone,
   * where it was logged as another outage and its end a second later.
   */
  let confirming = false;
  const timedOut = (reason: string) => {
    const redis = pinged;
    if (reported || redis === undefined || redis.status !== "ready") return unanswered(reason);
    if (confirming) return;
    confirming = true;
    redis.ping().then(
      () => {
        confirming = false;
      },
      (err: unknown) => {
        confirming = false;
        // Refused, it was answered: a refusal, not an outage. A connection that closed meanwhile says so
        // itself (its close event); one still open did not answer.
        if (isRefusal(err)) refusal((err as Error).message);
        else if (redis.status === "ready") unanswered(reason);
      },
    );
  };
  /**
   * Pings the watched connections each `everyMs` (see `keepAlive`), the first at least every
   * LIVENESS_PING_MS; `now`: once at once as well (a `timeout` read again after Redis closed idle
   * connections: the others, as idle, would be closed before the first round).
   */
  let pingMs: number | undefined;
  const pingEvery = (everyMs: number | undefined, now = false) => {
    pingMs = everyMs;
    const round = () => {
      // Closed on purpose (the gateway's stop): nothing more to keep.
      if (watched.every((redis) => redis.status === "end")) clearInterval(keepingAlive);
      for (const redis of watched) {
        if (redis.status !== "ready" || closedOnPurpose.has(redis)) continue;
        if (redis !== pinged) {
          if (everyMs !== undefined) redis.ping().catch(() => {});
          continue;
        }
        // A PING Redis refused (MISCONF: it refuses PING with its writes) was answered; a connection that
        // closed meanwhile says so itself (its close event); one still open did not answer.
        redis.ping().catch((err: unknown) => {
          if (isRefusal(err)) refusal((err as Error).message);
          else if (redis.status === "ready") unanswered(err instanceof Error ? err.message : String(err));
        });
        if (refused && !reported) probeWrite(redis);
        if (!reported) for (const listener of pingListeners) listener(redis);
      }
    };
    clearInterval(keepingAlive);
    keepingAlive = setInterval(round, Math.min(everyMs ?? LIVENESS_PING_MS, LIVENESS_PING_MS));
    keepingAlive.unref();
    if (now) round();
  };
  return {
    watch(name, redis) {
      pinged ??= redis;
      watched.push(redis);
      const down = (reason: string) => {
        notReady.add(name);
        report(reason);
      };
      redis.on("error", (err: Error) => {
        if (closedOnPurpose.has(redis)) return;
        // A reconnect's failure, not the error that ended a ready connection (Redis killed, say).
        const reconnecting = redis.status !== "ready";
        down(err.message);
        if (/^(WRONGPASS|NOAUTH)\b/.test(err.message)) refusedCredentials(err.message);
        else if (/\b(EPIPE|ECONNRESET)\b/.test(err.message)) explainAway();
        if (reconnecting) explainReconnect(err.message);
      });
      redis.on("close", () => {
        // A connection closed on purpose (stop) is no outage.
        if (redis.status !== "end" && !closedOnPurpose.has(redis)) down("connection closed");
      });
      redis.on("ready", () => {
        notReady.delete(name);
        back();
      });
    },
    closing(redis) {
      closedOnPurpose.add(redis);
    },
    isDown: () => notReady.size > 0,
    inOutage: () => reported,
    refusing: () => refused,
    taken() {
      if (refused) writesTaken();
    },
    onBack(listener) {
      backListeners.push(listener);
    },
    onLivenessPing(listener) {
      pingListeners.push(listener);
    },
    async keepAlive(everyMs) {
      readPingMs = everyMs;
      pingEvery(await everyMs());
    },
    refusedInBackground(what, err) {
      const reason = err instanceof Error ? err.message : String(err);
      const at = now();
      // Once a minute for each queue and kind of refusal (its code: OOM, READONLY, NOPERM, …).
      const key = `${what} ${/^[A-Z]+/.exec(reason)?.[0]}`;
      const last = backgroundRefusedAt.get(key);
      if (last !== undefined && at - last < REFUSAL_LOG_MS) return;
      backgroundRefusedAt.set(key, at);
      logger.error(
        { redis: label, reason },
        `[state] Redis at ${label} refused a command of ${what} (${reason}); its jobs do not run on this instance while it refuses (${refusalHint(reason)}; logged at most once a minute)`,
      );
    },
    fail(err) {
      // A command refused unsent while the connection is down says so in ioredis's words for its option
      // ("Stream isn't writeable and enableOfflineQueue options is false"): the outage is the reason, as
      // the connection's own close reports it.
      const reason = failedOffline(err)
        ? "connection closed"
        : err instanceof Error
          ? err.message
          : String(err);
      if (isRefusal(err)) {
        refusal(reason);
        throw new StateUnavailableError(`Redis refused the command: ${reason}`);
      }
      if (TIMED_OUT.test(reason)) timedOut(reason);
      else unanswered(reason);
      throw new StateUnavailableError(`Redis unreachable: ${reason}`);
    },
  };
}

/**
 * How often svc's connections are pinged so that a Redis whose `timeout` (seconds) closes idle clients
 * closes none: within half of it; undefined when it closes none (0, Redis's default). A server that does
 * not say (CONFIG refused by an ACL, or renamed by a managed service) is pinged every 30 s.
 */
export async function idlePingMs(redis: Redis): Promise<number | undefined> {
  let seconds: number;
  try {
    const reply = (await redis.config("GET", "timeout")) as unknown as string[];
    seconds = Number(reply[1]);
  } catch {
    return 30_000;
  }
  if (!Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.max(250, Math.min(30_000, (seconds * 1000) / 2));
}

/**
 * What a Redis that evicts keys when full puts at risk, or undefined for `noeviction` (Redis's default, and
 * what BullMQ requires) or a server that does not say (an ACL without INFO).
 */
export async function evictionProblem(redis: Redis, label: string): Promise<string | undefined> {
  const policy = await evictionPolicy(redis);
  if (policy === undefined || policy === "noeviction") return undefined;
  return `${label} evicts keys when it is full (maxmemory-policy ${policy}): it may drop queued runs, coalescing groups, idempotency records and subscriptions — ${NOEVICTION_FIX}`;
}

export const NOEVICTION_FIX =
  "set maxmemory-policy noeviction in its redis.conf (and CONFIG SET maxmemory-policy noeviction for the running server)";

/** The server's `maxmemory-policy` (INFO memory); undefined when INFO is refused or says none. */
export async function evictionPolicy(redis: Redis): Promise<string | undefined> {
  try {
    return /^maxmemory_policy:(\S+)/m.exec(await redis.info("memory"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The server's `run_id` (INFO server), a new one at each start of Redis; undefined when INFO is refused (an
 * ACL, renamed by a managed service) or says none.
 */
export async function serverRunId(redis: Redis): Promise<string | undefined> {
  try {
    return /^run_id:([0-9a-f]+)\r?$/m.exec(await redis.info("server"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * What a Redis that keeps nothing across its own restart (no append-only file, no snapshots) puts at risk,
 * or undefined when it keeps something or does not say (CONFIG refused by an ACL, or renamed by a managed
 * service, which persists on its own terms).
 */
export async function persistenceProblem(redis: Redis, label: string): Promise<string | undefined> {
  let appendonly: string | undefined;
  let save: string | undefined;
  try {
    const [aof, rdb] = (await Promise.all([
      redis.config("GET", "appendonly"),
      redis.config("GET", "save"),
    ])) as unknown as [string[], string[]];
    appendonly = aof[1];
    save = rdb[1];
  } catch {
    return undefined;
  }
  if (appendonly !== "no" || save !== "") return undefined;
  return `${label} keeps nothing across its own restart (appendonly no, save ""): a restart or crash of Redis loses every queued run, coalescing group, idempotency record and subscription — set appendonly yes in its redis.conf (and CONFIG SET appendonly yes for the running server)`;
}

/**
 * Connects and PINGs once (startup): a bad `state.redis_url` stops the gateway with the usual
 * file/key/problem/fix message instead of answering 503 to every request. With `keyPrefix`, also checks
 * that the URL's user may write keys under `<prefix>:` (a Redis ACL that leaves them out answers every
 * command NOPERM: every request would be answered 503, every CLI command fail with EXECABORT), and that
 * the server is not in cluster mode (CROSSSLOT: the same). A Redis still loading its data after a restart is
 * waited for (it cannot answer before): `wait.say` is told so, again every 10 s, and `wait.signal` (the
 * gateway's stop during its start) ends the wait with a `StoppedWhileWaiting`.
 */
export async function connectRedis(
  url: string,
  configFile: string,
  options: ConnectionSettings,
  keyPrefix?: string,
  wait: { readonly say?: (line: string) => void; readonly signal?: AbortSignal } = {},
): Promise<Redis> {
  const label = redisLabel(url);
  const refuse = (
    problem: string,
    fix = `start Redis at ${label}, or fix state.redis_url (redis://host:6379/0)`,
  ) => new SvcError("config_invalid", `${configFile}: state.redis_url: ${problem} — ${fix}`);
  // ioredis is loaded with the first connection: the local backend never needs it.
  const { Redis } = await importExternal<typeof import("ioredis")>("ioredis");
  let redis: Redis;
  try {
    // The reply mapping is named, not inferred: inferring it from these options cost the type check ~4 s.
    redis = new Redis<"legacy">(
      url,
      optionsForUrl(url, { ...options, lazyConnect: true, retryStrategy: () => null }),
    );
  } catch (err) {
    throw refuse(`not a usable Redis URL (${(err as Error).message})`);
  }
  // The socket's error (ECONNREFUSED, ENOTFOUND) says more than the rejected connect ("Connection is closed").
  let socketError: string | undefined;
  const onError = (err: Error) => {
    // A TLS alert says why (a client certificate asked for) even when a reset of the socket came first; a
    // reply that is no Redis reply (another service on that port) says more than the broken pipe after it.
    if (socketError === undefined || /\balert\b/.test(err.message) || notRespReply(err.message))
      socketError = err.message;
  };
  redis.on("error", onError);
  const quiet = wait.say === undefined ? () => {} : sayWhileLoading(redis, label, wait.say);
  const giveUp = () => redis.disconnect();
  wait.signal?.addEventListener("abort", giveUp, { once: true });
  try {
    if (wait.signal?.aborted === true)
      throw new StoppedWhileWaiting(`stopped while waiting for Redis at ${label}`);
    await redis.connect();
    await redis.ping();
  } catch (err) {
    // A connection that never opened (or closed already) is ended: disconnecting it again would arm
    // ioredis's disconnect timer (2 s) on its closed socket, and hold the command's process that long.
    if (redis.status !== "end") redis.disconnect();
    if (wait.signal?.aborted === true)
      throw new StoppedWhileWaiting(`stopped while waiting for Redis at ${label}`);
    const reason = socketError ?? (err as Error).message;
    // Redis answered, and refused the URL's user or password: starting it is not the fix. A password it asks
    // for and the URL lacks is said as such. The example keeps the URL's scheme (TLS or not).
    const credentials = credentialsRefusal(url, reason);
    if (credentials !== undefined) throw refuse(`${label} ${credentials.said} (${reason})`, credentials.fix);
    // INFO renamed away in redis.conf (rename-command INFO ""): the client's ready check is refused.
    if (/unknown command .info/i.test(reason))
      throw refuse(
        `${label} does not run INFO (${reason.trim()})`,
        "svc's Redis client and run queue (BullMQ) read the server's state and version with it: take INFO out of the rename-command lines of its redis.conf",
      );
    // Refused with LOADING where a Redis loading its data answers INFO (a proxy in front of it, say).
    if (/^LOADING\b/.test(reason)) throw refuse(`${label} refused the connection (${reason})`, LOADING_HINT);
    const { problem, fix } = await connectFailure(url, label, redis.options, reason);
    throw refuse(problem, fix);
  } finally {
    quiet();
    wait.signal?.removeEventListener("abort", giveUp);
  }
  // ioredis switches to the URL's database on connect and only logs a refusal: every key would then go
  // to database 0, shared with whatever uses it. Asked again here, where a refusal can stop the start.
  const db = redis.options.db ?? 0;
  try {
    await redis.select(db);
  } catch (err) {
    // A Sentinel refuses SELECT as an unknown command: it has no databases at all.
    const sentinel = await sentinelProblem(redis, label);
    redis.disconnect();
    if (sentinel !== undefined) throw refuse(sentinel.problem, sentinel.fix);
    throw refuse(
      `${label} has no database ${db} (${(err as Error).message})`,
      "end state.redis_url with a database this server has (0-15 unless its databases setting says more)",
    );
  }
  const denied =
    keyPrefix === undefined
      ? undefined
      : ((await accessDenied(redis, label, keyPrefix)) ??
        (await unsuitableServer(redis, label)) ??
        (await renamedAway(redis, label)));
  if (denied !== undefined) {
    redis.disconnect();
    throw refuse(denied.problem, denied.fix);
  }
  redis.off("error", onError);
  // From here on, reconnect for ever (an outage is answered 503 and ends by itself).
  redis.options.retryStrategy = options.retryStrategy ?? retryStrategy;
  return redis;
}

export { StateUnavailableError };

/**
 * What the URL's user may not do that svc needs, from three commands that change nothing: a write under the
 * prefix (DEL of a key svc never creates), a script (the run queue, BullMQ, runs Lua scripts) and INFO
 * (BullMQ's connections read the server's version with it). Other errors are left to the requests
 * (answered 503 while they last).
 */
async function accessDenied(
  redis: Redis,
  label: string,
  keyPrefix: string,
): Promise<{ problem: string; fix: string } | undefined> {
  // The channel too: the instances tell each other their session mirrors on it (mirror_to_session).
  const channel = redisKeys(keyPrefix).sessionMirrors();
  const grant = `let that user read and write the keys under "${keyPrefix}:" with every command (ACL SETUSER <user> ~${keyPrefix}:* &${channel} +@all)`;
  const denied = async (what: string, command: () => Promise<unknown>, fix: string) => {
    try {
      await command();
      return undefined;
    } catch (err) {
      const reason = (err as Error).message;
      if (!/^NOPERM/.test(reason)) return undefined;
      return { problem: `${label} does not let the user of state.redis_url ${what} (${reason})`, fix };
    }
  };
  return (
    (await denied(
      `use the keys under "${keyPrefix}:"`,
      () => redis.del(`${keyPrefix}:access-check`),
      `${grant}, or set state.redis_key_prefix to a prefix it may use`,
    )) ??
    // No prefix lifts a refusal of the scripting commands themselves.
    (await denied(
      "run Lua scripts, which svc's run queue (BullMQ) needs",
      () => redis.eval("return 1", 0),
      grant,
    )) ??
    // BullMQ reads the server's version with INFO before its worker takes a job: refused, the worker
    // retries without pause and the gateway stops answering at all (even /health). INFO is in
    // @dangerous, which ACLs written as `+@all -@dangerous` leave out.
    (await denied(
      "run INFO, which svc's run queue (BullMQ) needs to start",
      () => redis.info(),
      "let that user run INFO (ACL SETUSER <user> +info; an ACL of +@all -@dangerous leaves it out)",
    ))
  );
}

/**
 * A server every request would be answered 503 by, though it answers: one in cluster mode (`cluster-enabled
 * yes`, a managed service's cluster mode) refuses a command or script over keys in several hash slots
 * (CROSSSLOT), which BullMQ's scripts and svc's own use; a replica refuses writes (READONLY), or keeps them
 * from the other instances (`replica-read-only no`). The start says so instead. A server that does not say
 * (INFO refused otherwise than by its ACL, which `accessDenied` names) is left to the requests.
 */
async function unsuitableServer(
  redis: Redis,
  label: string,
): Promise<{ problem: string; fix: string } | undefined> {
  let info: string;
  try {
    info = await redis.info();
  } catch {
    return undefined;
  }
  const old = olderThanNeeded(info, label);
  if (old !== undefined) return old;
  if (/^cluster_enabled:1\b/m.test(info))
    return {
      problem: `${label} runs in cluster mode (cluster_enabled:1): svc's run queue (BullMQ) and its own scripts use several keys at once, which a Redis Cluster refuses across hash slots (CROSSSLOT), so every request would be answered 503`,
      fix: "point state.redis_url at a Redis with cluster mode off (cluster-enabled no in its redis.conf; with a managed Redis, its non-cluster mode): every instance shares that one server",
    };
  if (/^role:slave\b/m.test(info)) {
    const host = /^master_host:(\S+)/m.exec(info)?.[1];
    const port = /^master_port:(\d+)/m.exec(info)?.[1];
    const primary = host === undefined ? "its primary" : `${host}:${port ?? 6379}`;
    return {
      problem: `${label} is a replica of ${primary} (role:slave), which refuses or does not share svc's writes, so every request would be answered 503`,
      fix: `point state.redis_url at the primary${host === undefined ? "" : ` (${primary})`}, the server every instance writes to`,
    };
  }
  return undefined;
}
