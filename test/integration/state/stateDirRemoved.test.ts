import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";
import {
  agentsAlive,
  closeGate,
  deliver,
  liveOnDisk,
  openGate,
  runCounts,
  SECRET,
  statusOf,
  writeConfig,
} from "./killHelpers.js";

/**
 * docs/durability.md, "The state directory removed while the gateway runs": the journal looks (at most
 * once a second, as a batch is flushed) whether its segment's path still names the file it writes; when
 * it does not (`rm -rf $SVC_HOME/state`, or the directory moved away), it recreates the directory and
 * restates what is live in a new segment there, and holds the answers of the requests waiting meanwhile
 * until that segment is durable — so a 202 is never given for an event no restart could find.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

function newHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  writeConfig(home, { pr: { secret: SECRET, prompt: "pr {number}" } });
  return home;
}

async function start(home: TempHome): Promise<Foreground> {
  const gateway = await runForeground(home);
  gateways.push(gateway);
  return gateway;
}

async function kill(gateway: Foreground, home: TempHome): Promise<void> {
  gateway.child.kill("SIGKILL");
  await gateway.exited;
  await vi.waitFor(() => expect(agentsAlive(home)).toBe(0), { timeout: 15_000, interval: 20 });
}

/** A gateway on `clock` in `home`, in this process. */
async function startOnClock(home: TempHome, clock: ReturnType<typeof fakeClock>): Promise<Gateway> {
  const gateway = await startGateway({
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    now: clock.now,
    timers: clock,
    logger: createLogger({ file: join(home.dir, "gateway.log"), fileFormat: "json", stdout: false }),
    drainTimeoutMs: 100,
  });
  running.push(gateway);
  return gateway;
}

describe("the state directory removed while the gateway runs", { timeout: 60_000 }, () => {
  it("events answered 202 after rm -rf state/ run after a SIGKILL and a restart, with those accepted before it", async () => {
    const home = newHome();
    closeGate(home);
    const first = await start(home);
    expect(await statusOf(deliver(first.port, "pr", "before"))).toBe(202);

    rmSync(stateDir(home.dir), { recursive: true, force: true });
    // The journal looks at most once a second: this wait makes sure the next flush looks.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    for (const id of ["after-1", "after-2", "after-3"])
      expect(await statusOf(deliver(first.port, "pr", id))).toBe(202);
    await kill(first, home);
    expect(first.stdout() + first.stderr()).toContain("no longer names the file the gateway writes");

    openGate(home);
    const second = await start(home);
    await vi.waitFor(() => expect(runCounts(home).size).toBe(4), { timeout: 20_000, interval: 100 });
    expect([...runCounts(home).keys()].sort()).toEqual(["after-1", "after-2", "after-3", "before"]);
    await kill(second, home);
  });

  it("the events accepted in the second before the journal looked are in the new segment, as is the one that made it look; the directory is 0700 and locked again", async () => {
    const home = newHome();
    closeGate(home);
    const clock = fakeClock();
    const port = (await startOnClock(home, clock)).port;
    expect(await statusOf(deliver(port, "pr", "a"))).toBe(202);

    const dir = stateDir(home.dir);
    rmSync(dir, { recursive: true, force: true });
    // Within the second: written where no restart finds them (not looked yet).
    for (const id of ["b", "c"]) expect(await statusOf(deliver(port, "pr", id))).toBe(202);
    // No segment yet (state/ itself may be back already: a run's agent notes its process group under it).
    expect(existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".seg")) : []).toEqual([]);

    clock.advance(1000);
    expect(await statusOf(deliver(port, "pr", "d"))).toBe(202);
    // Its 202 came once the new segment was durable: what a restart reads now holds all four.
    expect([...liveOnDisk(home).runs.values()].map((run) => run.deliveryId).sort()).toEqual([
      "a",
      "b",
      "c",
      "d",
    ]);
    expect(readFileSync(join(dir, "LOCK"), "utf8")).toMatch(new RegExp(`^${process.pid} `));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const log = readFileSync(join(home.dir, "gateway.log"), "utf8");
    expect(log).toContain("no longer names the file the gateway writes");
    openGate(home);
  });

  // A gateway writes no batch while its runs wait behind a long one or its groups are open: the look
  // comes on a timer too, so what it holds is back on disk within a second, not at the next request.
  for (const stepped of [false, true])
    it(`a gateway that writes nothing more still recreates the directory and restates what is live${stepped ? ", after its wall clock was set back an hour" : ""}`, async () => {
      const home = newHome();
      closeGate(home);
      const clock = fakeClock();
      const port = (await startOnClock(home, clock)).port;
      for (const id of ["q-1", "q-2"]) expect(await statusOf(deliver(port, "pr", id))).toBe(202);
      rmSync(stateDir(home.dir), { recursive: true, force: true });
      // A step back used to stop the look until the clock had caught up with the last one.
      if (stepped) clock.step(-3_600_000);
      clock.advance(1000);
      await vi.waitFor(
        () =>
          expect([...liveOnDisk(home).runs.values()].map((run) => run.deliveryId).sort()).toEqual([
            "q-1",
            "q-2",
          ]),
        { timeout: 10_000, interval: 20 },
      );
      openGate(home);
    });
});
