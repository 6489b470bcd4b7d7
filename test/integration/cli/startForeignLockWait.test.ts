import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { svcPaths } from "../../../src/config/paths.js";
import { gatewayStateFile } from "../../../src/io/gatewayState.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { FOREIGN_UNTOUCHED_MS } from "../../../src/io/stores/fileLock.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, runNode, type SvcOptions, type SvcResult, svc } from "./svc.js";

/**
 * `svc gateway start` where the state directory's LOCK names a gateway of another PID namespace (a
 * container restarted after its gateway was killed): the gateway it spawns watches that lock for up to
 * 15 s before it takes it over, as long as start's own default wait for /health, so start gave up on a
 * gateway that came up moments later ("did not answer /health within 15s, so it was stopped"). It now
 * looks at that lock itself before it spawns the gateway and gives it the wait left, whatever the gateway
 * logs (it read the gateway's INFO line, so SVC_LOG_LEVEL=warn, or an SVC_HOME with a space, gave none).
 */

let home: TempHome | undefined;
/** The directory (a name with a space) that holds `home`, when a test made one. */
let outer: TempHome | undefined;
afterEach(async () => {
  if (home === undefined) return;
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
  home = undefined;
  outer?.cleanup();
  outer = undefined;
});

/** A foreign lock in `home`'s state directory, left by a pid that runs nowhere here, touched just now. */
function foreignLock(at: TempHome): string {
  const dir = join(at.dir, "state");
  mkdirSync(dir, { recursive: true });
  const pid = spawnSync("true").pid as number;
  const lock = join(dir, LOCK_FILE);
  writeFileSync(lock, `${pid} 12345 their-token pid:[4026530000]\n`, { mode: 0o600 });
  return lock;
}

/**
 * `svc gateway start` against `at`, its monotonic clock `clock` (the gateway it spawns inherits the preload and
 * the environment): the test steps it past the 15 s watch once the wait is seen, rather than waiting it out.
 * The start's own deadline is on that clock too, so a start that did not add the gateway's wait to it gives
 * up at the step.
 */
function steppedStart(at: TempHome, clock: SteppedClock, options: SvcOptions = {}): Promise<SvcResult> {
  return runNode(at, [...CLI_NODE_ARGS, ...clock.nodeArgs, MAIN, "gateway", "start"], {
    ...options,
    env: { ...options.env, ...clock.env },
  });
}

/** The gateway's output so far ("" before it writes any). */
function gatewayOut(at: TempHome): string {
  const file = join(at.dir, "logs", "gateway.out");
  return existsSync(file) ? readFileSync(file, "utf8") : "";
}

describe.runIf(pidNamespace() !== undefined)(
  "svc gateway start beside a foreign state LOCK",
  { timeout: 120_000 },
  () => {
    it("waits out the gateway's lock wait and reports the gateway started", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()));
      const dir = join(home.dir, "state");
      mkdirSync(dir, { recursive: true });
      // Left by a gateway of another namespace (a pid that runs nowhere here), touched just now.
      const pid = spawnSync("true").pid as number;
      const lock = join(dir, LOCK_FILE);
      writeFileSync(lock, `${pid} 12345 their-token pid:[4026530000]\n`, { mode: 0o600 });
      const clock = steppedClock();
      const at = home;
      const started = steppedStart(at, clock);
      // The gateway says it waits (at its first look at the lock): its clock is stepped past the bound.
      await vi.waitFor(() => expect(gatewayOut(at)).toMatch(/\[state\] .* waiting up to /), {
        timeout: 60_000,
        interval: 50,
      });
      clock.step(FOREIGN_UNTOUCHED_MS);
      const res = await started;
      const out = readFileSync(join(home.dir, "logs", "gateway.out"), "utf8");
      expect(res.stderr, out).toBe("");
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Gateway started: pid \d+, listening on /);
      expect(out).toMatch(
        new RegExp(
          `\\[state\\] ${lock} names a gateway of another PID namespace .*: waiting up to 15 s for it`,
        ),
      );
      expect(readFileSync(lock, "utf8")).toMatch(/^\d+ \S+ \S+ pid:\[\d+\]\n$/);
      expect(readFileSync(lock, "utf8")).not.toContain("their-token");
    });

    it("waits it out whatever SVC_LOG_LEVEL is (warn: the gateway says nothing of its wait), with an SVC_HOME whose path has a space", async () => {
      outer = tempHome();
      const spaced = join(outer.dir, "with space");
      mkdirSync(spaced);
      home = tempHome(spaced);
      home.write("config.yaml", stringify(cliConfig()));
      const lock = foreignLock(home);
      const clock = steppedClock();
      const started = steppedStart(home, clock, { env: { SVC_LOG_LEVEL: "warn" } });
      // Silent at warn: stepped once the gateway has claimed gateway.pid, after it took what start watched
      // over (at its first look or a later one, taking the lock over then).
      const pidFile = svcPaths(home.dir).pidFile;
      await vi.waitFor(() => expect(existsSync(pidFile)).toBe(true), { timeout: 60_000, interval: 50 });
      clock.step(FOREIGN_UNTOUCHED_MS);
      const res = await started;
      const out = readFileSync(join(home.dir, "logs", "gateway.out"), "utf8");
      expect(res.stderr, out).toBe("");
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Gateway started: pid \d+, listening on /);
      expect(out).not.toContain("waiting up to");
      expect(readFileSync(lock, "utf8")).not.toContain("their-token");
    });

    it("beside a gateway.pid left by the same killed gateway, watches both at once: the gateway takes the lock over without watching it 15 s more", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()));
      const lock = foreignLock(home);
      const paths = svcPaths(home.dir);
      writeFileSync(paths.pidFile, "4242\n");
      writeFileSync(
        gatewayStateFile(paths),
        JSON.stringify({
          pid: 4242,
          host: "127.0.0.1",
          port: await closedPort(),
          started_at: new Date().toISOString(),
          pid_namespace: "pid:[4026530000]",
        }),
      );
      // Stepped past the bound once the start says it watches gateway.pid (the gateway runs on that clock too).
      const clock = steppedClock();
      let stepped = false;
      const res = await steppedStart(home, clock, {
        onStdout: (chunk) => {
          if (stepped || !chunk.includes("waiting up to")) return;
          stepped = true;
          clock.step(FOREIGN_UNTOUCHED_MS);
        },
      });
      const out = readFileSync(join(home.dir, "logs", "gateway.out"), "utf8");
      expect(res.stderr, out).toBe("");
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(
        /waiting up to 15 s .*\n.*removed it .*\nGateway started: pid \d+, listening on /s,
      );
      expect(out).not.toContain("waiting up to");
      expect(readFileSync(lock, "utf8")).not.toContain("their-token");
    });
  },
);
