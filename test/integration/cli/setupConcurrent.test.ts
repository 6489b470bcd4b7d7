import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, runNode, type SvcResult } from "./svc.js";

const MARK_WAITS = join(import.meta.dirname, "../../helpers/markLockWaits.mjs");

let home: TempHome;
afterEach(() => home.cleanup());

/** `svc gateway setup --non-interactive --port <port>`, resolving once it waits for a lock (and its end). */
function setup(port: number): { waiting: Promise<void>; done: Promise<SvcResult> } {
  let waited: () => void = () => {};
  const waiting = new Promise<void>((resolve) => (waited = resolve));
  const done = runNode(
    home,
    [
      ...CLI_NODE_ARGS,
      "--import",
      MARK_WAITS,
      MAIN,
      "gateway",
      "setup",
      "--non-interactive",
      "--port",
      String(port),
    ],
    { onStderr: (chunk) => chunk.includes("[test] waiting ") && waited() },
  );
  return { waiting: Promise.race([waiting, done.then(() => {})]), done };
}

const configPort = () =>
  (parse(readFileSync(join(home.dir, "config.yaml"), "utf8")) as { platforms: { webhook: { port: number } } })
    .platforms.webhook.port;
const envPort = () => /^WEBHOOK_PORT=(\d+)$/m.exec(readFileSync(join(home.dir, ".env"), "utf8"))?.[1];

/**
 * `svc gateway setup` writes config.yaml, then .env, each under its own lock: a second setup run meanwhile
 * wrote its port into config.yaml between the first one's two writes, and whichever wrote .env last won
 * there, so config.yaml could name one port and .env (which wins) another.
 */
describe("two svc gateway setup run at once", { timeout: 60_000 }, () => {
  it("one writes config.yaml and .env after the other: both files name the same port", async () => {
    home = tempHome();
    writeFileSync(join(home.dir, "config.yaml"), stringify(cliConfig()), { mode: 0o600 });
    // .env held as another svc process would hold it: the first setup waits for it once it gets there.
    const envLock = join(home.dir, ".env.lock");
    writeFileSync(envLock, String(process.pid));
    const first = setup(1111);
    await first.waiting;
    expect(configPort()).toBe(1111);
    const second = setup(2222);
    await second.waiting;
    // The second waits before it writes anything: the first one's pair of files is not cut in two.
    expect(configPort()).toBe(1111);
    rmSync(envLock);
    const results = await Promise.all([first.done, second.done]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect([configPort(), envPort()]).toEqual([2222, "2222"]);
  });
});
