import type { Clock } from "../../clock.js";

/** What both HTTP implementations (uWS, node:http) take to listen and hand back once listening. */

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** The linger timers of a sender answered before its body ended (default the system clock). */
  readonly clock?: Clock;
}

export interface ServerHandle {
  readonly impl: "uws" | "node";
  readonly host: string;
  /** The real port (the one picked when asked for 0). */
  readonly port: number;
  /** Stops accepting connections. */
  close(): void;
}
