/**
 * Resolves once the event loop has polled its sockets again. A stop's steps may run without a turn of the
 * loop (synchronous writes, promises already settled), so a request that reached an open connection
 * meanwhile sits unread in the kernel; closing the connection then resets it unanswered. Two turns: the
 * first may come in the same iteration as the poll now under way, the second follows a poll of its own.
 */
export async function afterArrivedReads(): Promise<void> {
  await nextImmediate();
  await nextImmediate();
}

function nextImmediate(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
