// Preload (`node --import`): the process dies (SIGKILL) in the middle of writing its first agent-group
// note, right after the first system call that makes something under an `agents/` directory — for
// writeFileSync that is the file's creation, before its text is written. What a gateway killed at that
// moment leaves behind, made on purpose.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const underAgents = (path) => String(path).includes("/agents/");
const writeFileSync = fs.writeFileSync;
fs.writeFileSync = function killedWriting(path, ...rest) {
  if (!underAgents(path)) return writeFileSync.call(this, path, ...rest);
  fs.closeSync(fs.openSync(path, "w", rest[0]?.mode));
  process.kill(process.pid, "SIGKILL");
};
for (const name of ["symlinkSync", "linkSync", "renameSync"]) {
  const call = fs[name];
  fs[name] = function killedAfter(...args) {
    const result = call.apply(this, args);
    if (underAgents(args[1])) process.kill(process.pid, "SIGKILL");
    return result;
  };
}
syncBuiltinESMExports();
