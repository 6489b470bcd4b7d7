// Preload (`node --import`): the process dies (SIGKILL) at the first write to Redis of BullMQ's keys (`:bull:`)
// or of the coalescing groups' (`:coalesce:`) that follows the write of a delivery id's record
// (`SET <prefix>:seen:<route>:<id> … NX`): after the id is recorded, before its run or its join is stored. ioredis writes each command with `Socket.prototype.write` on its
// connection (the record on the commands connection, the run on the queue's producer), so that is hooked.
import net from "node:net";

const write = net.Socket.prototype.write;
let recorded = false;
net.Socket.prototype.write = function killedAfterRecord(chunk, ...rest) {
  const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("latin1") : "";
  if (recorded && (text.includes(":bull:") || text.includes(":coalesce:")))
    process.kill(process.pid, "SIGKILL");
  if (!recorded && text.includes(":seen:") && /\bNX\b/.test(text)) recorded = true;
  return write.call(this, chunk, ...rest);
};
