// Preload (`node --import`): the process dies (SIGKILL) as it reads its first journal segment — a gateway
// killed while its start replays the journal (an OOM kill on a large one), after it took the state
// directory's lock. What such a start leaves behind, made on purpose.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const readFileSync = fs.readFileSync;
fs.readFileSync = function killedReading(path, ...rest) {
  if (/journal-\d+\.seg$/.test(String(path))) process.kill(process.pid, "SIGKILL");
  return readFileSync.call(this, path, ...rest);
};
syncBuiltinESMExports();
