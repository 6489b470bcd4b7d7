// Preload (`node --import`): the process is sent SIGTERM once, as it reads its first journal segment — a
// stop signal (a supervisor's) that comes while the gateway's start replays the journal, after it took the
// state directory's lock and before it listens. A segment is read either whole by path or through a
// descriptor opened for reading.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const isSegment = (path) => /journal-\d+\.seg$/.test(String(path));
let sent = false;
const terminate = (path) => {
  if (sent || !isSegment(path)) return;
  sent = true;
  process.kill(process.pid, "SIGTERM");
};

const readFileSync = fs.readFileSync;
fs.readFileSync = function terminatedReading(path, ...rest) {
  terminate(path);
  return readFileSync.call(this, path, ...rest);
};

const openSync = fs.openSync;
fs.openSync = function terminatedOpening(path, flags, ...rest) {
  if (flags === undefined || flags === "r" || flags === fs.constants.O_RDONLY) terminate(path);
  return openSync.call(this, path, flags, ...rest);
};
syncBuiltinESMExports();
