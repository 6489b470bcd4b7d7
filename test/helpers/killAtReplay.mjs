// Preload (`node --import`): the process dies (SIGKILL) as it reads its first journal segment — a gateway
// killed while its start replays the journal (an OOM kill on a large one), after it took the state
// directory's lock. What such a start leaves behind, made on purpose. A segment is read either whole by
// path or through a descriptor opened for reading.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const isSegment = (path) => /journal-\d+\.seg$/.test(String(path));

const readFileSync = fs.readFileSync;
fs.readFileSync = function killedReading(path, ...rest) {
  if (isSegment(path)) process.kill(process.pid, "SIGKILL");
  return readFileSync.call(this, path, ...rest);
};

const openSync = fs.openSync;
fs.openSync = function killedOpening(path, flags, ...rest) {
  if (isSegment(path) && (flags === undefined || flags === "r" || flags === fs.constants.O_RDONLY))
    process.kill(process.pid, "SIGKILL");
  return openSync.call(this, path, flags, ...rest);
};
syncBuiltinESMExports();
