/**
 * Resolves once the event loop has polled for I/O again: a signal that arrived meanwhile (during seconds of
 * synchronous work) has been read and its handlers have run. One `setImmediate` is not enough: called from
 * an I/O callback, it runs in the same turn's check phase, before the next poll.
 */
export async function signalsRead(): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}
