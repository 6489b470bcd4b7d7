import type { Socket } from "node:net";
import type { buildConnector } from "undici";

/**
 * Where a url server's connections stopped when nothing answered: the TCP connect (nothing took it) or the
 * TLS handshake after it (the server took the connection and never answered TLS). `address` is `host:port`.
 */
export interface ConnectStall {
  readonly stage: "tcp" | "tls";
  readonly address: string;
}

interface Attempt {
  readonly address: string;
  readonly tls: boolean;
  /** The server took the TCP connection. */
  taken: boolean;
  /** Its socket while it is being made. */
  socket?: Socket | undefined;
}

/** Ends a connection svc gave up while it was being made (undici's connector hears only of an error). */
class GivenUpError extends Error {
  constructor() {
    super("the connection was given up before it was made");
  }
}

/**
 * The TCP connects and TLS handshakes of one url server's connect, watched at undici's connector: the
 * requests above them (the preflight's, the SSE stream's GET) are given up and retried before undici's own
 * connect timeout reports anything, so only here does it show that the server never answered TLS.
 */
export class ConnectAttempts {
  /** Connections not made yet: `abandon` ends them. */
  readonly #connecting = new Set<Socket>();
  /** Those still waiting for an answer, or given up by undici's connect timeout, until one is made. */
  readonly #unanswered: Attempt[] = [];
  #made = false;

  /** `connector`, its attempts watched. */
  watch(connector: buildConnector.connector): buildConnector.connector {
    return (options, callback) => {
      const tls = options.protocol === "https:";
      const attempt: Attempt = {
        address: `${options.hostname}:${options.port || (tls ? "443" : "80")}`,
        tls,
        taken: false,
      };
      if (!this.#made) this.#unanswered.push(attempt);
      let socket: Socket | undefined;
      let settled = false;
      // undici's connector returns the socket it opens (its type leaves that out).
      const opened = (connector as (...args: Parameters<buildConnector.connector>) => unknown)(
        options,
        (...result) => {
          settled = true;
          attempt.socket = undefined;
          if (socket !== undefined) this.#connecting.delete(socket);
          const [err] = result;
          if (err === null) this.#connected();
          // Refused, reset, a certificate refused: a failure of its own, which its request reports.
          else if (!(err instanceof GivenUpError) && !isConnectTimeout(err)) this.#forget(attempt);
          callback(...result);
        },
      );
      if (settled || !isSocket(opened)) return;
      socket = opened;
      attempt.socket = socket;
      this.#connecting.add(socket);
      socket.once("connect", () => {
        attempt.taken = true;
      });
    };
  }

  /**
   * Where the server stopped answering, when the connections show it: none was made (had one been, the
   * server answered TLS and stopped later), and one waited for the server's TLS, or for its TCP connect.
   */
  stall(): ConnectStall | undefined {
    const handshake = this.#unanswered.findLast((a) => a.taken && a.tls);
    if (handshake !== undefined) return { stage: "tls", address: handshake.address };
    const connect = this.#unanswered.findLast((a) => !a.taken && !connectedBelow(a.socket));
    return connect === undefined ? undefined : { stage: "tcp", address: connect.address };
  }

  /**
   * Ends the connections still being made: undici would hold each open until its own connect timeout (up
   * to 10 s), past the connect that gave up on it, and a command would wait for it to exit.
   */
  abandon(): void {
    for (const socket of this.#connecting) socket.destroy(new GivenUpError());
    this.#connecting.clear();
  }

  #connected(): void {
    this.#made = true;
    this.#unanswered.length = 0;
  }

  #forget(attempt: Attempt): void {
    const at = this.#unanswered.indexOf(attempt);
    if (at >= 0) this.#unanswered.splice(at, 1);
  }
}

/**
 * Whether the system has made the socket's TCP connection though its `connect` event has not run yet: on a
 * busy machine a connect's own timer can fire first, and the server would be said to take no connection.
 */
function connectedBelow(socket: Socket | undefined): boolean {
  const handle = (socket as { _handle?: { getpeername?: (out: object) => number } } | undefined)?._handle;
  return handle?.getpeername?.({}) === 0;
}

function isSocket(value: unknown): value is Socket {
  return typeof (value as Socket | undefined)?.destroy === "function";
}

function isConnectTimeout(err: Error): boolean {
  return (err as NodeJS.ErrnoException).code === "UND_ERR_CONNECT_TIMEOUT";
}
