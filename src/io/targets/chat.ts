import { createHash } from "node:crypto";
import { type Clock, systemClock } from "../../clock.js";
import { cutText } from "../cutText.js";
import { untilReady } from "../untilReady.js";
import type { HomeChannel } from "./givenRecipient.js";
import { namingChat } from "./refusedRecipient.js";
import { messageParts, type SizeUnit, sizeOf } from "./split.js";
import {
  DeliveryError,
  type DeliveryMessage,
  type DeliveryReceipt,
  type DeliveryTarget,
  PartlyDeliveredError,
  runOnce,
  type SendOptions,
  type StepRunner,
} from "./target.js";

/** What a platform's recipient is, where it is not a chat. */
const RECIPIENT_NOUNS: Readonly<Record<string, string>> = { sms: "number", email: "address" };

/**
 * The first of `keys` the route's `deliver_extra` sets, trimmed; undefined when it sets none. A route that
 * names its recipient never falls back to the home channel: one the payload rendered empty fails the
 * delivery, so a payload cannot steer a message into the operator's own chat (or notify service).
 */
export function routeRecipient(
  platform: string,
  message: DeliveryMessage,
  keys: readonly string[],
  recipient = RECIPIENT_NOUNS[platform] ?? "chat",
): string | undefined {
  const key = keys.find((name) => message.extra[name] !== undefined);
  const value = key === undefined ? undefined : (message.extra[key] as string).trim();
  if (value === "")
    throw new DeliveryError(
      `${platform}: deliver_extra.${key} of route "${message.route}" rendered empty — the message is not sent (never redirected to another ${recipient})`,
      false,
    );
  return value;
}

/**
 * `deliver_extra.chat_id`, else the platform's home channel (trimmed, as the route's is: a blank one, such
 * as `home_channel: ${HOME}` with `HOME=` in .env, is none), else `orElse` (Discord: the thread, a channel
 * of its own).
 */
export function resolveChatId(
  platform: string,
  message: DeliveryMessage,
  homeChannel: string | undefined,
  keys: readonly string[] = ["chat_id"],
  orElse?: string,
  unusedThread?: string,
): string {
  const home = homeChannel?.trim();
  const chatId = routeRecipient(platform, message, keys) ?? (home === "" ? undefined : home) ?? orElse;
  if (chatId === undefined || chatId === "") {
    // Email and SMS take `to` as well: the advice names every key the route could set.
    const named = keys.length > 1 ? `${keys[0]} (or ${keys.slice(1).join(", ")})` : keys[0];
    const set = `set deliver_extra.${named} on route "${message.route}" or platforms.${platform}.home_channel`;
    throw new DeliveryError(
      unusedThread === undefined
        ? `${platform}: no chat to deliver to — ${set}`
        : `${platform}: no chat to deliver to — ${unusedThread}; ${set} for events without a thread`,
      false,
    );
  }
  return chatId;
}

/**
 * Why a thread `deliver_extra` sets names no thread (see `threadOf`), for the advice when the thread was
 * the only place to deliver to (Discord); undefined when the route sets none.
 */
export function unusedThread(
  message: DeliveryMessage,
  keys: readonly string[] = ["message_thread_id", "thread_id"],
): string | undefined {
  const key = keys.find((name) => message.extra[name] !== undefined);
  if (key === undefined) return undefined;
  const value = (message.extra[key] as string).trim();
  const why = unfilledValue(message, key, value)
    ? `${JSON.stringify(value)} is a template the event did not fill: it has no such field`
    : value === "null"
      ? "the event's field is null"
      : "it rendered empty";
  return `deliver_extra.${key} of route "${message.route}" did not resolve (${why})`;
}

/**
 * How many `<chat> <thread>` pairs a target remembers as gone (Telegram's deleted topics, Mattermost's
 * deleted thread roots), so it does not ask for them again. A thread id may be rendered from the payload
 * (`message_thread_id: "{topic}"`), so the pairs are not only the configuration's few: past this many the
 * memory starts over, and a pair forgotten costs one refused request and its warning again.
 */
export const GONE_THREADS_KEPT = 256;

/** Remembers `key` in `gone`, which never holds more than GONE_THREADS_KEPT keys. */
export function rememberGoneThread(gone: Set<string>, key: string): void {
  if (gone.size >= GONE_THREADS_KEPT) gone.clear();
  gone.add(key);
}

const UNRESOLVED = /^\{[^{}\s]+\}$/;

/**
 * Whether a rendered `deliver_extra` value reads as a template the event did not fill (still `{path}`). A
 * field the event filled with a mapping renders as compact JSON, `{"id":17}`, of the same shape: that one
 * was filled (its keys are quoted), so it is no thread left out and no "has no such field" note. The text
 * alone: `unfilledValue` asks the message too.
 */
export const isUnfilledTemplate = (value: string): boolean =>
  UNRESOLVED.test(value) && !value.startsWith('{"');

/**
 * Whether `deliver_extra.<key>` may hold a placeholder the event did not fill: the message names the keys
 * whose template the rendering left unfilled, so a value the event filled with text in braces (a chat
 * titled `{team}`) is judged as the value it is. A message stored without that list, and a value no route
 * rendered (`key` undefined: the home channel), leave it to the text.
 */
const mayBeUnfilled = (message: Pick<DeliveryMessage, "unfilled">, key: string | undefined): boolean =>
  key === undefined || message.unfilled === undefined || message.unfilled.includes(key);

/** Whether `value`, rendered for `deliver_extra.<key>`, is a template the event did not fill (`{path}`). */
export const unfilledValue = (
  message: Pick<DeliveryMessage, "unfilled">,
  key: string | undefined,
  value: string,
): boolean => isUnfilledTemplate(value) && mayBeUnfilled(message, key);

/**
 * What an error about `value`, rendered for `deliver_extra.<key>`, adds when it is such a template (the
 * event lacks the field, not the route a fix), or `null`, as a field the event holds as a JSON null renders.
 */
export const unfilledNote = (
  message: Pick<DeliveryMessage, "unfilled">,
  key: string | undefined,
  value: string,
): string =>
  unfilledValue(message, key, value)
    ? " (a template the event did not fill: it has no such field)"
    : value === "null"
      ? ` (${NULL_FIELD})`
      : "";

/**
 * The forum topic / thread of `deliver_extra` (the first of `keys` that is set: `message_thread_id`,
 * else `thread_id`). A thread template the payload had no value for names no thread: one it lacks (e.g.
 * `{message.thread}` on an event outside any thread, left as written) or holds as null (`"thread": null`,
 * as JSON writers emit an unset optional field, which renders `null`). The message goes to the chat itself
 * rather than failing on a topic id `{message.thread}` or `null` that no platform accepts.
 */
export function threadOf(
  message: DeliveryMessage,
  keys: readonly string[] = ["message_thread_id", "thread_id"],
): string | undefined {
  for (const key of keys) {
    const thread = message.extra[key]?.trim();
    if (thread !== undefined && thread !== "" && thread !== "null" && !unfilledValue(message, key, thread))
      return thread;
  }
  return undefined;
}

/** One part of a (possibly split) message, as a chat adapter sends it. */
export interface ChatPart {
  readonly chatId: string;
  readonly text: string;
  /** 0-based position of the part. */
  readonly index: number;
  readonly message: DeliveryMessage;
  readonly signal: AbortSignal | undefined;
  /** What ends the part's waits (`SendOptions.waits`, else `signal`): Discord's for its rate-limit bucket. */
  readonly waits: AbortSignal | undefined;
  /** The platform's home channel, for the lines that name the chat (`shownRecipient`). */
  readonly home: HomeChannel;
}

export interface ChatTargetSpec extends HomeChannel {
  readonly name: string;
  /** The platform's documented message-size limit. */
  readonly limit: number;
  readonly unit?: SizeUnit;
  /** Rewrites the text before it is split (so the limit applies to what the platform receives). */
  prepare?(text: string): string;
  /**
   * Rewrites each part of a split text again, as the platform reads that part alone: a cut may end code
   * (a long code span) that `prepare` left as it was in the whole text. A part it makes longer than the
   * limit is split again.
   */
  preparePart?(part: string): string;
  /** The platform renders Markdown: a split keeps fenced code blocks closed in every part. */
  readonly markdown?: boolean;
  /** A thread is a channel of its own (Discord): `deliver_extra.thread_id` alone names where to post. */
  readonly threadIsChannel?: boolean;
  /** Whether a refusal is of the chat itself (unknown, or the bot removed from it): the failure names it. */
  chatRefused?(err: DeliveryError): boolean;
  check?(signal?: AbortSignal): Promise<string | undefined>;
  sendPart(part: ChatPart): Promise<unknown>;
  /**
   * The chat a message to `chatId` went to, by another name than `chatId` (a Telegram `@username` or a group
   * upgraded to a supergroup, a Matrix room alias), from its last part's answer (what `sendPart` returned): the
   * receipt names it, so the message is mirrored into the session of the chat that shows it.
   */
  deliveredTo?(chatId: string, answer: unknown): string;
  /** The gateway's clock's sleep, which a delivery's wait for the earlier ones to its chat runs on. */
  readonly sleep?: Clock["sleep"] | undefined;
}

/**
 * How long a delivery waits for the earlier ones to the same chat. A delivery waiting out a long
 * Retry-After must not hold a direct delivery (whose sender is waiting for the HTTP answer) for minutes:
 * past this, it goes ahead (its parts may then interleave with the stalled one's).
 */
export const CHAT_QUEUE_WAIT_MS = 10_000;

/**
 * Runs `task` in its recipient's turn; the wait ends with `options.waits` (else `signal`: the gateway's
 * stop), which then sends nothing. `task` sends each step through the runner it is given
 * (`options.runStep`'s, which tells the queue when an attempt failed: a delivery waiting behind one that
 * waits to retry calls `options.handBack`).
 */
export type RecipientQueue = <T>(
  key: string,
  options: SendOptions,
  signal: AbortSignal | undefined,
  task: (runStep: StepRunner) => Promise<T>,
) => Promise<T>;

/** One recipient's deliveries: the end of the last one queued, and what the ones waiting need to know. */
interface RecipientLine {
  tail: Promise<void>;
  /** How many of its deliveries had their last attempt fail: each waits to retry it (or is ending). */
  retrying: number;
  /** The hand-backs of deliveries waiting their turn, called once one of the line's attempts fails. */
  readonly behind: Set<() => void>;
}

/** How many deliveries joined a recipient's line in this process, of every target (`SendOptions.inLine`). */
let turns = 0;

/**
 * Runs `task` after every earlier task of the same key has finished (a FIFO per key), or after `maxWaitMs`
 * on `sleep`'s clock; a key is forgotten once every task queued under it has finished, so the map only holds
 * chats being delivered to. A task that went ahead of a stalled one does not end the key's queue: the next
 * one still waits for the stalled one (up to `maxWaitMs`), not only for the one that went ahead. A task that
 * waits while an earlier one of its key waits to retry a failed attempt calls its `handBack` (an agent run's
 * slot goes back, as other routes' runs need it, and the task then waits its whole turn: `waitTurn`); so
 * does one behind a task that resumes a retry (`options.resumesRetry`) until that task's first attempt.
 */
function serialiser(maxWaitMs: number, sleep: Clock["sleep"]): RecipientQueue {
  const lines = new Map<string, RecipientLine>();
  return async (key, options, signal, task) => {
    turns += 1;
    options.inLine?.(turns);
    let line = lines.get(key);
    const previous = line?.tail;
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    if (line === undefined || previous === undefined) {
      line = { tail: done, retrying: 0, behind: new Set() };
      lines.set(key, line);
    } else line.tail = previous.then(() => done);
    const own = line;
    const tail = own.tail;
    void tail.then(() => {
      if (lines.get(key) === own && own.tail === tail) lines.delete(key);
    });
    const runStep = options.runStep ?? runOnce;
    /** Whether this task's last attempt failed (counted in `own.retrying`). */
    let failed = false;
    const settle = () => {
      if (!failed) return;
      failed = false;
      own.retrying -= 1;
    };
    const tracked: StepRunner = (step, part) =>
      runStep(async () => {
        settle();
        try {
          return await step();
        } catch (err) {
          failed = true;
          own.retrying += 1;
          for (const handBack of own.behind) handBack();
          own.behind.clear();
          throw err;
        }
      }, part);
    try {
      if (previous !== undefined) await waitTurn(own, previous, options, signal, maxWaitMs, sleep);
      // Its first step waits for a retry it waited for before a restart (or another instance's stop): in
      // its turn, counted as retrying until that attempt is made, as a retry's wait of its own would be.
      if (options.resumesRetry === true) {
        failed = true;
        own.retrying += 1;
        for (const handBack of own.behind) handBack();
        own.behind.clear();
      }
      return await task(tracked);
    } finally {
      settle();
      release();
    }
  };
}

/**
 * Waits for `previous` (up to `maxWaitMs`), handing the run's slot back (`options.handBack`) while an
 * earlier delivery of the line waits to retry: at once, or when one fails meanwhile. One that handed its slot
 * back holds up no other run and no sender (the 10 s bound is for those): it waits its whole turn, so the
 * replies queued behind a retrying one keep their order (their parts do not interleave) and are not sent,
 * each after 10 s, to a chat that refuses or rate-limits what it is sent.
 */
async function waitTurn(
  line: RecipientLine,
  previous: Promise<void>,
  options: SendOptions,
  signal: AbortSignal | undefined,
  maxWaitMs: number,
  sleep: Clock["sleep"],
): Promise<void> {
  const waits = options.waits ?? signal;
  const { handBack } = options;
  if (handBack === undefined) return waitBehind(previous, maxWaitMs, sleep, waits);
  let handedBack: Promise<unknown> | undefined;
  const unbounded = new AbortController();
  const hand = () => {
    // Unbounded only once the slot went back: a run that keeps its slot (the cap) waits 10 s at most.
    handedBack = Promise.resolve(handBack()).then((out) => {
      if (out) unbounded.abort();
    });
    // Awaited below once the wait is over; a wait the stop ends leaves it unawaited.
    handedBack.catch(() => {});
  };
  if (line.retrying > 0) hand();
  else line.behind.add(hand);
  try {
    await waitBehind(previous, maxWaitMs, sleep, waits, unbounded.signal);
  } finally {
    line.behind.delete(hand);
  }
  await handedBack;
}

/**
 * Resolves once `previous` has ended or `ms` have passed on the clock, whichever is first; rejects with
 * the signal's reason when `signal` is aborted first (the gateway stopping: the delivery is not sent).
 * Once `unbounded` is aborted (the delivery's run handed its slot back) the time no longer counts: it
 * resolves once `previous` has ended.
 */
async function waitBehind(
  previous: Promise<void>,
  ms: number,
  sleep: Clock["sleep"],
  signal: AbortSignal | undefined,
  unbounded?: AbortSignal,
): Promise<void> {
  signal?.throwIfAborted();
  if (unbounded?.aborted !== true) {
    const over = new AbortController();
    const onAbort = () => over.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    unbounded?.addEventListener("abort", onAbort, { once: true });
    void previous.then(() => over.abort());
    try {
      await sleep(ms, over.signal);
    } catch (err) {
      if (!over.signal.aborted) throw err;
    } finally {
      over.abort();
      signal?.removeEventListener("abort", onAbort);
      unbounded?.removeEventListener("abort", onAbort);
    }
    signal?.throwIfAborted();
  }
  if (unbounded?.aborted === true) await untilReady(previous, signal);
}

/**
 * A FIFO per recipient for one target: deliveries to one chat (an SMS number, a pull request) go one
 * after another, each waiting at most CHAT_QUEUE_WAIT_MS for the earlier ones, on the gateway's clock
 * (`sleep`, the system clock's by default).
 */
export function recipientQueue(sleep: Clock["sleep"] = systemClock.sleep): RecipientQueue {
  return serialiser(CHAT_QUEUE_WAIT_MS, sleep);
}

/**
 * A route's recipient (`deliver_extra.chat_id`; for SMS also `to`: the first of `keys` the route sets) that
 * is a template the event did not fill (`{build.chat}` for an event without that field) or filled with a
 * JSON null (`"chat": null`, as JSON writers send an unset optional field, renders `null`) names no
 * recipient: sent as it is, the platform refuses it as an unknown chat or number, which does not say the
 * event lacked the field. Refused like one that rendered empty, never sent to another chat.
 */
export function refuseUnfilledRecipient(
  platform: string,
  message: DeliveryMessage,
  keys: readonly string[] = ["chat_id"],
  recipient = "chat",
): void {
  const key = keys.find((name) => message.extra[name] !== undefined);
  const value = key === undefined ? undefined : message.extra[key]?.trim();
  if (value === undefined) return;
  const why = unfilledValue(message, key, value)
    ? `${JSON.stringify(value)} is a template the event did not fill: it has no such field`
    : (partlyUnfilled(message, key as string, value) ?? (value === "null" ? NULL_FIELD : undefined));
  if (why !== undefined) throw unresolvedRecipient(platform, message, key as string, why, recipient);
}

/** A placeholder as a template writes one (`{user.phone}`; a path of no spaces, braces or empty parts). */
const PLACEHOLDER_INSIDE = /\{[^\s{}."]+(?:\.[^\s{}."]+)*\}/;

/**
 * Why a rendered recipient that still holds a placeholder beside other text (`@{team}_alerts`,
 * `+1{user.phone}`, `{user.login}@example.com` for an event without the field) names no recipient, or
 * undefined. A field the event filled with a mapping renders as compact JSON, whose keys are quoted
 * (`{"id":1}`): that is no placeholder; nor are braces the event filled in (`@{team}_alerts` from
 * `@{owner}_alerts` with `"owner": "{team}"`), which the message does not name as unfilled. A recipient that
 * is a placeholder alone is `unfilledValue`'s.
 */
export function partlyUnfilled(
  message: Pick<DeliveryMessage, "unfilled">,
  key: string,
  value: string,
): string | undefined {
  if (isUnfilledTemplate(value) || !mayBeUnfilled(message, key)) return undefined;
  const inside = PLACEHOLDER_INSIDE.exec(value)?.[0];
  return inside === undefined
    ? undefined
    : `${JSON.stringify(cutText(value, 100))} holds ${inside}, a placeholder the event did not fill: it has no such field`;
}

/** The failure of a delivery whose recipient `deliver_extra.<key>` did not resolve, and why. */
export function unresolvedRecipient(
  platform: string,
  message: DeliveryMessage,
  key: string,
  why: string,
  recipient: string,
): DeliveryError {
  return new DeliveryError(
    `${platform}: deliver_extra.${key} of route "${message.route}" did not resolve (${why}) — the message is not sent (never redirected to another ${recipient})`,
    false,
  );
}

/** Why a recipient filled with a JSON null (which renders `null`) names none. */
export const NULL_FIELD = "the event's field is null";

/**
 * A chat platform target (chat_1..chat_13): resolves the chat, splits the text to the platform's limit
 * and sends the parts in order, each as one (retryable) step. Deliveries to one chat go one after
 * another (up to CHAT_QUEUE_WAIT_MS each), so the parts of two long texts do not interleave.
 */
export function chatTarget(spec: ChatTargetSpec): DeliveryTarget {
  const oneAtATime = recipientQueue(spec.sleep);
  return {
    name: spec.name,
    chat: true,
    ...(spec.check === undefined ? {} : { check: spec.check }),
    async send(message, signal, options: SendOptions = {}): Promise<DeliveryReceipt> {
      refuseUnfilledRecipient(spec.name, message);
      const chatId = resolveChatId(
        spec.name,
        message,
        spec.homeChannel,
        ["chat_id"],
        spec.threadIsChannel === true ? threadOf(message) : undefined,
        spec.threadIsChannel === true ? unusedThread(message) : undefined,
      );
      const parts = chatParts(message.text, spec);
      const waits = options.waits ?? signal;
      let answer: unknown;
      await oneAtATime(chatId, options, signal, async (runStep) => {
        for (const [index, text] of partsToSend(parts, options.fromPart)) {
          try {
            answer = await runStep(
              () => spec.sendPart({ chatId, text, index, message, signal, waits, home: spec }),
              index,
            );
          } catch (caught) {
            const err =
              caught instanceof DeliveryError && spec.chatRefused?.(caught) === true
                ? namingChat(
                    caught,
                    spec.name,
                    message,
                    chatId,
                    spec.threadIsChannel === true ? threadOf(message) : undefined,
                    spec,
                  )
                : caught;
            throw index === 0 ? err : partlyDelivered(err, index, parts.length);
          }
        }
      });
      return { chatId: spec.deliveredTo?.(chatId, answer) ?? chatId, parts: parts.length };
    },
  };
}

/**
 * The parts `text` is sent in: prepared, split to the platform's limit, and each part of a split text
 * prepared again on its own (`preparePart`); one that grew past the limit is split again, and its parts
 * prepared again. That ends, since a rewrite adds only what is not there yet (a backslash before a `(` that
 * has none): a part grows only where a cut ended code, and the parts it is split into keep what it got.
 */
function chatParts(text: string, spec: ChatTargetSpec): string[] {
  const options = {
    ...(spec.unit === undefined ? {} : { unit: spec.unit }),
    markdown: spec.markdown === true,
  };
  const split = (prepared: string) => messageParts(prepared, spec.limit, options);
  const parts = split(spec.prepare === undefined ? text : spec.prepare(text));
  const again = spec.preparePart;
  if (again === undefined || parts.length === 1) return parts;
  const out: string[] = [];
  const pending = parts.reverse();
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    const prepared = again(part);
    if (prepared === part || sizeOf(prepared, options.unit ?? "chars") <= spec.limit) out.push(prepared);
    else pending.push(...split(prepared).reverse());
  }
  return out;
}

/**
 * A split message's parts with their indexes, from part `fromPart` on (`SendOptions.fromPart`: the ones
 * before it were delivered by the instance that handed the delivery on). A `fromPart` that is not one of
 * `parts` (the text split otherwise here: another platform limit than that instance's) leaves no part known
 * as delivered: all are sent.
 */
export function partsToSend<T>(parts: readonly T[], fromPart = 0): Iterable<[number, T]> {
  if (fromPart <= 0 || fromPart >= parts.length) return parts.entries();
  return [...parts.entries()].slice(fromPart);
}

/** A failure after earlier parts went out: the operator needs to know the chat holds part of the text. */
export function partlyDelivered(err: unknown, index: number, total: number): unknown {
  if (!(err instanceof DeliveryError)) return err;
  return new PartlyDeliveredError(
    err,
    ` (part ${index + 1} of ${total}; part${index === 1 ? " 1 was" : `s 1-${index} were`} delivered)`,
  );
}

/**
 * One part of one delivery, the same on every attempt: `svc-<route>-<delivery id>-<part>-<text>`, where
 * `<text>` is 8 characters of the text's SHA-256. Platforms that de-duplicate requests by a client-chosen
 * key (Matrix's transaction id, Discord's nonce, Mattermost's pending_post_id, Feishu's uuid; an email's
 * Message-ID) then post a part once, however often a lost answer (a timeout, a 5xx after the platform
 * posted) makes it be sent. Delivery ids are unique per route only, so the route is part of it; and one
 * delivery id may be run again with another reply (GitHub's redelivery keeps its X-GitHub-Delivery, and
 * is processed anew once the idempotency hour is over; a run saved at a stop runs again at the next
 * start), whose text then gets a key of its own rather than the earlier message's (a mailbox would hide
 * the new mail behind the old Message-ID, and a Matrix server answer the new text with the old event).
 */
export function partKey(message: DeliveryMessage, index: number): string {
  const text = createHash("sha256").update(message.text).digest("base64url").slice(0, 8);
  return `svc-${message.route}-${message.deliveryId}-${index}-${text}`;
}

/** `partKey` hashed to `length` base64url characters, for a platform that caps its key's length. */
export function hashedPartKey(message: DeliveryMessage, index: number, length: number): string {
  return createHash("sha256").update(partKey(message, index)).digest("base64url").slice(0, length);
}

/** Converts a numeric id (`"12"`) to a number, as JSON APIs expect; other ids stay strings. */
export function numericOrString(value: string): number | string {
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}
