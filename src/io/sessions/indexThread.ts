import { Worker } from "node:worker_threads";
import { SvcError } from "../../errors.js";

/**
 * What the session index's thread (`indexWorker.ts`) is asked. Each names the sessions directory and runs
 * there as `SessionStore` would run it on this thread, but the index's read, parse, serialization and
 * write hold that thread's event loop, not the gateway's: after another process (the chat front end)
 * changed a 10,000-session index, its parse alone held the gateway ~40–120 ms. The caller holds the
 * index's lock where a change needs it (`touch`, `open`).
 */
export type IndexRequest =
  /** The session's entry (undefined when there is none), as `stringifyJson` writes it. */
  | { readonly op: "lookup"; readonly dir: string; readonly key: string }
  /** Sets the session's `updated_at` (false when the session is gone). */
  | { readonly op: "touch"; readonly dir: string; readonly key: string; readonly at: string }
  /** Creates the session (and its empty transcript) unless it exists; its entry, as `lookup` gives it. */
  | {
      readonly op: "open";
      readonly dir: string;
      readonly key: string;
      readonly file: string;
      readonly meta: Readonly<Record<string, string>>;
      readonly at: string;
    };

/** An error as it crosses to this thread: an `SvcError` keeps its code, a system error its errno code. */
export interface CrossedError {
  readonly message: string;
  readonly svc?: string;
  readonly code?: string;
}

export type IndexAnswer =
  | { readonly id: number; readonly value: string | boolean | undefined }
  | { readonly id: number; readonly error: CrossedError };

export function crossedError(err: unknown): CrossedError {
  if (err instanceof SvcError) return { message: err.message, svc: err.code };
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === "string" ? { message, code } : { message };
}

function rebuilt(error: CrossedError): Error {
  if (error.svc !== undefined) return new SvcError(error.svc as SvcError["code"], error.message);
  const err = new Error(error.message);
  if (error.code !== undefined) (err as NodeJS.ErrnoException).code = error.code;
  return err;
}

/**
 * Compiled: the `.js` beside this module (or the bundle's chunk). From source (the tests): the compiled
 * module SVC_TEST_SESSION_INDEX_THREAD names when the build is current, else the `.ts` through tsx
 * (about a CPU-second more). Without this process's Node options: a script run with `node -e` (and
 * `--input-type`) would make the thread refuse to start.
 */
function newThread(): Worker {
  const options = { execArgv: [] };
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(new URL("./indexWorker.js", import.meta.url), options);
  const compiled = process.env.SVC_TEST_SESSION_INDEX_THREAD;
  if (compiled) return new Worker(compiled, options);
  const entry = JSON.stringify(new URL("./indexWorker.ts", import.meta.url).href);
  return new Worker(
    `import("tsx/esm/api").then(({ register }) => { register(); return import(${entry}); });`,
    { ...options, eval: true },
  );
}

interface Asked {
  readonly resolve: (value: string | boolean | undefined) => void;
  readonly reject: (err: Error) => void;
}

let thread: Worker | undefined;
let nextId = 0;
const asked = new Map<number, Asked>();

/** Ends every question still out with `err`, and forgets the thread: the next question starts another. */
function lost(worker: Worker, err: Error): void {
  if (thread !== worker) return;
  thread = undefined;
  for (const pending of asked.values()) pending.reject(err);
  asked.clear();
}

function started(): Worker {
  if (thread !== undefined) return thread;
  const worker = newThread();
  worker.on("message", (answer: IndexAnswer) => {
    const pending = asked.get(answer.id);
    if (pending === undefined) return;
    asked.delete(answer.id);
    // Idle, it keeps no process alive (a command that mirrored a delivery exits when done).
    if (asked.size === 0) worker.unref();
    if ("error" in answer) pending.reject(rebuilt(answer.error));
    else pending.resolve(answer.value);
  });
  worker.on("error", (err) => lost(worker, err));
  worker.on("exit", (code) => lost(worker, new Error(`the session index thread exited (code ${code})`)));
  worker.unref();
  thread = worker;
  return worker;
}

/** How a store asks its index's questions: `askIndexThread`, or (tests) on this thread (`answerHere`). */
export type AskIndex = (request: IndexRequest) => Promise<string | boolean | undefined>;

/** Asks the session index's thread (started at the first question, shared by every store). */
export function askIndexThread(request: IndexRequest): Promise<string | boolean | undefined> {
  const worker = started();
  nextId += 1;
  const id = nextId;
  return new Promise((resolve, reject) => {
    asked.set(id, { resolve, reject });
    // Held while a question is out, so an answer awaited is not lost with the process.
    worker.ref();
    worker.postMessage({ id, request });
  });
}
