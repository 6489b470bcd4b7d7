import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, svc } from "./svc.js";

let home: TempHome | undefined;
afterEach(async () => {
  if (home !== undefined) await svc(home, ["gateway", "stop"]);
  home?.cleanup();
  home = undefined;
});

/** `svc gateway start` run on the CPUs `taskset` gives it (none: all of them); the started gateway's argv. */
async function startedArgv(cpus: string | undefined): Promise<string[]> {
  home = tempHome();
  home.write("config.yaml", stringify(cliConfig()));
  const node = [process.execPath, ...CLI_NODE_ARGS, MAIN, "gateway", "start", "--timeout", "60"];
  const [file, ...args] = cpus === undefined ? node : ["taskset", "-c", cpus, ...node];
  const env = { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir };
  const { stdout } = await promisify(execFile)(file as string, args, { env });
  const pid = /Gateway started: pid (\d+)/.exec(stdout)?.[1];
  expect(pid).toBeDefined();
  return readFileSync(join("/proc", pid as string, "cmdline"), "utf8").split("\0");
}

describe("the V8 flags of the gateway svc gateway start starts", { timeout: 90_000 }, () => {
  it("on one CPU, the gateway collects on its main thread only (--single-threaded-gc)", async () => {
    const argv = await startedArgv("0");
    expect(argv).toContain("--single-threaded-gc");
    expect(argv).toContain("--min-semi-space-size=16");
  });

  it.skipIf(availableParallelism() < 2)("with more CPUs, V8 keeps its GC threads", async () => {
    const argv = await startedArgv(undefined);
    expect(argv).not.toContain("--single-threaded-gc");
    // The young generation's size is set whatever the CPUs.
    expect(argv).toContain("--min-semi-space-size=16");
  });
});
