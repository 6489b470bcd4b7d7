/**
 * Appends to one session, one after the other in the order they were asked for. Each append waits for the
 * index's lock, polling on a backoff of its own: while another writer (the chat front end, another svc)
 * held it, a later append — polling more often — took it first, and two runs of one chat that finished
 * close together had their entries written in the wrong order. An append starts at once when nothing is
 * queued for its session; the queue of a session is dropped once its last append has ended.
 */
const tails = new Map<string, Promise<void>>();

const settled = () => {};

/** Runs `task` after every task queued before it under `key` has ended (resolved or failed). */
export function inSessionOrder<T>(key: string, task: () => Promise<T>): Promise<T> {
  const before = tails.get(key);
  const run = before === undefined ? task() : before.then(task);
  const tail = run.then(settled, settled);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}

/** How many sessions have appends queued or under way (for tests: none is kept once they end). */
export const sessionsQueued = () => tails.size;
