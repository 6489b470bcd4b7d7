// Preload for CLI tests (`node --import`): writes "[test] waiting <lock file>" on stderr the first time a
// store's lock file is found held (its exclusive create fails), so a test can hold a lock until every
// command waits for it, then let them all write at once. Instrumentation only: the open is unchanged.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const openSync = fs.openSync;
const told = new Set();
fs.openSync = function markedOpenSync(path, ...rest) {
  try {
    return openSync.call(this, path, ...rest);
  } catch (err) {
    const name = String(path);
    if (err?.code === "EEXIST" && name.endsWith(".lock") && !told.has(name)) {
      told.add(name);
      process.stderr.write(`[test] waiting ${name}\n`);
    }
    throw err;
  }
};
syncBuiltinESMExports();
