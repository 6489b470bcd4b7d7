// Preload for CLI tests (`node --import`): writes "[test] read <file>" on stderr each time the
// subscription store is read, so a test can tell when a command has read it (and hold the store's lock
// until every command has). Instrumentation only: the read itself is unchanged. The store is read either
// by path or through a descriptor opened for it; an open that fails (no file yet) counts as a read too.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const isStore = (path) => String(path).endsWith("webhook_subscriptions.json");
const mark = (path) => process.stderr.write(`[test] read ${path}\n`);
const storeFds = new Map();

const openSync = fs.openSync;
fs.openSync = function markedOpenSync(path, ...rest) {
  let fd;
  try {
    fd = openSync.call(this, path, ...rest);
    return fd;
  } finally {
    if (isStore(path)) {
      if (fd === undefined) mark(path);
      else storeFds.set(fd, path);
    }
  }
};

const closeSync = fs.closeSync;
fs.closeSync = function markedCloseSync(fd, ...rest) {
  storeFds.delete(fd);
  return closeSync.call(this, fd, ...rest);
};

const readFileSync = fs.readFileSync;
fs.readFileSync = function markedReadFileSync(path, ...rest) {
  try {
    return readFileSync.call(this, path, ...rest);
  } finally {
    if (typeof path === "number" && storeFds.has(path)) mark(storeFds.get(path));
    else if (isStore(path)) mark(path);
  }
};
syncBuiltinESMExports();
