import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { StoppedWhileStarting } from "../../../src/errors.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { pinoOptions } from "../../../src/io/log.js";
import { writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

/**
 * `startGateway({ stopping })` aborted while the gateway starts (a stop signal): it takes no saved run and
 * starts no cron job — the stop that follows would cut them off, and the saved run would be made again
 * (its side effects with it) at the next start.
 */
let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  home?.cleanup();
  gateway = home = undefined;
});

/** A home with a run a stop saved and a cron job due since 2020; every agent run is noted in `ran`. */
function homeWithSavedWork(): { home: TempHome; ran: string } {
  const made = tempHome();
  const ran = join(made.dir, "ran");
  made.write(
    "config.yaml",
    stringify(
      webhookConfig(
        { pr: { secret: "INSECURE_NO_AUTH", prompt: "p" } },
        {},
        { agent: { provider: "command", command: ["sh", "-c", `cat >/dev/null; echo run >> '${ran}'`] } },
      ),
    ),
  );
  made.write(
    "cron/jobs.json",
    oneJobStore({ name: "due", prompt: "hi", next_run: "2020-01-01T00:00:00.000Z" }),
  );
  writePendingRuns(join(made.dir, "webhook-pending-runs.json"), {
    runs: [pendingRun("saved-1")],
    unreadable: [],
  });
  return { home: made, ran };
}

/** A logger whose `Listening on` line aborts `stopping`: the signal comes as the listener opens. */
function abortingAtListen(stopping: AbortController, lines: string[]) {
  return pino(pinoOptions("debug"), {
    write: (line: string) => {
      lines.push(line);
      if (line.includes("Listening on")) stopping.abort();
    },
  });
}

const options = (dir: string) => ({
  home: dir,
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SVC_HOME: dir },
  port: 0,
  drainTimeoutMs: 5000,
});

/** Starts the gateway again with no stop signal: it runs the saved run and the due job, once each. */
async function nextStartRunsBoth(made: { home: TempHome; ran: string }): Promise<void> {
  gateway = await startGateway({
    ...options(made.home.dir),
    logger: abortingAtListen(new AbortController(), []),
  });
  await expect
    .poll(() => existsSync(made.ran) && readFileSync(made.ran, "utf8"), { timeout: 15_000 })
    .toBe("run\nrun\n");
}

describe("a stop signal while the gateway starts (local backend)", { timeout: 30_000 }, () => {
  it("before the listener opens: the start ends (StoppedWhileStarting), nothing run, the saved run kept", async () => {
    const made = homeWithSavedWork();
    home = made.home;
    const stopping = new AbortController();
    const lines: string[] = [];
    await expect(
      startGateway({
        ...options(home.dir),
        logger: abortingAtListen(new AbortController(), lines),
        onConfigRead: () => stopping.abort(),
        stopping: stopping.signal,
      }),
    ).rejects.toBeInstanceOf(StoppedWhileStarting);
    expect(lines.join("\n")).not.toContain("Listening on");
    expect(existsSync(made.ran)).toBe(false);
    expect(readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8")).toContain('"saved-1"');
    // Let go of: the next start takes the state directory's lock and runs the saved run and the job.
    await nextStartRunsBoth(made);
  });

  it("as the listener opens: no saved run is queued and no cron job starts; the stop keeps the run for the next start", async () => {
    const made = homeWithSavedWork();
    home = made.home;
    const stopping = new AbortController();
    const lines: string[] = [];
    const started = await startGateway({
      ...options(home.dir),
      logger: abortingAtListen(stopping, lines),
      stopping: stopping.signal,
    });
    await started.stop();
    expect(existsSync(made.ran)).toBe(false);
    const jobs = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")) as {
      jobs: { j1: { next_run: string; last_run?: unknown } };
    };
    expect(jobs.jobs.j1).toMatchObject({ next_run: "2020-01-01T00:00:00.000Z" });
    expect(jobs.jobs.j1.last_run).toBeUndefined();
    // Still owed: the next start runs it (and the job), once each.
    await nextStartRunsBoth(made);
  });
});
