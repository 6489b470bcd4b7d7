import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { Clock } from "../../../clock.js";
import { PROFILE_NAME } from "../../../config/paths.js";
import { describeError } from "../../../errors.js";
import type { Logger } from "../../log.js";
import type { MirrorShare, ToldMirror } from "../../sessions/mirror.js";
import { isRefusal, type RedisHealth } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/**
 * `mirror_to_session` across the instances sharing one Redis: a chat's session lives in the home of the
 * instance whose chat front end made it, while the delivery may run on any instance. The instance that
 * delivered writes the mirror into its own home and publishes it on `<prefix>:session-mirrors`; every other
 * instance subscribed appends it to its own session of that chat, if it has one. Pub/Sub keeps nothing: an
 * instance that is down (or reconnecting) when a mirror is published misses it — best-effort, as the mirror is.
 */
export interface SharedSessionMirrors extends MirrorShare {
  /**
   * Subscribes to the other instances' mirrors (`on`), on a connection of its own, or unsubscribes and
   * closes that connection: only an instance with a route that mirrors subscribes (the gateway tells it at
   * start, at a reload and when the subscriptions change). Resolves once subscribed, refused, or after the
   * subscribe wait (a Redis that does not answer is not waited on). Never rejects.
   */
  receive(on: boolean): Promise<void>;
  /** Unsubscribes, then waits for the mirrors received before to be written. */
  close(): Promise<void>;
}

export interface SharedSessionMirrorsOptions {
  /** The commands connection: mirrors are published on it. The subscription gets a connection of its own. */
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly health: RedisHealth;
  readonly logger: Logger;
  /** Writes a mirror another instance told into this instance's session of that chat. Never rejects. */
  write(mirror: ToldMirror): Promise<void>;
  /** How long a subscription is waited for at most (a Redis that does not answer is not waited on). */
  readonly subscribeWaitMs?: number;
  /** The subscribe wait's timers (tests: a fake clock's). */
  readonly timers?: Pick<Clock, "setTimeout" | "clearTimeout">;
}

/** What goes on the channel: the mirror, and which instance published it (it wrote it already). */
interface Published extends ToldMirror {
  readonly from: string;
}

const SUBSCRIBE_WAIT_MS = 2000;
const CLOSE_WAIT_MS = 2000;

/** A message of the channel as svc publishes it; undefined for anything else (another program's message). */
function parsePublished(text: string): Published | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const strings = ["from", "platform", "chatId", "route", "text", "at"] as const;
  if (strings.some((name) => typeof fields[name] !== "string")) return undefined;
  const { profile } = fields;
  // The profile names a directory of the home: only a profile's name is taken.
  if (profile !== undefined && (typeof profile !== "string" || !PROFILE_NAME.test(profile))) return undefined;
  if (Number.isNaN(Date.parse(fields.at as string))) return undefined;
  return value as Published;
}

/** What the channel's users need from an ACL, as the log says it. */
export const channelGrant = (channel: string) =>
  `let the user of state.redis_url use the channel ${channel} (ACL SETUSER <user> &${channel})`;

/**
 * How this instance tells the other instances its mirrors, and follows theirs once `receive(true)` is
 * called: until then it opens no connection and subscribes to nothing.
 */
export function sharedSessionMirrors(options: SharedSessionMirrorsOptions): SharedSessionMirrors {
  const { redis, keys, health, logger } = options;
  const timers = options.timers ?? { setTimeout, clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout) };
  const channel = keys.sessionMirrors();
  // This process's own: the mirrors it published come back to it, and are already written.
  const self = randomUUID();
  const grant = channelGrant(channel);
  const writing = new Set<Promise<void>>();

  /** Subscribes on a connection of its own; returns how to close it. */
  async function subscribe(): Promise<() => Promise<void>> {
    // A connection that subscribed takes no other command. It waits out an outage as the others do
    // (the commands connection's outage line says it) and subscribes again once Redis is back.
    const subscriber = redis.duplicate({
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
      autoResubscribe: true,
    });
    subscriber.on("error", () => {});
    subscriber.on("message", (from: string, text: string) => {
      if (from !== channel) return;
      const published = parsePublished(text);
      if (published === undefined || published.from === self) return;
      const { from: _from, ...mirror } = published;
      const written = options.write(mirror).finally(() => writing.delete(written));
      writing.add(written);
    });
    let timer: unknown;
    const subscribed = subscriber.subscribe(channel).then(
      () => true,
      (err: unknown) => {
        // Not a refusal: the connection closed before Redis answered (a stop during the start).
        if (!isRefusal(err)) return false;
        logger.warn(
          { channel, err: describeError(err) },
          `[state] session mirrors of the other instances' deliveries not received: Redis refused the subscription to ${channel} (${describeError(err)}) — ${grant}`,
        );
        return false;
      },
    );
    await Promise.race([
      subscribed,
      new Promise<void>((resolve) => {
        timer = timers.setTimeout(resolve, options.subscribeWaitMs ?? SUBSCRIBE_WAIT_MS);
      }),
    ]);
    timers.clearTimeout(timer);
    return async () => {
      if (subscriber.status === "ready") {
        let wait: NodeJS.Timeout | undefined;
        await Promise.race([
          subscriber.quit().catch(() => {}),
          new Promise((resolve) => {
            wait = setTimeout(resolve, CLOSE_WAIT_MS);
          }),
        ]);
        clearTimeout(wait);
      }
      subscriber.disconnect();
    };
  }

  /** Closes the subscription, while there is one. */
  let unsubscribe: (() => Promise<void>) | undefined;
  let closed = false;
  /** One change of the subscription at a time, in the order asked for. */
  let turn: Promise<void> = Promise.resolve();
  const inTurn = (change: () => Promise<void>) => {
    turn = turn.then(change).catch(() => {});
    return turn;
  };

  /** Said once until a mirror is published again. */
  let failing = false;
  return {
    async tell(mirror) {
      // Answered at once (no offline queue) while Redis is down; the outage is said on its own.
      try {
        await redis.publish(channel, JSON.stringify({ ...mirror, from: self }));
        failing = false;
        return true;
      } catch (err) {
        if (failing || health.inOutage()) return false;
        failing = true;
        logger.warn(
          { route: mirror.route, err: describeError(err) },
          `[delivery] mirror_to_session: not told to the other instances (${describeError(err)}), so only this instance's session of ${mirror.platform} chat ${mirror.chatId} has it (said once until one is told again)${/^NOPERM/.test(describeError(err)) ? ` — ${grant}` : ""}`,
        );
        return false;
      }
    },
    receive(on) {
      return inTurn(async () => {
        if (closed || on === (unsubscribe !== undefined)) return;
        if (on) {
          unsubscribe = await subscribe();
          return;
        }
        const closing = unsubscribe;
        unsubscribe = undefined;
        await closing?.();
      });
    },
    async close() {
      closed = true;
      await inTurn(async () => {
        const closing = unsubscribe;
        unsubscribe = undefined;
        await closing?.();
      });
      while (writing.size > 0) await Promise.all([...writing]);
    },
  };
}
