import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { settledFiles } from "../../../src/io/settledFiles.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { svc } from "./svc.js";

/**
 * config.yaml or .env as a named pipe (mkfifo, a secret tool that serves a file through one): the start,
 * `svc config check` and a reload's wait for the files to settle read it as a file, waiting for a writer
 * (a reload so froze the whole running gateway). It is refused as not a regular file instead, naming it.
 */

let home: TempHome;
const writers: ChildProcess[] = [];
afterEach(() => {
  for (const writer of writers.splice(0)) if (writer.pid !== undefined) signalProcess(writer.pid, "SIGKILL");
  home.cleanup();
});

/**
 * Feeds `text` through the pipe until the test ends, so a read that waits on it gets it instead of hanging;
 * `counted`: each time another line (`N=1`, `N=2`, ...), as a file that never stops changing.
 */
function pipeOf(path: string, text: string, counted = false): void {
  execFileSync("mkfifo", ["-m", "600", path]);
  const line = counted ? `i=$((i+1)); printf 'N=%s\\n' "$i"` : `printf '%s' "$TEXT"`;
  const child = spawn("sh", ["-c", `i=0; while :; do ${line} > '${path}'; sleep 0.2; done`], {
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TEXT: text },
  });
  writers.push(child);
}

const CONFIG = "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    secret: s3cret\n";

describe("config.yaml or .env as a named pipe", { timeout: 60_000 }, () => {
  it.each([
    ["config.yaml", "config.yaml"],
    [".env", ".env"],
  ])("svc config check refuses %s, naming it, instead of waiting on it", async (_, file) => {
    home = tempHome();
    if (file === ".env") home.write("config.yaml", CONFIG, 0o600);
    pipeOf(join(home.dir, file), file === ".env" ? "WEBHOOK_SECRET=x\n" : CONFIG);
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr + result.stdout).toContain(
      `${join(home.dir, file)}: cannot be read (it is not a regular file: a named pipe)`,
    );
  });

  it("a reload's wait for the files to settle does not read a pipe (its writer would be waited on, and its text taken for a file still changing)", async () => {
    home = tempHome();
    const config = home.write("config.yaml", CONFIG, 0o600);
    const env = join(home.dir, ".env");
    pipeOf(env, "", true);
    const clock = fakeClock();
    const waiting = settledFiles([config, env], clock, { settleMs: 200, maxWaitMs: 1000 });
    for (let i = 0; i < 5; i++) {
      clock.advance(200);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await expect(waiting).resolves.toEqual({ settled: true });
  });
});
