// Preload for CLI tests (`node --import`): right after the gateway's start has read config.yaml (the read
// made under startGateway), moves `config.yaml.next` (written by the test) over it and sends the process
// a SIGHUP — a user's edit and reload landing while the gateway is still starting, after it read the file.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const readFileSync = fs.readFileSync;
let done = false;
fs.readFileSync = function readThenEdit(path, ...rest) {
  const result = readFileSync.call(this, path, ...rest);
  const file = String(path);
  if (!done && file.endsWith("config.yaml") && /startGateway/.test(new Error().stack ?? "")) {
    done = true;
    fs.renameSync(`${file}.next`, file);
    process.kill(process.pid, "SIGHUP");
  }
  return result;
};
syncBuiltinESMExports();
