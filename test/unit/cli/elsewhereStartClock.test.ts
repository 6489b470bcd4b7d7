import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { elsewhereStart } from "../../../src/cli/gatewayLifecycle.js";
import { svcPaths } from "../../../src/config/paths.js";
import { GatewayElsewhereError, gatewayStateFile } from "../../../src/io/gatewayState.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { awaitForeignLock, LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { FOREIGN_UNTOUCHED_MS, HEARTBEAT_MS } from "../../../src/io/stores/fileLock.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type HealthImpostor, healthImpostor } from "../../helpers/healthImpostor.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * `svc gateway start|run` beside a gateway.pid of another PID namespace whose /health it cannot reach: the
 * gateway there touches the file every HEARTBEAT_MS, and one left untouched for FOREIGN_UNTOUCHED_MS is a
 * killed gateway's. Judged by the file's time against this command's clock, a clock stepped by more than
 * that (NTP at boot, a VM resumed, faketime) made a live gateway's file look untouched at once: its files
 * were removed and a second gateway started on the same SVC_HOME. It is now judged by how long this command
 * has watched it stay untouched, on its monotonic clock.
 */

const ELSEWHERE = "pid:[4026530000]";
let home: TempHome;
let impostor: HealthImpostor | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await impostor?.close();
  impostor = undefined;
  home.cleanup();
});

/**
 * A gateway.pid and gateway.json written in another namespace by pid 4242, touched `ms` ago by this clock;
 * `recording`: the port and instance gateway.json records (default: a closed port, no instance).
 */
async function leftElsewhere(ms: number, recording: { port?: number; instance?: string } = {}) {
  home = tempHome();
  const paths = svcPaths(home.dir);
  writeFileSync(paths.pidFile, "4242\n");
  const at = new Date(Date.now() - ms);
  utimesSync(paths.pidFile, at, at);
  writeFileSync(
    gatewayStateFile(paths),
    JSON.stringify({
      pid: 4242,
      host: "127.0.0.1",
      port: recording.port ?? (await closedPort()),
      started_at: new Date().toISOString(),
      pid_namespace: ELSEWHERE,
      ...(recording.instance === undefined ? {} : { instance: recording.instance }),
    }),
  );
  const err = new GatewayElsewhereError(paths, 4242, ELSEWHERE, pidNamespace() ?? "-");
  return { paths, err };
}

describe.runIf(process.platform === "linux")("a gateway.pid of another PID namespace", () => {
  it.each([
    ["ahead", FOREIGN_UNTOUCHED_MS + 5000],
    ["back", -(FOREIGN_UNTOUCHED_MS + 5000)],
  ])(
    "touched by a live gateway is not removed when this command's clock was stepped %s by more than FOREIGN_UNTOUCHED_MS: it is watched, and its heartbeat refuses the start",
    async (_, step) => {
      const { paths, err } = await leftElsewhere(0);
      vi.useFakeTimers({ toFake: ["performance", "Date"] });
      vi.setSystemTime(Date.now() + step);
      const said: string[] = [];
      let looks = 0;
      const refused = await elsewhereStart(
        paths,
        err,
        (line) => said.push(line),
        async (ms) => {
          looks += 1;
          vi.advanceTimersByTime(ms);
          // Its heartbeat, HEARTBEAT_MS later by its own clock.
          if (looks === 5) {
            const beat = new Date(statSync(paths.pidFile).mtimeMs + HEARTBEAT_MS);
            utimesSync(paths.pidFile, beat, beat);
          }
        },
      );
      expect(said).toEqual([
        expect.stringMatching(
          /^\[gateway\] .* names pid 4242 of another PID namespace .*, which does not answer \/health: waiting up to 15 s for it to stay untouched for 15 s while this command watches it/,
        ),
      ]);
      expect(refused?.message).toMatch(
        /^a gateway already runs on this SVC_HOME: .* names pid 4242 of another PID namespace .*, and that gateway touched it while this command watched it/,
      );
      expect(readFileSync(paths.pidFile, "utf8")).toBe("4242\n");
      expect(existsSync(gatewayStateFile(paths))).toBe(true);
    },
  );

  it("left untouched, however long ago its time says, is removed once this command has watched it untouched for FOREIGN_UNTOUCHED_MS", async () => {
    const { paths, err } = await leftElsewhere(3_600_000);
    vi.useFakeTimers({ toFake: ["performance", "Date"] });
    const said: string[] = [];
    let slept = 0;
    const refused = await elsewhereStart(
      paths,
      err,
      (line) => said.push(line),
      async (ms) => {
        slept += ms;
        vi.advanceTimersByTime(ms);
      },
    );
    expect(refused).toBeUndefined();
    expect(slept).toBeGreaterThanOrEqual(FOREIGN_UNTOUCHED_MS);
    expect(said).toHaveLength(2);
    expect(said[1]).toMatch(
      /^\[gateway\] .* named pid 4242 of another PID namespace .*, untouched for 15\.\d s while this command watched it \(a running gateway touches it every 5 s\) and not answering \/health: left by a gateway killed there/,
    );
    expect(existsSync(paths.pidFile)).toBe(false);
    expect(existsSync(gatewayStateFile(paths))).toBe(false);
  });

  it("left untouched while another program answers /health 200 at its recorded address (without the instance gateway.json records) is a killed gateway's all the same: watched, removed, and the start goes on", async () => {
    impostor = await healthImpostor();
    const { paths, err } = await leftElsewhere(0, { port: impostor.port, instance: "the-gone-gateways-id" });
    vi.useFakeTimers({ toFake: ["performance", "Date"] });
    const said: string[] = [];
    const refused = await elsewhereStart(
      paths,
      err,
      (line) => said.push(line),
      async (ms) => {
        vi.advanceTimersByTime(ms);
      },
    );
    expect(refused).toBeUndefined();
    expect(impostor.asked()).toBeGreaterThan(1);
    expect(said).toHaveLength(2);
    expect(said[0]).toContain(
      `, which does not answer /health (another program (or another gateway) answers at 127.0.0.1:${impostor.port}, where ${gatewayStateFile(paths)} says it listens: not that gateway): waiting up to 15 s for it to stay untouched`,
    );
    expect(said[1]).toMatch(
      /^\[gateway\] .* named pid 4242 of another PID namespace .*, untouched for 15\.\d s /,
    );
    expect(existsSync(paths.pidFile)).toBe(false);
    expect(existsSync(gatewayStateFile(paths))).toBe(false);
  });

  it("left with the state directory's lock of the same killed gateway, watches both at once: the gateway's wait for the lock then ends at once, not FOREIGN_UNTOUCHED_MS later", async () => {
    const { paths, err } = await leftElsewhere(3_600_000);
    const dir = join(home.dir, "state");
    mkdirSync(dir);
    const lock = join(dir, LOCK_FILE);
    writeFileSync(lock, "4242 12345 their-token pid:[4026530000]\n", { mode: 0o600 });
    vi.useFakeTimers({ toFake: ["performance", "Date"] });
    const sleep = async (ms: number) => {
      vi.advanceTimersByTime(ms);
    };
    expect(await elsewhereStart(paths, err, () => {}, sleep)).toBeUndefined();
    const said: string[] = [];
    let slept = 0;
    await awaitForeignLock(dir, {
      info: (line) => said.push(line),
      sleep: async (ms) => {
        slept += ms;
        vi.advanceTimersByTime(ms);
      },
    });
    expect(said).toEqual([]);
    expect(slept).toBe(0);
  });
});
