// Preload (`node --import`): once the file named by SVC_TEST_KILL_AFTER_SYNC exists, the process dies (SIGKILL)
// in the event-loop turn of the next fdatasync that ends: after that sync's callback and the promise reactions
// it set off (the 202s that waited for the journal's sync are answered there), before what they left for the
// end of the turn (`setImmediate`, scheduled after this one). What a gateway killed at that moment leaves behind,
// made on purpose.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const marker = process.env.SVC_TEST_KILL_AFTER_SYNC;
const fdatasync = fs.fdatasync;
fs.fdatasync = function killedAfter(fd, callback) {
  return fdatasync.call(this, fd, (...args) => {
    if (marker !== undefined && fs.existsSync(marker))
      setImmediate(() => process.kill(process.pid, "SIGKILL"));
    callback(...args);
  });
};
syncBuiltinESMExports();
