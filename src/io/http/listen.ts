import type { Clock } from "../../clock.js";

/** What both HTTP implementations (uWS, node:http) take to listen and hand back once listening. */

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /**
   * The linger timers of a sender answered before its body ended, and uWS's sweep of the bodies past the
   * request deadline (default the system clock).
   */
  readonly clock?: Clock;
  /**
   * Let other listeners in this process bind the same port (`SO_REUSEPORT`): the ingress threads of
   * `platforms.webhook.workers`. Off by default, so a second gateway on a port fails to start.
   */
  readonly sharedPort?: boolean;
}

/**
 * The request deadline: a request whose head and body are not all in this long after its first byte is
 * closed (node:http answers it 408 first). uWS's own idle timeout ends only a silent connection, so the uWS
 * adapter enforces it on the bodies still arriving, counted from the end of the head (uWS gives the head
 * its own 10 s and tells nothing of a request before its head is in).
 */
export const REQUEST_DEADLINE_MS = 10_000;

/** How often the requests are looked over for one past REQUEST_DEADLINE_MS (on both servers). */
export const DEADLINE_CHECK_MS = 1_000;

/** How long the end of a stop waits for the answers still owed before it closes the connections. */
export const STOP_GRACE_MS = 5_000;

export interface ServerHandle {
  readonly impl: "uws" | "node";
  readonly host: string;
  /** The real port (the one picked when asked for 0). */
  readonly port: number;
  /** Stops accepting connections; the open ones are still read and answered. */
  close(): void;
  /**
   * After `close`, at the end of a stop: sends the answers still owed, closes the open connections and
   * resolves once the listener let go of everything (its ingress threads ended). Without it the open
   * connections last as long as the process.
   */
  ended?(): Promise<void>;
  /** A reload changed `max_body_bytes`: ingress threads, which read each body at once, read later ones with it. */
  setBodyLimit?(bytes: number): void;
}
