import type { Clock } from "../../clock.js";
import type { Logger } from "../log.js";

/** A message on its way to a delivery target. */
export interface DeliveryMessage {
  readonly text: string;
  /** `deliver_extra`, already rendered against the payload. */
  readonly extra: Readonly<Record<string, string>>;
  /**
   * The route's `deliver_extra` as written, before rendering: what in `extra` the route itself names and what
   * the payload filled in. Absent for a cron job's, which is never rendered.
   */
  readonly written?: Readonly<Record<string, string | number | boolean>> | undefined;
  /**
   * The keys of `extra` whose template left a placeholder as written: the event has no such field. None on a
   * cron job's, which is never rendered (a value in braces is the value). Absent on a run stored by a version
   * that did not record them: a value there that is a placeholder (`{build.chat}`) is taken as one the event
   * did not fill.
   */
  readonly unfilled?: readonly string[] | undefined;
  readonly route: string;
  readonly deliveryId: string;
  readonly profile: string | undefined;
}

export interface DeliveryReceipt {
  /** The chat (or recipient) the message went to, for session mirroring. */
  readonly chatId?: string;
  /** How many platform messages the text was split into. */
  readonly parts?: number;
}

/**
 * Runs one externally visible step of a send (one HTTP request, one SMTP message); `part`: which part of a
 * split message it sends (0-based; 0 for a message sent whole). The deliverer passes a retrying runner in
 * agent mode; each step is retried on its own, so the parts of a split message that already went out are
 * not sent twice.
 */
export type StepRunner = <T>(step: () => Promise<T>, part?: number) => Promise<T>;

export interface SendOptions {
  readonly runStep?: StepRunner;
  /**
   * Ends the delivery's waits (its turn behind the earlier deliveries to its recipient, a rate-limit
   * bucket) but not a request under way; the send's `signal` when not given. A direct delivery's is the
   * gateway's stop: its sender is answered at once, and a request the stop cut off might have been posted.
   */
  readonly waits?: AbortSignal | undefined;
  /**
   * Called when the delivery waits its turn behind an earlier delivery to its recipient that waits to retry
   * a failed attempt (at once, or once that one fails while this waits): an agent run hands its run slot
   * back then, as it does before a retry's wait of its own (`RunSlot.release`), so a target that is down
   * does not hold the slots by the deliveries queued behind its retrying one. True when the run no longer
   * holds a slot (false: at the cap of runs outside their slots, it keeps it). Awaited before the send.
   */
  readonly handBack?: (() => boolean | Promise<boolean>) | undefined;
  /**
   * The delivery goes on with a retry it waited for before (a stop saved it, or another instance handed it
   * on): its first step waits until that retry is due (`runStep`'s), in its recipient's turn, and the
   * deliveries queued behind it wait as behind one that waits to retry (`handBack`), so a later reply to the
   * recipient is not sent between its parts.
   */
  readonly resumesRetry?: boolean | undefined;
  /**
   * Told the delivery's place as it joins its recipient's line, in the order deliveries join their recipients'
   * lines in this process (increasing): a stop that hands on the runs whose deliveries wait there hands them
   * on in that order (`state.backend: redis`), so a recipient gets them in the order it would have here.
   */
  readonly inLine?: ((turn: number) => void) | undefined;
  /**
   * The parts of a split message already delivered (0-based: the part the send starts with): another
   * instance sent them before it handed the delivery on while it waited to retry the next one
   * (`state.backend: redis`). `partsToSend` in chat.ts.
   */
  readonly fromPart?: number | undefined;
  /**
   * The recipients a mail still goes to: another instance's attempt reached the others, and it handed the
   * delivery on while it waited to retry these, refused for now (`RecipientsRefusedForNow`).
   */
  readonly recipients?: readonly string[] | undefined;
  /**
   * A stop that cuts the delivery short keeps its run for another instance, which goes on where it stood
   * (`state.backend: redis`: the retry's wait stores it). Without it the stop's run is replayed whole.
   */
  readonly handsOn?: boolean | undefined;
}

export const runOnce: StepRunner = (step) => step();

/** One delivery platform. `send` rejects with a DeliveryError when the platform refuses. */
export interface DeliveryTarget {
  /** Canonical name (`log`, `telegram`, `forge_comment`, ...). */
  readonly name: string;
  /** True for chat platforms (chat_1..chat_13): their deliveries can be mirrored into sessions. */
  readonly chat?: boolean;
  /** Its send neither waits nor fails transiently (`log`): it is given no step runner and no options. */
  readonly inProcess?: true;
  /** Checks credentials at startup (e.g. Telegram getMe); resolves with who we are connected as, rejects with a message for the operator. */
  check?(signal?: AbortSignal): Promise<string | undefined>;
  send(message: DeliveryMessage, signal?: AbortSignal, options?: SendOptions): Promise<DeliveryReceipt>;
}

export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    /** Worth retrying (429, 5xx, connection errors). */
    readonly transient: boolean,
    /** Seconds the platform asked us to wait (Retry-After). */
    readonly retryAfterSeconds?: number,
    /** The platform's parsed answer to a refused request, for adapters that act on its fields. */
    readonly answer?: unknown,
  ) {
    super(message);
  }
}

export interface TargetDeps {
  readonly logger: Logger;
  /** Environment for child processes (forge_comment's `gh`); defaults to process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The clock a cached access token's lifetime is counted on: the gateway's clock durations are measured on
   * (`Clock.elapsed`, never set, so a step of the wall clock neither keeps a token past its expiry nor throws
   * one away early); defaults to the system clock's.
   */
  readonly now?: () => number;
  /**
   * The gateway's clock's sleep, which a delivery's wait for the earlier ones to its recipient runs on
   * (`recipientQueue`), as Discord's wait for its rate-limit bucket does; defaults to the system clock's.
   */
  readonly sleep?: Clock["sleep"] | undefined;
  /**
   * The gateway's clock durations are measured on (`Clock.elapsed`): when a Discord bucket that said
   * `X-RateLimit-Reset-After` resets; defaults to the system clock's.
   */
  readonly elapsed?: Clock["elapsed"] | undefined;
}

/**
 * A split message's failure after its first parts went out (`partlyDelivered`): `partsNote` says which did,
 * ` (part 3 of 5; parts 1-2 were delivered)`, at the end of the message too.
 */
export class PartlyDeliveredError extends DeliveryError {
  constructor(
    failure: DeliveryError,
    readonly partsNote: string,
  ) {
    super(`${failure.message}${partsNote}`, failure.transient, failure.retryAfterSeconds, failure.answer);
  }
}

/**
 * A message the platform took for some of its recipients and refused for now for the others (an SMTP
 * server's 4xx at `RCPT TO`): its retry goes to `recipients` alone.
 */
export class RecipientsRefusedForNow extends DeliveryError {
  constructor(
    message: string,
    readonly recipients: readonly string[],
  ) {
    super(message, true);
  }
}
