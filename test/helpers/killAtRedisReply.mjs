// Preload (`node --import`): the process dies (SIGKILL) in the event-loop turn in which a read on one of its
// sockets first brings the text SVC_TEST_KILL_AT_REPLY (a BullMQ job id: Redis's answer to the job's add names
// it), after that read's callbacks and the promise reactions they set off (the 202 of the run Redis stored is
// answered there), before what they left for the end of the turn (`setImmediate`, scheduled after this one).
// What a gateway killed at that moment leaves behind, made on purpose. ioredis reads each connection's replies
// from its socket's `data` events, so that is hooked.
import net from "node:net";

const marker = process.env.SVC_TEST_KILL_AT_REPLY;
let armed = marker !== undefined && marker !== "";
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function killedAfterReply(event, chunk, ...rest) {
  if (armed && event === "data" && Buffer.isBuffer(chunk) && chunk.includes(marker)) {
    armed = false;
    setImmediate(() => process.kill(process.pid, "SIGKILL"));
  }
  return emit.call(this, event, chunk, ...rest);
};
