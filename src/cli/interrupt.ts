import { SvcError } from "../errors.js";
import { letSignalsThrough } from "../io/heldSignals.js";
import { terminateLiveGroups } from "../io/mcp/stdioTransport.js";

/**
 * A Ctrl-C (or SIGTERM, or the SIGHUP of a terminal that closed) caught while a command waits on an MCP
 * server, so it can end the call properly.
 */
export interface Interrupt {
  /** Aborted by the first SIGINT, SIGTERM or SIGHUP: handed to the call, whose request the SDK then cancels. */
  readonly signal: AbortSignal;
  /** Rejects when the signal arrives (a connect still under way does not hold the command). */
  readonly interrupted: Promise<never>;
  /** Stops listening; the signal that arrived, if any, to be raised again once the servers are closed. */
  dispose(): NodeJS.Signals | undefined;
}

/**
 * SIGHUP too: a terminal that closes (an ssh session that drops) under the call would otherwise end the
 * command without a word to the server, which ran the call on and kept its HTTP session.
 */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The exit status a shell reports for a process ended by the signal (128 + its number). */
const EXIT_STATUS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/**
 * Listens for the first SIGINT, SIGTERM or SIGHUP. The command then cancels its call (the server gets
 * `notifications/cancelled`), closes its servers as usual (a Streamable HTTP session ends with DELETE, a
 * stdio process gets its stdin closed), and raises the signal again, so it still ends as a Ctrl-C does.
 * A second signal meanwhile finds no listener here and ends the process at once.
 */
export function listenForInterrupt(what: string): Interrupt {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  let reject: (err: SvcError) => void = () => undefined;
  const interrupted = new Promise<never>((_, fail) => {
    reject = fail;
  });
  interrupted.catch(() => undefined);
  const handlers = SIGNALS.map((signal) => {
    const handler = () => {
      if (received !== undefined) {
        // A second one: stop now, as the signal would have without us (a token refresh's save included).
        for (const [s, h] of handlers) process.off(s, h);
        letSignalsThrough();
        process.kill(process.pid, signal);
        return;
      }
      // Still listening: a stdio transport's own handler stands back while another listener is there.
      received = signal;
      const error = new SvcError("mcp_call", `interrupted (${signal}): ${what} was cancelled`);
      controller.abort(error);
      reject(error);
    };
    return [signal, handler] as const;
  });
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    signal: controller.signal,
    interrupted,
    dispose: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      return received;
    },
  };
}

/**
 * Ends the process by `signal`, as it would have ended without our listener: the remaining listeners
 * (a stdio transport's, whose servers are closed by now) are removed first, so the default action runs at
 * once rather than after the event loop has emptied and the process exited with 0.
 */
export function raiseAgain(signal: NodeJS.Signals): void {
  process.exitCode = EXIT_STATUS[signal] ?? 143;
  // A server still starting when the call was given up (its connect is abandoned, not awaited): no
  // process of ours may outlive us, and dying by a signal runs no "exit" handler.
  terminateLiveGroups();
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}
