// Preload for CLI tests (`node --import`, which `svc gateway start` passes on to the gateway it spawns):
// the spawned `svc gateway run` writes its pid to `$SVC_HOME/held.pid` and then never starts, so it is
// still starting for as long as a test needs. The `start` command itself runs as usual.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

if (process.argv.includes("run")) {
  writeFileSync(join(process.env.SVC_HOME ?? ".", "held.pid"), String(process.pid));
  setInterval(() => undefined, 1 << 30);
  await new Promise(() => undefined);
}
