import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { agentGroupsDir } from "../../../src/state/gatewayState.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalGroup, signalProcess } from "../../helpers/process.js";
import { startTestRedis } from "../../helpers/redis.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";
import {
  agentsAlive,
  burst,
  closeGate,
  deliver,
  liveOnDisk,
  openGate,
  ranLines,
  runCounts,
  SECRET,
  writeConfig,
} from "./killHelpers.js";

/**
 * docs/durability.md: with `state.backend: local` a 202 means the event is in the journal and synced.
 * The real CLI process is SIGKILLed (no shutdown code runs); the next start in the same SVC_HOME, which the
 * tests look at but never kill, is the real gateway started in this worker (`restart`): a `svc gateway run`
 * process for it cost ~0.4 CPU-s per test and asserted nothing more.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
const restarted: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const gateway of restarted.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

async function start(home: TempHome): Promise<Foreground> {
  const gateway = await runForeground(home);
  gateways.push(gateway);
  return gateway;
}

/** The start after a kill, in this worker; stopped (its agents with it) by `stopRestarted` or afterEach. */
async function restart(home: TempHome): Promise<Gateway> {
  const gateway = await startGatewayInHome(home);
  restarted.push(gateway);
  return gateway;
}

/** Stops a restarted gateway and waits until the agents it had started are gone. */
async function stopRestarted(gateway: Gateway, home: TempHome): Promise<void> {
  restarted.splice(restarted.indexOf(gateway), 1);
  await gateway.stop();
  await vi.waitFor(() => expect(agentsAlive(home)).toBe(0), { timeout: 15_000, interval: 20 });
}

/** SIGKILL, then wait until the agents it had started are gone (they must not run once the gate opens). */
async function kill(gateway: Foreground, home: TempHome): Promise<void> {
  gateway.child.kill("SIGKILL");
  await gateway.exited;
  await vi.waitFor(() => expect(agentsAlive(home)).toBe(0), { timeout: 15_000, interval: 20 });
}

/** A command agent that notes its pid, then sleeps a minute: left running by a gateway killed mid-run. */
const SLEEPING_AGENT = `echo $$ > "$0/agent.pid"; sleep 60; echo "$SVC_DELIVERY_ID" >> "$0/runs.log"`;
/** A command agent that notes each run at once: a second copy of a run shows as "<id> again". */
const NOTING_AGENT = `printf "%s again\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;

/** config.yaml: one route `pr` run by a command agent running `script`, with `state` when given. */
function agentConfig(home: TempHome, script: string, state?: Record<string, unknown>): void {
  const routes = { pr: { secret: SECRET, prompt: "pr {number}" } };
  home.write(
    "config.yaml",
    stringify({
      ...(state === undefined ? {} : { state }),
      agent: { provider: "command", command: ["sh", "-c", script, home.dir] },
      platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0, routes } },
    }),
  );
}

/**
 * Starts a gateway with the sleeping agent, delivers `id`, and SIGKILLs the gateway once it has noted the
 * agent's group: returns the orphaned agent's pid (it leads its group).
 */
async function orphanedAgent(home: TempHome, id: string, state?: Record<string, unknown>): Promise<number> {
  // No check of its parent: nothing but the next start stops it once the gateway is gone.
  agentConfig(home, SLEEPING_AGENT, state);
  const first = await start(home);
  expect(await deliver(first.port, "pr", id)).toMatchObject({ status: 202 });
  const orphan = await pidInFile(join(home.dir, "agent.pid"));
  // The gateway notes the agent's group just after it spawned it.
  await vi.waitFor(() => expect(readdirSync(agentGroupsDir(home.dir))).toEqual([String(orphan)]), {
    timeout: 10_000,
    interval: 20,
  });
  first.child.kill("SIGKILL");
  await first.exited;
  return orphan;
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Waits until the journal holds no unfinished run (every run the restart queued has finished). */
async function allFinished(home: TempHome, timeout = 20_000): Promise<void> {
  await vi.waitFor(() => expect(liveOnDisk(home).runs.size).toBe(0), { timeout, interval: 100 });
}

describe("SIGKILL with the local journal", { timeout: 90_000 }, () => {
  it("mid-burst: every delivery id answered 202 runs after the restart, runs recorded finished before the kill never run again, and retries answer 200 duplicate", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, { pr: { secret: SECRET, prompt: "pr {number}" } });
    openGate(home);
    const first = await start(home);

    // Runs that finish (and are recorded finished) before the kill.
    const done = await burst(first.port, "pr", ids("done", 8), 8);
    expect(done).toHaveLength(8);
    await vi.waitFor(() => expect(runCounts(home).size).toBe(8), { timeout: 20_000, interval: 50 });
    await allFinished(home);

    // The slots are held now: nothing of the burst finishes; the gateway dies after 30 answers.
    closeGate(home);
    let killed = false;
    const accepted = await burst(first.port, "pr", ids("burst", 80), 16, (n) => {
      if (n >= 30 && !killed) {
        killed = true;
        first.child.kill("SIGKILL");
      }
    });
    await kill(first, home);
    expect(accepted.length).toBeGreaterThanOrEqual(30);
    expect(accepted.length).toBeLessThan(80);

    openGate(home);
    const second = await restart(home);
    await vi.waitFor(
      () => {
        const counts = runCounts(home);
        expect(accepted.filter((id) => !counts.has(id))).toEqual([]);
      },
      { timeout: 30_000, interval: 100 },
    );
    await allFinished(home);
    const counts = runCounts(home);
    for (const id of [...done, ...accepted]) expect(counts.get(id), id).toBe(1);

    // The idempotency cache came back with the journal: retries are duplicates, not new runs.
    for (const id of [...done.slice(0, 5), ...accepted.slice(0, 5)]) {
      expect(await deliver(second.port, "pr", id)).toEqual({ status: 200, body: { status: "duplicate" } });
    }
    await stopRestarted(second, home);
  });

  it("cron_job routes: every fire answered 202 runs the job after the restart, and retries answer duplicate", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, { cr: { secret: SECRET, cron_job: "nightly" } });
    home.write(
      "cron/jobs.json",
      oneJobStore({ name: "nightly", prompt: "nightly job", next_run: "2099-01-01T00:00:00.000Z" }),
    );
    closeGate(home);
    const first = await start(home);
    const accepted = await burst(first.port, "cr", ids("fire", 12), 4);
    expect(accepted).toHaveLength(12);
    await kill(first, home);
    expect(ranLines(home)).toEqual([]);

    openGate(home);
    const second = await restart(home);
    await vi.waitFor(() => expect(ranLines(home).length).toBeGreaterThanOrEqual(12), {
      timeout: 30_000,
      interval: 100,
    });
    await allFinished(home);
    // Each fire ran the job once (its prompt), none lost with the killed process's queue.
    expect(ranLines(home).filter(([, prompt]) => prompt.includes("nightly job"))).toHaveLength(12);
    for (const id of accepted.slice(0, 3))
      expect(await deliver(second.port, "cr", id)).toEqual({ status: 200, body: { status: "duplicate" } });
    await stopRestarted(second, home);
  });

  it("right after the last 202: the whole burst runs after the restart, each id once", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, { pr: { secret: SECRET, prompt: "pr {number}" } });
    const first = await start(home);
    const sent = ids("last", 32);
    const accepted = await burst(first.port, "pr", sent, 16);
    expect(accepted).toHaveLength(32);
    await kill(first, home);

    openGate(home);
    const second = await restart(home);
    await vi.waitFor(() => expect(runCounts(home).size).toBe(32), { timeout: 30_000, interval: 100 });
    await allFinished(home);
    expect([...runCounts(home).values()].every((n) => n === 1)).toBe(true);
    expect(
      ranLines(home)
        .map(([id]) => id)
        .sort(),
    ).toEqual([...sent].sort());
    await stopRestarted(second, home);
  });

  it("pending coalescing groups survive: each group runs once after the restart, with its latest event and its merged count", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, {
      grouped: {
        secret: SECRET,
        prompt: "rev {rev}",
        coalesce: { key: "n", window_seconds: 1, max_wait_seconds: 60 },
      },
    });
    openGate(home);
    const first = await start(home);
    // Three groups: 3, 2 and 1 events; sent one after the other so the latest is known.
    const plan: Array<[string, number, number]> = [
      ["g1-a", 1, 1],
      ["g1-b", 1, 2],
      ["g1-c", 1, 3],
      ["g2-a", 2, 1],
      ["g2-b", 2, 2],
      ["g3-a", 3, 1],
    ];
    for (const [id, n, rev] of plan) {
      expect(await deliver(first.port, "grouped", id, { n, rev })).toEqual({
        status: 202,
        body: { status: "coalesced" },
      });
    }
    await kill(first, home);
    // Whatever fired before the kill ran (the gate is open); what was still pending fires after the restart.
    const second = await restart(home);
    await vi.waitFor(() => expect(ranLines(home)).toHaveLength(3), { timeout: 20_000, interval: 100 });
    await allFinished(home);
    expect(liveOnDisk(home).groups.size).toBe(0);
    const lines = new Map(ranLines(home));
    expect(lines.get("g1-c")).toBe(
      "[Coalesced: this run covers 3 events; 2 earlier events for this key were superseded]",
    );
    expect(lines.get("g2-b")).toBe(
      "[Coalesced: this run covers 2 events; 1 earlier event for this key was superseded]",
    );
    expect(lines.get("g3-a")).toBe("rev 1");
    expect(await deliver(second.port, "grouped", "g1-a", { n: 1, rev: 1 })).toEqual({
      status: 200,
      body: { status: "duplicate" },
    });
    await stopRestarted(second, home);
  });

  it("a crash while the runs of webhook-pending-runs.json replay loses none of them (they are in the journal before the file goes)", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, { pr: { secret: SECRET, prompt: "pr {number}" } });
    const saved = ids("saved", 16).map((id) => ({
      profile: "default",
      routeName: "pr",
      event: undefined,
      deliveryId: id,
      prompt: `pr ${id}`,
      extra: {},
      receivedAt: Date.now(),
    }));
    const file = join(home.dir, "webhook-pending-runs.json");
    writePendingRuns(file, { runs: saved, unreadable: [] });
    const first = await start(home);
    // The slots hold the first runs; the file is gone once the journal has them all.
    await vi.waitFor(() => expect(existsSync(file)).toBe(false), { timeout: 10_000, interval: 20 });
    await kill(first, home);

    openGate(home);
    const second = await restart(home);
    await vi.waitFor(() => expect(runCounts(home).size).toBe(16), { timeout: 30_000, interval: 100 });
    await allFinished(home);
    expect([...runCounts(home).values()].every((n) => n === 1)).toBe(true);
    await stopRestarted(second, home);
  });

  it("an agent the killed gateway left running is stopped at the next start, before its run runs again (never two copies)", async () => {
    const home = tempHome();
    homes.push(home);
    const orphan = await orphanedAgent(home, "slow");
    try {
      expect(alive(orphan)).toBe(true);
      agentConfig(home, NOTING_AGENT);
      const second = await restart(home);
      // Killed by the start (SIGKILL to its group); on a loaded machine its exit can trail the start a little.
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      await vi.waitFor(() => expect(runCounts(home).get("slow")).toBe(1), { timeout: 20_000, interval: 50 });
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(
        "[state] stopped 1 agent process group(s) left running by a gateway that was killed; their runs run again",
      );
      await stopRestarted(second, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });

  it("with state/LOCK removed by hand after the kill, the start still knows the agent's run is the journal's (its note says so): it runs it once and never says it is the shared queue's", async () => {
    const home = tempHome();
    homes.push(home);
    const orphan = await orphanedAgent(home, "slow");
    try {
      // What a user does when a start refuses a lock it cannot tell apart from a live gateway's.
      rmSync(join(home.dir, "state", "LOCK"));
      agentConfig(home, NOTING_AGENT);
      const second = await restart(home);
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      await vi.waitFor(() => expect(runCounts(home).get("slow")).toBe(1), { timeout: 20_000, interval: 50 });
      const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      // Before, with no lock to name the killed gateway, its agent was taken for a redis gateway's.
      expect(log).toContain(
        "[state] stopped 1 agent process group(s) left running by a gateway that was killed; their runs run again",
      );
      expect(log).not.toContain("state.backend: redis");
      await stopRestarted(second, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });

  it("a start killed while it replays the journal has stopped the killed gateway's agent first: the next start runs its run once, never saying it is the shared queue's", async () => {
    const home = tempHome();
    homes.push(home);
    const orphan = await orphanedAgent(home, "slow");
    try {
      // Killed after it took the state directory's lock, as an OOM kill during a large journal's replay.
      const replaying = spawn(
        process.execPath,
        [
          ...SVC_ARGV.slice(0, -1),
          "--import",
          join(import.meta.dirname, "../../helpers/killAtReplay.mjs"),
          ...SVC_ARGV.slice(-1),
          "gateway",
          "run",
          "--port",
          "0",
        ],
        { env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir }, stdio: "ignore" },
      );
      expect(await new Promise((resolve) => replaying.on("exit", (_code, signal) => resolve(signal)))).toBe(
        "SIGKILL",
      );
      // Before, it stopped them only after the replay: the next start found them noted by a gateway the lock
      // (taken by the killed start) did not name, and said their runs were Redis's, not run by it.
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      agentConfig(home, NOTING_AGENT);
      const third = await restart(home);
      await vi.waitFor(() => expect(runCounts(home).get("slow")).toBe(1), { timeout: 20_000, interval: 50 });
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).not.toContain(
        "state.backend: redis",
      );
      await stopRestarted(third, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });

  it("an agent a killed svc cron run left running is stopped at the next start; the run is not run again", async () => {
    const home = tempHome();
    homes.push(home);
    agentConfig(home, SLEEPING_AGENT);
    home.write(
      "cron/jobs.json",
      oneJobStore({ name: "nightly", prompt: "hi", next_run: "2099-01-01T00:00:00.000Z" }),
    );
    const orphan = await cronRunKilled(home, ["nightly"]);
    try {
      expect(alive(orphan)).toBe(true);
      const gateway = await restart(home);
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(
        "[cron] nightly: stopped the agent of its run left running by a process that was killed; that run is not run again",
      );
      await stopRestarted(gateway, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });

  it("the start's line about a killed svc cron run's agent names the job's profile (a job of that name in two profiles)", async () => {
    const home = tempHome();
    homes.push(home);
    agentConfig(home, SLEEPING_AGENT);
    const store = oneJobStore({ name: "nightly", prompt: "hi", next_run: "2099-01-01T00:00:00.000Z" });
    home.write("cron/jobs.json", store);
    home.write("profiles/work/cron/jobs.json", store);
    const orphan = await cronRunKilled(home, ["--profile", "work", "nightly"]);
    try {
      const gateway = await restart(home);
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(
        "[cron] nightly in profile work: stopped the agent of its run left running by a process that was killed",
      );
      await stopRestarted(gateway, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });

  it("switched to state.backend: redis after the kill: the start stops the agent and says its run stays in the local journal, not run here; the next start on local runs it once", async () => {
    const home = tempHome();
    homes.push(home);
    const redis = await startTestRedis();
    const orphan = await orphanedAgent(home, "slow");
    try {
      agentConfig(home, NOTING_AGENT, {
        backend: "redis",
        redis_url: redis.url,
        redis_key_prefix: "switched",
      });
      const second = await restart(home);
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      const state = join(home.dir, "state");
      await vi.waitFor(() => expect(log()).toContain("[webhook] Listening on"), {
        timeout: 10_000,
        interval: 50,
      });
      expect(log()).toContain(
        `[state] stopped 1 agent process group(s) left running by a gateway that was killed with state.backend: local; their runs are not run by this start: state.backend: redis does not read the local journal in ${state} that holds them — they run when the gateway runs with state.backend: local again (start it once on local to let them run, then switch back)`,
      );
      expect(log()).not.toContain("their runs run again");
      // Not run here: the journal still owes it.
      expect(runCounts(home).get("slow")).toBeUndefined();
      expect(liveOnDisk(home).runs.size).toBe(1);
      await stopRestarted(second, home);

      agentConfig(home, NOTING_AGENT);
      const third = await restart(home);
      await vi.waitFor(() => expect(runCounts(home).get("slow")).toBe(1), { timeout: 20_000, interval: 50 });
      await allFinished(home);
      await stopRestarted(third, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
      await redis.cleanup();
    }
  });

  it("switched to state.backend: local after a redis gateway's kill: the start stops the agent and says its run is the shared queue's, not run here", async () => {
    const home = tempHome();
    homes.push(home);
    const redis = await startTestRedis();
    const shared = { backend: "redis", redis_url: redis.url, redis_key_prefix: "toLocal" };
    const orphan = await orphanedAgent(home, "queued", shared);
    try {
      agentConfig(home, NOTING_AGENT);
      const second = await restart(home);
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      await vi.waitFor(() => expect(log()).toContain("[webhook] Listening on"), {
        timeout: 10_000,
        interval: 50,
      });
      expect(log()).toContain(
        "[state] stopped 1 agent process group(s) left running by a gateway that was killed with state.backend: redis; their runs are not run by this start: they are in the shared queue in Redis, which state.backend: local does not read — a gateway on state.backend: redis runs them once their lock expires (start one on redis to let them run)",
      );
      expect(log()).not.toContain("their runs run again");
      expect(runCounts(home).get("queued")).toBeUndefined();
      await stopRestarted(second, home);
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
      await redis.cleanup();
    }
  });

  it("a route script the killed gateway left running is stopped at the next start, and its unanswered event's retry is processed", async () => {
    const home = tempHome();
    homes.push(home);
    const pidFile = join(home.dir, "script.pid");
    home.write(
      "config.yaml",
      stringify({
        agent: {
          provider: "command",
          command: [
            "sh",
            "-c",
            'printf "%s %s\\n" "$SVC_DELIVERY_ID" "$(head -n 1)" >> "$0/runs.log"',
            home.dir,
          ],
        },
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            port: 0,
            script_timeout_seconds: 5,
            routes: { pr: { secret: SECRET, prompt: "pr {number}", script: "slow.sh" } },
          },
        },
      }),
    );
    // Far longer than script_timeout_seconds: only the gateway that started it could have ended it in time.
    home.write("scripts/slow.sh", `echo $$ > "${pidFile}"; sleep 60; echo '{"number": 1}'`);
    const first = await start(home);
    const answer = deliver(first.port, "pr", "scripted");
    const orphan = await pidInFile(pidFile);
    // The gateway notes the script's group just after it spawned it.
    await vi.waitFor(() => expect(readdirSync(agentGroupsDir(home.dir))).toEqual([String(orphan)]), {
      timeout: 10_000,
      interval: 20,
    });
    first.child.kill("SIGKILL");
    await first.exited;
    try {
      // The sender never had an answer.
      expect(await answer).toHaveProperty("error");
      expect(alive(orphan)).toBe(true);
      home.write("scripts/slow.sh", `echo '{"number": 2}'`);
      const second = await restart(home);
      // Killed by the start (SIGKILL to its group); on a loaded machine its exit can trail the start a little.
      await vi.waitFor(() => expect(alive(orphan)).toBe(false), { timeout: 15_000, interval: 20 });
      expect(readdirSync(agentGroupsDir(home.dir))).toEqual([]);
      const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
      expect(log).toContain(
        "[webhook] pr: stopped the route script left running by a gateway that was killed; its event was never answered — the sender's retry is processed",
      );
      // Not counted among the agents whose runs run again: the event was never journaled.
      expect(log).not.toContain("agent process group(s) left running");
      expect(await deliver(second.port, "pr", "scripted")).toMatchObject({ status: 202 });
      // The run has the payload of the script the second gateway ran.
      await vi.waitFor(() => expect(ranLines(home)).toEqual([["scripted", "pr 2"]]), {
        timeout: 20_000,
        interval: 50,
      });
    } finally {
      if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    }
  });
});

/**
 * `svc cron run <args>` in `home`, SIGKILLed once its agent's group is noted: returns the agent's pid, left
 * running as a killed process leaves it.
 */
async function cronRunKilled(home: TempHome, args: string[]): Promise<number> {
  const run = spawn(process.execPath, [...SVC_ARGV, "cron", "run", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => run.on("exit", resolve));
  const orphan = await pidInFile(join(home.dir, "agent.pid"));
  try {
    await vi.waitFor(() => expect(readdirSync(agentGroupsDir(home.dir))).toEqual([String(orphan)]), {
      timeout: 10_000,
      interval: 20,
    });
  } catch (err) {
    if (alive(orphan)) signalGroup(orphan, "SIGKILL");
    throw err;
  }
  signalProcess(run.pid as number, "SIGKILL");
  await exited;
  return orphan;
}
