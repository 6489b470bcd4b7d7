import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground, waitFor } from "../cli/svc.js";
import { agentsAlive, deliver, liveOnDisk, SECRET } from "./killHelpers.js";

/**
 * docs/webhook.md (SIGTERM): a SIGKILL before the drain is over loses no accepted run, and with the local journal the
 * runs that finished during the drain do not run once more at the next start (the journal records each run's end,
 * and a run saved to webhook-pending-runs.json when the stop began that it knows finished is not taken again).
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  // A killed gateway's agent notices within 50 ms and exits; removing the home while one still runs (a
  // loaded machine) failed the cleanup with ENOTEMPTY.
  for (const home of homes)
    await waitFor(() => agentsAlive(home) === 0, "the killed gateways' agents to exit");
  for (const home of homes.splice(0)) home.cleanup();
});

/**
 * Each run appends `<delivery id>` to runs.log when it ends; a prompt naming `slow` takes 2 s, `stuck` 30 s.
 * A run whose gateway is gone gives up without writing: SIGKILL leaves the agent an orphan, and the first
 * gateway's `stuck` run, had it slept on, appended `c` to runs.log once the test had run 30 s (in a
 * loaded fresh-clone run, while the home was being removed). A gateway killed before the shell started
 * has left it the reaper's (PID 1) already, which answers `kill -0` for ever: it exits too. One killed while
 * it wrote the prompt leaves the agent a cut prompt (`pr st`, or none) that names no wait: the parent is
 * looked for once more before the line is written, or `c` was written at once.
 */
function writeConfig(home: TempHome): void {
  const agent = `[ "$PPID" -ne 1 ] || exit 1; p="$(cat)"; case "$p" in *stuck*) n=600;; *slow*) n=40;; *) n=0;; esac; while [ $n -gt 0 ]; do kill -0 $PPID 2>/dev/null || exit 1; sleep 0.05; n=$((n - 1)); done; kill -0 $PPID 2>/dev/null || exit 1; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;
  home.write(
    "config.yaml",
    stringify({
      gateway: { drain_timeout_seconds: 60 },
      agent: { provider: "command", command: ["sh", "-c", agent, home.dir], max_concurrent_runs: 1 },
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          port: 0,
          routes: { pr: { secret: SECRET, prompt: "pr {number}" } },
        },
      },
    }),
  );
}

const ran = (home: TempHome): string[] => {
  const file = join(home.dir, "runs.log");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
};

/** Whether an agent of `home` runs for delivery `id` (its command names home's dir, its environment the id). */
function agentRunning(home: TempHome, id: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(home.dir)) continue;
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`SVC_DELIVERY_ID=${id}`))
        return true;
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return false;
}

describe("SIGKILL during a stop's drain, with the local journal", { timeout: 60_000 }, () => {
  it("runs that finished during the drain do not run again after the restart", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home);
    const first = await runForeground(home);
    gateways.push(first);
    for (const [id, number] of [
      ["a", "slow"],
      ["b", "fast"],
      ["c", "stuck"],
    ] as const)
      expect(await deliver(first.port, "pr", id, { number })).toMatchObject({ status: 202 });
    first.child.kill("SIGTERM");
    // a ends in the drain, then b runs (the drain goes on with the queue) and ends; c holds the drain.
    await waitFor(() => ran(home).includes("b"), "b to run in the drain");
    // b's command wrote runs.log before it exited; the gateway records its end in the journal only once it
    // has seen that exit, which on a loaded machine took longer than the half second once slept here.
    await waitFor(
      () => ![...liveOnDisk(home).runs.values()].some((run) => run.deliveryId === "b"),
      "the journal to record b's end",
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(ran(home)).toEqual(["a", "b"]);

    const second = await runForeground(home);
    gateways.push(second);
    // Not a fixed wait, which a slow start would outlast with nothing run yet: the restart has queued what
    // it takes again (one line, after every such run is queued), and the slot (max_concurrent_runs 1) has
    // reached c, so a or b taken again would have been queued with it, and run already or be running.
    const requeued = () =>
      /\[state\] (\d+) agent run\(s\) left unfinished .* queued again/.exec(second.stdout());
    await waitFor(() => requeued() !== null, "the restart to queue the unfinished runs again");
    await waitFor(() => agentRunning(home, "c"), "c to run again after the restart");
    expect(requeued()?.[1]).toBe("1");
    expect(ran(home)).toEqual(["a", "b"]);
  });
});
