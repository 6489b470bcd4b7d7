import type { RequestHead } from "./core.js";

/** What an ingress thread starts with. */
export interface ThreadSetup {
  readonly host: string;
  readonly port: number;
  /** The body limit (`max_body_bytes`) each request is read with; a reload sends a `limit` item. */
  readonly bodyLimit: number;
  /** How many ingress threads there are: each buffers its share of the bodies (`BodyBudget`). */
  readonly threads: number;
  /**
   * A count the main thread raises while its event loop runs (`Int32Array` of one), and how long it may
   * stay unchanged before the main thread counts as stuck: `/health` is then left to the main thread.
   */
  readonly mainBeat: SharedArrayBuffer;
  readonly mainStaleMs: number;
  /** The gateway's instance id, which the thread's `/health` 200 names (`healthAnswer`), as the main thread's does. */
  readonly instance?: string;
}

export type Body = ArrayBuffer | "too_large" | "busy";

/**
 * What an ingress thread hands over. uWS gives body chunks only to a reader registered while the request
 * is new, so the thread reads every body at once, with the body limit: a body read within the same turn
 * travels with its head; a slower one follows as a `body` item, and the handler's `read` takes it then.
 * A request whose client disconnects before its answer is followed by an `aborted` item instead.
 */
export type FromThreadItem =
  | { readonly t: "request"; readonly id: number; readonly head: RequestHead; body?: Body }
  | { readonly t: "body"; readonly id: number; readonly body: Body }
  /** The client went away before the answer: no body will come, and no answer is wanted. */
  | { readonly t: "aborted"; readonly id: number };

export type ToThreadItem =
  | { readonly t: "limit"; readonly bytes: number }
  | {
      readonly t: "reply";
      readonly id: number;
      readonly status: number;
      readonly headers: Readonly<Record<string, string>> | undefined;
      /** The answer's body as sent, and its content type. */
      readonly text: { readonly contentType: string; readonly body: string };
      readonly close: boolean;
    };

/** Items go in batches, one message per event-loop turn each way: a message costs more than its items. */
export type FromThread =
  | { readonly t: "batch"; readonly items: FromThreadItem[] }
  | { readonly t: "listening"; readonly port: number }
  /** `listen`: uWS loaded, but could not listen on the port. */
  | { readonly t: "failed"; readonly error: string; readonly listen?: true }
  /** An error nothing in the thread caught (a bug), with its stack: the thread has closed its sockets. */
  | { readonly t: "crashed"; readonly error: string };

export type ToThread =
  | { readonly t: "batch"; readonly items: ToThreadItem[] }
  /** No new connections; the open ones are still read and answered (the main thread says 503). */
  | { readonly t: "stop" }
  /** The answers still owed go out (at most `graceMs`), then every connection closes and the thread ends. */
  | { readonly t: "end"; readonly graceMs: number };

/** Collects items and posts them as one batch at the end of the turn (transferring the bodies' memory). */
export function turnBatcher<T>(post: (items: T[], transfer: ArrayBuffer[]) => void) {
  let items: T[] = [];
  let transfer: ArrayBuffer[] = [];
  const batcher = {
    /** Counts the posted batches: an item added in generation g can still change while it equals g. */
    generation: 0,
    push(item: T): void {
      if (items.length === 0) setImmediate(flush);
      items.push(item);
    },
    transfer(memory: ArrayBuffer): void {
      transfer.push(memory);
    },
  };
  const flush = () => {
    const batch = items;
    const moved = transfer;
    items = [];
    transfer = [];
    batcher.generation += 1;
    post(batch, moved);
  };
  return batcher;
}
