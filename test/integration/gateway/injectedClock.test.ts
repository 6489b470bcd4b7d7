import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type Clock, sleepOn } from "../../../src/clock.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/**
 * `startGateway({ clock })`: one clock for every timing rule of the gateway. These tests drive delivery
 * retries and the stop's drain bound by moving a fake clock; with the real clock they would wait 30 s.
 */
interface ManualClock extends Clock {
  advance(ms: number): void;
  /** Delays of the timers scheduled and not yet fired or cleared. */
  pendingDelays(): number[];
}

function manualClock(start = Date.parse("2026-11-28T00:00:00Z")): ManualClock {
  let t = start;
  let seq = 0;
  const timers = new Map<number, { due: number; ms: number; fn: () => void }>();
  const timerApi = {
    setTimeout(fn: () => void, ms: number) {
      seq += 1;
      timers.set(seq, { due: t + Math.max(0, ms), ms, fn });
      return seq;
    },
    clearTimeout(id: unknown) {
      timers.delete(id as number);
    },
  };
  return {
    now: () => t,
    elapsed: () => t,
    ...timerApi,
    sleep: sleepOn(timerApi),
    advance(ms) {
      const target = t + ms;
      for (;;) {
        const due = [...timers].filter(([, e]) => e.due <= target).sort((a, b) => a[1].due - b[1].due)[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        t = due[1].due;
        due[1].fn();
      }
      t = target;
    },
    pendingDelays: () => [...timers.values()].map((e) => e.ms),
  };
}

let home: TempHome | undefined;
let gateway: Gateway | undefined;
let telegram: FakeApi | undefined;
afterEach(async () => {
  await gateway?.stop();
  await telegram?.close();
  home?.cleanup();
  gateway = home = telegram = undefined;
});

async function start(
  config: Record<string, unknown>,
  clock: Clock,
  drainTimeoutMs?: number,
  files: Record<string, string> = {},
) {
  home = tempHome();
  home.write("config.yaml", stringify(config));
  for (const [path, text] of Object.entries(files)) home.write(path, text, 0o755);
  gateway = await startGateway({
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    logger: silentLogger(),
    clock,
    ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
  });
  return gateway;
}

describe("the gateway's injected clock", () => {
  it("a delivery retry waits its Retry-After on the gateway's clock, not the wall clock", async () => {
    const clock = manualClock();
    telegram = await startFakeTelegram();
    let calls = 0;
    telegram.setHandler((request) => {
      if (!request.path.endsWith("/sendMessage"))
        return { json: { ok: true, result: { id: 1, is_bot: true } } };
      calls += 1;
      return calls === 1
        ? { status: 503, headers: { "retry-after": "30" }, text: "Service Unavailable" }
        : { json: { ok: true, result: { message_id: calls } } };
    });
    const gw = await start(
      webhookConfig(
        {
          ci: {
            secret: "INSECURE_NO_AUTH",
            prompt: "build {n}",
            deliver: "telegram",
            deliver_extra: { chat_id: "-1" },
          },
        },
        {},
        {
          agent: { provider: "echo" },
          platforms: { telegram: { enabled: true, token: "1:abc", base_url: telegram.url } },
        },
      ),
      clock,
    );
    const res = await postJson(`http://127.0.0.1:${gw.port}/webhooks/ci`, { n: 7 }, { "X-Request-ID": "c1" });
    expect(res.status).toBe(202);
    // The first attempt failed and the retry now waits 30 s on the fake clock.
    await vi.waitFor(() => expect(clock.pendingDelays()).toContain(30_000), {
      timeout: 10_000,
      interval: 20,
    });
    expect(calls).toBe(1);
    clock.advance(29_999);
    expect(calls).toBe(1);
    clock.advance(1);
    await vi.waitFor(() => expect(calls).toBe(2), { timeout: 10_000, interval: 20 });
    expect(sentTexts(telegram)).toEqual(["build 7", "build 7"]);
  });

  it("stop() waits for a running agent run until the drain timeout passes on the gateway's clock, then saves it", async () => {
    const clock = manualClock();
    const gw = await start(
      webhookConfig(
        { slow: { secret: "INSECURE_NO_AUTH", prompt: "p" } },
        {},
        {
          agent: { provider: "command", command: ["sleep", "600"] },
        },
      ),
      clock,
      60_000,
    );
    const res = await postJson(`http://127.0.0.1:${gw.port}/webhooks/slow`, {}, { "X-Request-ID": "d1" });
    expect(res.status).toBe(202);
    let stopped = false;
    const stopping = gw.stop().then(() => {
      stopped = true;
    });
    await vi.waitFor(() => expect(clock.pendingDelays()).toContain(60_000), {
      timeout: 10_000,
      interval: 20,
    });
    expect(stopped).toBe(false);
    clock.advance(60_000);
    await stopping;
    gateway = undefined;
    const file = join((home as TempHome).dir, "webhook-pending-runs.json");
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).toContain('"d1"');
  });

  it("requests still being answered when the stop began (a route script) take their time out of the drain, not add to it", async () => {
    const clock = manualClock();
    const gw = await start(
      webhookConfig(
        {
          slow: { secret: "INSECURE_NO_AUTH", prompt: "p" },
          scripted: { secret: "INSECURE_NO_AUTH", script: "hold.sh", prompt: "{title}" },
        },
        { script_timeout_seconds: 600 },
        { agent: { provider: "command", command: ["sleep", "600"] } },
      ),
      clock,
      60_000,
      {
        // Answers once the test creates `go` beside it.
        "scripts/hold.sh": `cat >/dev/null\nhere=$(dirname "$0")\ntouch "$here/started"\nwhile [ ! -e "$here/go" ]; do sleep 0.05; done\necho '{"title": "from the script"}'\n`,
      },
    );
    const scripts = join((home as TempHome).dir, "scripts");
    const res = await postJson(`http://127.0.0.1:${gw.port}/webhooks/slow`, {}, { "X-Request-ID": "d1" });
    expect(res.status).toBe(202);
    const scripted = postJson(`http://127.0.0.1:${gw.port}/webhooks/scripted`, {}, { "X-Request-ID": "s1" });
    await vi.waitFor(() => expect(existsSync(join(scripts, "started"))).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    let stopped = false;
    const stopping = gw.stop().then(() => {
      stopped = true;
    });
    // The stop's first checkpoint is written before it waits for the script's request.
    const file = join((home as TempHome).dir, "webhook-pending-runs.json");
    await vi.waitFor(() => expect(existsSync(file)).toBe(true), { timeout: 10_000, interval: 20 });
    // The whole drain passes while the script still holds its request.
    clock.advance(60_000);
    writeFileSync(join(scripts, "go"), "");
    expect((await scripted).status).toBe(202);
    // Nothing of the drain is left for the runs: the stop ends without the clock moving again.
    await vi.waitFor(() => expect(stopped).toBe(true), { timeout: 15_000, interval: 20 });
    await stopping;
    gateway = undefined;
    const saved = readFileSync(file, "utf8");
    expect(saved).toContain('"d1"');
    expect(saved).toContain('"s1"');
  });
});
