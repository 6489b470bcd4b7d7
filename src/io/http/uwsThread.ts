/**
 * One ingress thread of `platforms.webhook.workers`: the uWS adapter (sockets, HTTP parsing, header copy,
 * body reading, answer writing, early answers and lingering) runs here, unchanged; the request handler
 * (the pipeline) stays on the main thread, which this thread asks by message (`uwsThreads.ts`).
 */
import { parentPort, workerData } from "node:worker_threads";
import { IdWindow } from "../../streams/churnTables.js";
import type { Outcome } from "../../streams/types.js";
import { afterArrivedReads } from "./arrivedReads.js";
import {
  type BodyRead,
  framingRefusal,
  type HeadAnswer,
  headAnswer,
  healthAnswer,
  type Reply,
  type RequestHead,
} from "./core.js";
import {
  type Body,
  type FromThread,
  type FromThreadItem,
  type ThreadSetup,
  type ToThread,
  turnBatcher,
} from "./threadMessages.js";
import { listenUws, loadUws } from "./uws.js";

const port = parentPort as NonNullable<typeof parentPort>;
const setup = workerData as ThreadSetup;
/** The `/health` 200 this thread gives, naming the gateway's instance as the main thread's does. */
const health = healthAnswer(setup.instance);
/** Requests the main thread has not answered yet (one whose client went away is dropped at once). */
const exchanges = new IdWindow<Reply>();
let next = 0;
/** Told to end: every answer closes its connection, and the last one owed closes them all. */
let ending = false;
/** Told to end, and what had already arrived on the connections is read: they may close once idle. */
let arrivedRead = false;
/** Closes the connections once told to end, what had arrived read, and no answer owed. */
const endIfIdle = () => {
  if (ending && arrivedRead && exchanges.size === 0) end();
};
/** Told the gateway stops: `/health` is left to the main thread, which answers 503 then. */
let stopping = false;
let bodyLimit = setup.bodyLimit;
/** Closes the connections and the port to the main thread; set once listening. */
let end = () => {};
const hand = turnBatcher<FromThreadItem>((items, transfer) =>
  port.postMessage({ t: "batch", items } satisfies FromThread, transfer),
);

const mainBeat = new Int32Array(setup.mainBeat);
/** The main thread's count last seen changed, and when (on this thread's clock that is never set). */
let beatSeen = Atomics.load(mainBeat, 0);
let beatSeenAt = performance.now();
/** Notes when the count last changed. */
function lookAtBeat(): void {
  const beat = Atomics.load(mainBeat, 0);
  if (beat !== beatSeen) {
    beatSeen = beat;
    beatSeenAt = performance.now();
  }
}
// Looked at on this thread's own timer, not only when /health is asked: a probe's first look after a beat
// would otherwise find the count changed and the main thread alive, however long it has been held since.
setInterval(lookAtBeat, setup.mainStaleMs / 4).unref();

/**
 * Whether the main thread has shown no sign of life (its count unchanged) for `mainStaleMs`: its event loop
 * is held (a bug looping, a synchronous task that does not end), and it answers nothing. Asked per
 * `/health` only.
 */
function mainStuck(): boolean {
  lookAtBeat();
  return performance.now() - beatSeenAt > setup.mainStaleMs;
}

/**
 * The answer the head alone decides, given here at once as on one thread: uWS drops an answer that comes
 * after the client's FIN, so a client that half-closes after its request (`nc -N`) got none of them when
 * they waited for the main thread. Paths whose answer depends on the main thread's config (`/p/…` with
 * profile multiplexing, `/metrics`) are left to it, but for a framing refusal, which is the same on every
 * path; and so is `/health` once the gateway stops (503) and while the main thread is stuck: answered here,
 * a liveness probe would find a gateway that accepts no event healthy, which with one thread gets no answer
 * and is restarted.
 */
function answerHere(head: RequestHead): HeadAnswer | undefined {
  if (head.path === "/metrics" || head.path.startsWith("/p/")) return framingRefusal(head);
  if (head.path === "/health" && (stopping || mainStuck())) return undefined;
  const answer = headAnswer(head, false, health);
  return "kind" in answer ? undefined : answer;
}

/** The body's own memory: a small Buffer lives in Node's shared pool, which must not be transferred. */
function own(body: BodyRead): Body {
  return typeof body === "string"
    ? body
    : (body.buffer as ArrayBuffer).slice(body.byteOffset, body.byteOffset + body.length);
}

const loaded = await loadUws();
if ("error" in loaded) {
  port.postMessage({ t: "failed", error: loaded.error } satisfies FromThread);
} else {
  try {
    const server = await listenUws(
      loaded.uws,
      (head, source, reply) => {
        const id = next++;
        const request: FromThreadItem & { t: "request" } = { t: "request", id, head };
        // The main thread gets the request all the same (its metrics and access log count it), reaches
        // the same answer without reading the body, and that answer is dropped here.
        hand.push(request);
        const early = answerHere(head);
        if (early !== undefined) {
          reply(early.outcome, early.close);
          return;
        }
        exchanges.set(id, reply);
        const batch = hand.generation;
        // Its client gone, the request is owed no answer: the partial body and the reply are let go here,
        // and the main thread stops waiting for the body.
        source.onAborted(() => {
          if (!exchanges.delete(id)) return;
          hand.push({ t: "aborted", id });
          endIfIdle();
        });
        source.read(bodyLimit, (received) => {
          const body = own(received);
          if (typeof body !== "string") hand.transfer(body);
          // Read within the same turn (its head not posted yet): the body travels with its head.
          if (hand.generation === batch) request.body = body;
          else hand.push({ t: "body", id, body });
        });
      },
      { host: setup.host, port: setup.port, sharedPort: true, bodyShares: setup.threads },
    );
    let ended = false;
    // Once: the last answer and the grace timer may both come to it.
    end = () => {
      if (ended) return;
      ended = true;
      server.closeAll();
      port.close();
    };
    port.on("message", (m: ToThread) => {
      if (m.t === "stop") {
        // As on one thread: requests on the open connections still reach the main thread, which
        // answers 503 while it stops, instead of finding their connection reset.
        stopping = true;
        server.close();
        return;
      }
      if (m.t === "end") {
        server.close();
        ending = true;
        // A request already on an open connection and still unread (the stop and its end may reach this
        // thread before its next poll of the sockets) is read and handed over first, as on one thread;
        // closing at once reset it unanswered on a loaded machine. An answer meanwhile closes nothing yet.
        void afterArrivedReads().then(() => {
          arrivedRead = true;
          if (exchanges.size > 0) setTimeout(end, m.graceMs).unref();
          endIfIdle();
        });
        return;
      }
      for (const item of m.items) {
        if (item.t === "limit") {
          bodyLimit = item.bytes;
          continue;
        }
        const reply = exchanges.get(item.id);
        exchanges.delete(item.id);
        const outcome: Outcome = {
          status: item.status,
          body: {},
          text: item.text,
          ...(item.headers === undefined ? {} : { headers: item.headers }),
        };
        // Once told to end, every answer closes its connection and says so, as on one thread.
        reply?.(outcome, item.close || ending);
      }
      endIfIdle();
    });
    // A bug here is one of the process: the main thread is told (it stops the gateway as after an uncaught
    // exception of its own) and the sockets are closed. Left to Node, the thread ended with uWS's sockets
    // open, and Node aborted the whole process (SIGABRT) without a word: no clean stop, no log line.
    process.on("uncaughtException", (err) => {
      if (ended) return;
      port.postMessage({
        t: "crashed",
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      } satisfies FromThread);
      // Past the uWS callback it may have come from.
      setImmediate(end);
    });
    port.postMessage({ t: "listening", port: server.port } satisfies FromThread);
  } catch (err) {
    port.postMessage({
      t: "failed",
      error: err instanceof Error ? err.message : String(err),
      listen: true,
    } satisfies FromThread);
  }
}
