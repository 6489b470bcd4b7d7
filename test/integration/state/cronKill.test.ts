import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";

/**
 * docs/durability.md: a scheduled cron run is not journaled (its next_run moved on before it started), so a
 * gateway killed in the middle of it left no trace but its note; the next start records it `interrupted` in
 * the job's `last_run`, as a run the stop ended, and catches its occurrence up once, whether the kill came
 * while its agent ran or while its delivery was being retried; a catch-up cut off too is not run again.
 * The real CLI process is SIGKILLed and started again in the same SVC_HOME; a start that is not killed in its
 * turn is the real gateway started in this worker (`restart`), which saved a `svc gateway run` process.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
const restarted: Gateway[] = [];
const fakes: FakeApi[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const gateway of restarted.splice(0)) await gateway.stop();
  for (const fake of fakes.splice(0)) await fake.close();
  for (const home of homes.splice(0)) home.cleanup();
});

/** A Telegram Bot API whose sendMessage answers 500 (a transient failure, retried) until `ok` is set. */
async function failingTelegram(): Promise<FakeApi & { ok: boolean }> {
  const state = { ok: false };
  const fake = await startFakeApi((request) => {
    if (request.path.endsWith("/getMe"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    if (state.ok) return { json: { ok: true, result: { message_id: 1, chat: { id: 5 }, date: 1 } } };
    return { status: 500, json: { ok: false, error_code: 500, description: "Internal Server Error" } };
  });
  fakes.push(fake);
  // An accessor (Object.assign would copy its value once): setting it changes what the fake answers.
  return Object.defineProperty(fake, "ok", {
    get: () => state.ok,
    set: (value: boolean) => {
      state.ok = value;
    },
  }) as FakeApi & { ok: boolean };
}

function setUp(agent: string[], telegramUrl: string): TempHome {
  const home = tempHome();
  homes.push(home);
  home.write(
    "config.yaml",
    stringify({
      agent: { provider: "command", command: agent },
      platforms: {
        webhook: { enabled: true, host: "127.0.0.1", port: 0, routes: { hook: { secret: "s3cret-value" } } },
        telegram: { enabled: true, token: "1:abc", base_url: telegramUrl },
      },
    }),
    0o600,
  );
  home.write(
    "cron/jobs.json",
    JSON.stringify({
      revision: 1,
      jobs: {
        a1b2c3d4: {
          id: "a1b2c3d4",
          name: "nightly",
          schedule: "every 1d",
          prompt: "the nightly report",
          deliver: "telegram",
          deliver_extra: { chat_id: "5" },
          state: "enabled",
          // Due at the first check.
          next_run: "2026-01-01T00:00:00.000Z",
          created_at: "2026-01-01T00:00:00.000Z",
        },
      },
    }),
    0o600,
  );
  return home;
}

async function start(home: TempHome): Promise<Foreground> {
  const gateway = await runForeground(home);
  gateways.push(gateway);
  return gateway;
}

/**
 * The start after a kill, in this worker: it logs to gateway.log the text lines `svc gateway run` prints, and
 * `output()` is what it logged there (the killed gateway's lines before it left out).
 */
async function restart(home: TempHome): Promise<{ output(): string }> {
  const file = join(home.dir, "logs", "gateway.log");
  const from = existsSync(file) ? statSync(file).size : 0;
  const gateway = await startGateway({
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    logger: createLogger({ file, stdout: false }),
    drainTimeoutMs: 300,
  });
  restarted.push(gateway);
  return { output: () => readFileSync(file).subarray(from).toString("utf8") };
}

function job(home: TempHome): { next_run: string; last_run?: Record<string, unknown> } {
  const store = JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")) as {
    jobs: Record<string, { next_run: string; last_run?: Record<string, unknown> }>;
  };
  const found = store.jobs.a1b2c3d4;
  if (found === undefined) throw new Error("job a1b2c3d4 is gone from the store");
  return found;
}

const sendMessages = (fake: FakeApi) => fake.requests.filter((r) => r.path.endsWith("/sendMessage")).length;

describe("a gateway SIGKILLed during a scheduled cron run", { timeout: 60_000 }, () => {
  it("while its delivery is being retried: the next start records the run interrupted, not failed, and catches its occurrence up once", async () => {
    const telegram = await failingTelegram();
    const home = setUp(["sh", "-c", "echo the report"], telegram.url);
    const first = await start(home);
    // The agent answered; its delivery failed once and waits for its retry.
    await vi.waitFor(() => expect(sendMessages(telegram)).toBeGreaterThanOrEqual(1), { timeout: 20_000 });
    const nextRun = job(home).next_run;
    expect(job(home).last_run).toBeUndefined();
    first.child.kill("SIGKILL");
    await first.exited;
    telegram.ok = true;
    const tried = sendMessages(telegram);
    const second = await restart(home);
    await vi.waitFor(() => expect(second.output()).toContain("did not finish"), { timeout: 10_000 });
    expect(second.output()).toMatch(
      /WARN \[cron\] nightly: its scheduled run \(started \S+\) did not finish — the gateway running it was killed; recorded in last_run as interrupted, and it runs again now, as a missed run does/,
    );
    expect(second.output()).not.toContain("run failed");
    // The catch-up ran and delivered; the schedule goes on from now.
    await vi.waitFor(() => expect(job(home).last_run).toMatchObject({ status: "ok", trigger: "schedule" }), {
      timeout: 20_000,
    });
    expect(sendMessages(telegram)).toBe(tried + 1);
    expect(Date.parse(job(home).next_run)).toBeGreaterThanOrEqual(Date.parse(nextRun));
  });

  it("while its agent runs: the agent is stopped and the run recorded interrupted and caught up; a catch-up cut off as well is recorded as an error and not run a third time", async () => {
    const telegram = await failingTelegram();
    telegram.ok = true;
    // An agent that never ends on its own (it gives up once the gateway that started it is gone).
    const home = setUp(
      ["sh", "-c", 'touch "$0/started"; while kill -0 $PPID 2>/dev/null; do sleep 0.05; done', "HOME_DIR"],
      telegram.url,
    );
    const config = readFileSync(join(home.dir, "config.yaml"), "utf8").replace("HOME_DIR", home.dir);
    home.write("config.yaml", config, 0o600);
    const started = join(home.dir, "started");
    const first = await start(home);
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 20_000 });
    const nextRun = job(home).next_run;
    first.child.kill("SIGKILL");
    await first.exited;
    rmSync(started);
    // The next start catches the occurrence up: its agent runs again (and is killed again here).
    const second = await start(home);
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 20_000 });
    expect(second.stdout()).toContain("recorded in last_run as interrupted, and it runs again now");
    expect(job(home).last_run).toMatchObject({ status: "interrupted", trigger: "schedule" });
    expect(job(home).last_run).not.toHaveProperty("error");
    second.child.kill("SIGKILL");
    await second.exited;
    rmSync(started);
    // The catch-up cut off too: not run a third time (a run that kills its gateway must not do so at every start).
    const third = await restart(home);
    await vi.waitFor(() => expect(third.output()).toContain("did not finish"), { timeout: 10_000 });
    expect(third.output()).toContain(
      "recorded in last_run as an error and not run again (the job runs at its next scheduled time)",
    );
    expect(job(home).last_run).toMatchObject({
      status: "error",
      trigger: "schedule",
      error: expect.stringMatching(
        /^cut off: the gateway running it was killed \(the run started at .*\); it was the catch-up of a run interrupted before$/,
      ),
    });
    expect(Date.parse(job(home).next_run)).toBeGreaterThan(Date.parse(nextRun));
    expect(existsSync(started)).toBe(false);
    expect(sendMessages(telegram)).toBe(0);
  });
});
