// Preload for CLI tests (`node --import`): writes "[test] waiting <lock file>" on stderr the first time a
// store's lock file is found held (its exclusive creation fails: the link of the lock's whole text into
// place, or an exclusive open), so a test can hold a lock until every command waits for it, then let them
// all write at once. With SVC_TEST_MARK_WAITS_AT=2, the second time (the wait's second attempt: its first
// look at the lock is over). Instrumentation only: the calls are unchanged.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const markAt = Number(process.env.SVC_TEST_MARK_WAITS_AT ?? 1);
/** Per lock file, how many times it was found held. */
const found = new Map();
const marked = (call, lockArg) =>
  function markedCall(...args) {
    try {
      return call.apply(this, args);
    } catch (err) {
      const name = String(args[lockArg]);
      if (err?.code === "EEXIST" && name.endsWith(".lock")) {
        const times = (found.get(name) ?? 0) + 1;
        found.set(name, times);
        if (times === markAt) process.stderr.write(`[test] waiting ${name}\n`);
      }
      throw err;
    }
  };
fs.openSync = marked(fs.openSync, 0);
fs.linkSync = marked(fs.linkSync, 1);
syncBuiltinESMExports();
