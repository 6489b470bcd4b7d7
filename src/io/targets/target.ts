import type { Logger } from "../log.js";

/** A message on its way to a delivery target. */
export interface DeliveryMessage {
  readonly text: string;
  /** `deliver_extra`, already rendered against the payload. */
  readonly extra: Readonly<Record<string, string>>;
  readonly route: string;
  readonly deliveryId: string;
  readonly profile: string | undefined;
}

export interface DeliveryReceipt {
  /** The chat (or recipient) the message went to, for session mirroring. */
  readonly chatId?: string;
}

/** One delivery platform. `send` rejects with a DeliveryError when the platform refuses. */
export interface DeliveryTarget {
  /** Canonical name (`log`, `telegram`, `forge_comment`, ...). */
  readonly name: string;
  /** Checks credentials at startup (e.g. Telegram getMe); rejects with a message for the operator. */
  check?(signal?: AbortSignal): Promise<void>;
  send(message: DeliveryMessage, signal?: AbortSignal): Promise<DeliveryReceipt>;
}

export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    /** Worth retrying (429, 5xx, connection errors). */
    readonly transient: boolean,
    /** Seconds the platform asked us to wait (Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface TargetDeps {
  readonly logger: Logger;
}
