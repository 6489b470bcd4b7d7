import { createServer } from "node:net";
import { Worker } from "node:worker_threads";
import { IdWindow } from "../../streams/churnTables.js";
import {
  answerText,
  type BodyRead,
  type BodySource,
  contentTypeOf,
  type RequestHandler,
  type RequestHead,
} from "./core.js";
import { type ListenOptions, type ServerHandle, STOP_GRACE_MS } from "./listen.js";
import { bindFailure } from "./listenHint.js";
import {
  type Body,
  type FromThread,
  type FromThreadItem,
  type ThreadSetup,
  type ToThread,
  type ToThreadItem,
  turnBatcher,
} from "./threadMessages.js";

/**
 * The port the threads share, bound once without `SO_REUSEPORT` first: a port another program (or a
 * gateway with ingress threads of its own) holds fails here, as a single listener would; port 0 picks one
 * (released here, so another socket may take it before the first thread binds it: see PICKED_PORT_TRIES).
 */
function claimPort(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err) => reject(bindFailure(host, port, err)));
    probe.listen({ host, port, exclusive: true }, () => {
      const claimed = (probe.address() as { port: number }).port;
      probe.close(() => resolve(claimed));
    });
  });
}

/**
 * Compiled: the `.js` next to this file. From source (the tests): the compiled module that
 * SVC_TEST_INGRESS_THREAD names (set by the test run when the build is current: loading the thread's source
 * through tsx costs over a CPU-second per thread), else the `.ts`, loaded through tsx.
 */
function newThread(setup: ThreadSetup): Worker {
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(new URL("./uwsThread.js", import.meta.url), { workerData: setup });
  const compiled = process.env.SVC_TEST_INGRESS_THREAD;
  if (compiled) return new Worker(compiled, { workerData: setup });
  const entry = JSON.stringify(new URL("./uwsThread.ts", import.meta.url).href);
  return new Worker(
    `import("tsx/esm/api").then(({ register }) => { register(); return import(${entry}); });`,
    { eval: true, workerData: setup },
  );
}

/**
 * How long the main thread may show no sign of life (its event loop held) before an ingress thread leaves
 * `/health` to it rather than answering 200 for a gateway that answers nothing else: longer than the
 * longest hold of a working gateway (a reload of 1,000 routes and 2,000 subscriptions holds it ~0.8 s).
 */
export const MAIN_STALE_MS = 2000;

/** A request whose body has not reached the handler yet: the body, or the handler's `read` waiting. */
interface Arriving {
  body?: Body;
  done?: (body: BodyRead) => void;
  limit?: number;
}

/** What `read(limit)` gets from a body the thread read with its limit (the same one, unless reloaded). */
function received(body: Body, limit: number): BodyRead {
  if (typeof body === "string") return body;
  return body.byteLength > limit ? "too_large" : Buffer.from(body);
}

/**
 * What the threads hand over while not all of them listen yet: a thread serves as soon as it listens,
 * while the next ones start (seconds on a busy machine), and its requests would reach the gateway before
 * its start has run on past the listener (the journal's coalescing groups and runs reopened, MCP
 * attached). Held in order, and handed to the handler once every thread listens (`listenUwsThreads`).
 */
interface Gate {
  open: boolean;
  readonly held: Array<() => void>;
}

/** A thread that loaded uWS but could not listen on its port. */
class ListenRefused extends Error {}

/** One ingress thread: its requests go to `handler` here (once `gate` opens); resolves once it listens. */
function startThread(handler: RequestHandler, setup: ThreadSetup, gate: Gate): Promise<Worker> {
  const worker = newThread(setup);
  const answers = turnBatcher<ToThreadItem>((items) =>
    worker.postMessage({ t: "batch", items } satisfies ToThread),
  );
  const arriving = new IdWindow<Arriving>();

  const arrive = (id: number, body: Body) => {
    const state = arriving.get(id);
    if (state === undefined) return;
    if (state.done === undefined) state.body = body;
    else {
      arriving.delete(id);
      state.done(received(body, state.limit as number));
    }
  };

  const request = (id: number, head: RequestHead, body: Body | undefined) => {
    const state: Arriving = body === undefined ? {} : { body };
    arriving.set(id, state);
    const source: BodySource = {
      read(limit, done) {
        if (state.body === undefined) {
          state.done = done;
          state.limit = limit;
          return;
        }
        arriving.delete(id);
        done(received(state.body, limit));
      },
    };
    handler(head, source, (outcome, close = false) => {
      // A body the handler never read is not waited for.
      if (state.done === undefined) arriving.delete(id);
      answers.push({
        t: "reply",
        id,
        status: outcome.status,
        headers: outcome.headers,
        text: {
          contentType: contentTypeOf(outcome),
          body: answerText(outcome),
        },
        close,
      });
    });
  };

  const take = (items: FromThreadItem[]) => {
    for (const item of items) {
      if (item.t === "request") request(item.id, item.head, item.body);
      else if (item.t === "body") arrive(item.id, item.body);
      // No body is coming: a handler still waiting for it is let go (it answers nothing, as on one thread).
      else arriving.delete(item.id);
    }
  };

  return new Promise((resolve, reject) => {
    let listening = false;
    worker.on("error", (err) => {
      if (!listening) reject(err);
      // A thread that failed past its start (a bug, its memory exhausted) is a failure of the process.
      else throw threadFailure(err.stack ?? err.message);
    });
    worker.on("message", (m: FromThread) => {
      if (m.t === "batch") {
        if (gate.open) take(m.items);
        else gate.held.push(() => take(m.items));
      } else if (m.t === "listening") {
        listening = true;
        resolve(worker);
      } else if (m.t === "crashed") {
        // Its requests on the main thread are owed nothing more: their connections are gone.
        arriving.clear();
        throw threadFailure(m.error);
      } else {
        reject(m.listen === true ? new ListenRefused(m.error) : new Error(m.error));
        void worker.terminate();
      }
    });
  });
}

/**
 * An error an ingress thread did not catch, raised on the main thread as an uncaught exception: the gateway
 * stops as after one of its own (runs finished or saved, exit 1; docs/webhook.md), instead of running on
 * without the thread's share of the connections.
 */
function threadFailure(stack: string): Error {
  const err = new Error(`an ingress thread (platforms.webhook.workers) failed: ${stack.split("\n")[0]}`);
  err.stack = `Error: an ingress thread (platforms.webhook.workers) failed — ${stack}`;
  return err;
}

/**
 * `platforms.webhook.workers: N`: N threads run uWS on one port (the kernel spreads the connections over
 * them); the pipeline stays on the main thread. Requests and answers cross in batches, one message per
 * turn each way, which costs less than the socket and HTTP work they save (bench/README.md).
 */
export async function listenUwsThreads(
  handler: RequestHandler,
  options: ThreadsOptions,
): Promise<ServerHandle> {
  for (let tries = 1; ; tries++) {
    const port = await claimPort(options.host, options.port);
    try {
      return await startThreads(handler, options, port);
    } catch (err) {
      if (options.port !== 0 || tries === PICKED_PORT_TRIES || !(err instanceof ListenRefused)) throw err;
    }
  }
}

type ThreadsOptions = ListenOptions & {
  readonly threads: number;
  readonly bodyLimit: number;
  /** How long a stop waits for the answers still owed (default STOP_GRACE_MS). */
  readonly stopGraceMs?: number;
  /** How long the main thread may show no sign of life before `/health` is left to it (default MAIN_STALE_MS). */
  readonly mainStaleMs?: number;
  /** The gateway's instance id, which the threads' `/health` 200 names. */
  readonly instance?: string;
};

/**
 * With port 0, how many picked ports a start tries: one is taken by another socket (a connection's local
 * port, another program's listener) between its pick and the first thread's bind only by chance, which the
 * suite met once in ~5,000 tests. A thread bound to port 0 itself would hold it from the start, but no
 * other thread can then bind the port it got (a second uWS listener on it fails, `SO_REUSEPORT` or not).
 */
const PICKED_PORT_TRIES = 5;

/** The threads on `port`, claimed for them. */
async function startThreads(
  handler: RequestHandler,
  options: ThreadsOptions,
  port: number,
): Promise<ServerHandle> {
  const workers: Worker[] = [];
  const gate: Gate = { open: false, held: [] };
  const mainStaleMs = options.mainStaleMs ?? MAIN_STALE_MS;
  // The main thread's sign of life for the threads' /health: a count raised by a timer, which fires only
  // while its event loop runs. One timer for the listener, nothing per request.
  const mainBeat = new SharedArrayBuffer(4);
  const beat = new Int32Array(mainBeat);
  const beating = setInterval(() => Atomics.add(beat, 0, 1), mainStaleMs / 4);
  beating.unref();
  try {
    for (let i = 0; i < options.threads; i++)
      workers.push(
        await startThread(
          handler,
          {
            host: options.host,
            port,
            bodyLimit: options.bodyLimit,
            threads: options.threads,
            mainBeat,
            mainStaleMs,
            ...(options.instance === undefined ? {} : { instance: options.instance }),
          },
          gate,
        ),
      );
  } catch (err) {
    clearInterval(beating);
    for (const worker of workers) worker.postMessage({ t: "end", graceMs: 0 } satisfies ToThread);
    throw err;
  }
  // Past the turn that resolves this: the caller's start runs on first, as after a single listener.
  setImmediate(() => {
    gate.open = true;
    for (const hand of gate.held.splice(0)) hand();
  });
  let open = true;
  const exited = workers.map(
    (worker) => new Promise<void>((resolve) => worker.once("exit", () => resolve())),
  );
  return {
    impl: "uws",
    host: options.host,
    port,
    close() {
      if (!open) return;
      open = false;
      for (const worker of workers) worker.postMessage({ t: "stop" } satisfies ToThread);
    },
    ended: async () => {
      // The threads end once their answers are out (at most the grace later).
      for (const worker of workers)
        worker.postMessage({ t: "end", graceMs: options.stopGraceMs ?? STOP_GRACE_MS } satisfies ToThread);
      await Promise.all(exited);
      clearInterval(beating);
    },
    setBodyLimit(bytes) {
      for (const worker of workers)
        worker.postMessage({ t: "batch", items: [{ t: "limit", bytes }] } satisfies ToThread);
    },
  };
}
