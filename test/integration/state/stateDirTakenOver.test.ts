import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { scrapedSample } from "../../helpers/metrics.js";
import { type Answer, closeGate, deliver, openGate, SECRET, writeConfig } from "./killHelpers.js";

/**
 * docs/durability.md, "One gateway per state directory": a gateway whose state directory another gateway took
 * over (this one paused past the 15 s a gateway of another PID namespace waits, or LOCK replaced by hand)
 * says so once at ERROR and answers 503 to every request from then on: that gateway replayed the journal and
 * runs what it holds, and nothing this one would accept could be kept.
 */

const statusOf = async (answer: Promise<Answer>) => {
  const got = await answer;
  return "status" in got ? got.status : got.error;
};

const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

function newHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  writeConfig(home, { pr: { secret: SECRET, prompt: "pr {number}" } });
  return home;
}

/** A gateway on `clock` in `home`, in this process (the journal's look at its lock and segment runs on it). */
async function startOnClock(home: TempHome, clock: FakeClock): Promise<Gateway> {
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

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

/** The log's lines at `level` (JSON lines) whose message contains `text`. */
function logged(home: TempHome, level: keyof typeof LEVELS, text: string): string[] {
  return readFileSync(join(home.dir, "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === LEVELS[level] && line.msg.includes(text))
    .map((line) => line.msg);
}

describe("a gateway whose state directory another gateway took over", { timeout: 60_000 }, () => {
  it("answers 503 to a signed POST from its next look on (LOCK written by hand, as a gateway of another PID namespace's), says so once at ERROR, and /metrics shows svc_state_available 0", async () => {
    const home = newHome();
    openGate(home);
    const clock = fakeClock();
    const port = (await startOnClock(home, clock)).port;
    expect(await statusOf(deliver(port, "pr", "before"))).toBe(202);

    writeFileSync(join(stateDir(home.dir), LOCK_FILE), "1 123 abc pid:[4026599999]\n");
    clock.advance(SEGMENT_CHECK_MS);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    for (const id of ["after-1", "after-2"]) expect(await statusOf(deliver(port, "pr", id))).toBe(503);
    expect(await scrapedSample(`http://127.0.0.1:${port}`, "svc_state_available")).toBe(0);
    // Later looks say nothing more, and nothing is accepted.
    clock.advance(5 * SEGMENT_CHECK_MS);
    expect(await statusOf(deliver(port, "pr", "after-3"))).toBe(503);
    expect(logged(home, "error", "no longer names this gateway")).toHaveLength(1);
    expect(readFileSync(join(stateDir(home.dir), LOCK_FILE), "utf8")).toBe("1 123 abc pid:[4026599999]\n");
    closeGate(home);
  });
});
