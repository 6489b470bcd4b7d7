// Preload for CLI tests (`node --import`): writes "[test] read <file>" on stderr each time the
// subscription store is read, so a test can tell when a command has read it (and hold the store's lock
// until every command has). Instrumentation only: the read itself is unchanged.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const readFileSync = fs.readFileSync;
fs.readFileSync = function markedReadFileSync(path, ...rest) {
  try {
    return readFileSync.call(this, path, ...rest);
  } finally {
    // Also when the file does not exist yet: the command has looked.
    if (String(path).endsWith("webhook_subscriptions.json")) process.stderr.write(`[test] read ${path}\n`);
  }
};
syncBuiltinESMExports();
