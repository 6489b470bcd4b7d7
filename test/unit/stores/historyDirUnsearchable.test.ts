import { spawn } from "node:child_process";
import { chmodSync, chownSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const AS_ROOT = process.getuid?.() === 0;
/** The built module when the build is current (tsx compiled the writer's modules at each run: ~1 CPU-s). */
const WRITER = svcModule("io/stores/deliveryHistory.js");

/**
 * Writes a record, makes the history directory unsearchable (mode 0), writes one past the once-a-second
 * look at the file's path, gives the mode back and writes a last one; its stderr is what the writer
 * reported. The writer's clock is moved by hand.
 */
const SCRIPT = `
import { chmodSync } from "node:fs";
import { createHistoryWriter } from ${JSON.stringify(WRITER)};
const dir = process.argv[2];
let t = Date.now();
const writer = createHistoryWriter(dir, (err) => console.error(String(err)), () => t);
const record = (id) => ({ kind: "request", id, at: new Date(t).toISOString(), route: "pr", status: 202, outcome: "accepted" });
writer.record(record("before"));
writer.flush();
chmodSync(dir, 0);
t += 2000;
writer.record(record("while"));
writer.flush();
chmodSync(dir, 0o700);
t += 2000;
writer.record(record("after"));
writer.close();
`;

/**
 * The history directory made unsearchable while the gateway runs (`chmod 000`, `chmod a-x`): its path can
 * no longer be looked at, but the file the writer holds can still be written. The writer took the failed
 * look for a file removed, closed the file it held and dropped every record until the mode was given back.
 */
it("keeps writing to the file it holds while its directory cannot be searched", async () => {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  const script = home.write("writer.mjs", SCRIPT);
  chmodSync(home.dir, 0o755);
  const argv = [process.execPath, ...CLI_NODE_ARGS, script, dir];
  // Root is not stopped by a directory's mode: the writer runs as nobody, who owns the home.
  if (AS_ROOT) chownSync(home.dir, 65534, 65534);
  const [command, ...args] = AS_ROOT
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...argv]
    : argv;
  const child = spawn(command as string, args, { cwd: process.cwd(), stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((done) => child.on("exit", done));
  if (AS_ROOT) chownSync(home.dir, 0, 0);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const ids = readFileSync(join(dir, "history.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { id: string }).id);
  expect(ids).toEqual(["before", "while", "after"]);
}, 30_000);
