import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, vi } from "vitest";
import { stringify } from "yaml";
import { sleepOn, systemClock } from "../../src/clock.js";
import { type Gateway, type GatewayOptions, startGateway } from "../../src/gateway/index.js";
import { createLogger } from "../../src/io/log.js";
import { type TempHome, tempHome } from "./home.js";
import { python3 } from "./python.js";

/** `${SVC_HOME}/<relative>`, for config values the gateway interpolates (the helper puts SVC_HOME in its env). */
export function inHome(relative: string): string {
  return `$\{SVC_HOME}/${relative}`;
}

/**
 * A clock tests move by hand: no sleeping. Its timers (`setTimeout` / `clearTimeout`, what the
 * coalescer takes as `timers` with `fakeTimers: true`) fire inside `advance`, in due order, each at its
 * own moment (`now()` reads the timer's due time while it runs). `step` sets the wall clock (`now`) as NTP
 * does, leaving the timers and `elapsed` (the clock durations are measured on) where they are.
 */
export interface FakeClock {
  now(): number;
  /** Milliseconds on a clock that is never set: moved by `advance` only. */
  elapsed(): number;
  advance(ms: number): void;
  /** Steps the wall clock by `ms` (back when negative); no timer fires and `elapsed` does not move. */
  step(ms: number): void;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  /** Timers scheduled and not yet fired or cleared. */
  pendingTimers(): number;
}

export function fakeClock(start = Date.parse("2026-11-22T12:00:00Z")): FakeClock {
  let t = start;
  /** What `step` moved the wall clock by. */
  let stepped = 0;
  let seq = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const nextDue = (limit: number) => {
    let found: [number, { due: number; fn: () => void }] | undefined;
    for (const entry of timers) {
      if (entry[1].due > limit) continue;
      if (found === undefined || entry[1].due < found[1].due) found = entry;
    }
    return found;
  };
  return {
    now: () => t + stepped,
    elapsed: () => t,
    step(ms) {
      stepped += ms;
    },
    advance(ms) {
      const target = t + ms;
      for (let due = nextDue(target); due !== undefined; due = nextDue(target)) {
        timers.delete(due[0]);
        t = Math.max(t, due[1].due);
        due[1].fn();
      }
      t = target;
    },
    setTimeout(fn, ms) {
      seq += 1;
      timers.set(seq, { due: t + Math.max(0, ms), fn });
      return seq;
    },
    clearTimeout(id) {
      timers.delete(id as number);
    },
    pendingTimers: () => timers.size,
  };
}

export interface TestGatewayOptions {
  /** The config.yaml document (an object, written as YAML) or raw YAML text. */
  readonly config: Record<string, unknown> | string;
  /** Extra files under SVC_HOME (relative path → text; scripts get mode 0755, `.env` and tokens 0600). */
  readonly files?: Record<string, string>;
  /** The environment the gateway sees (nothing from this process except PATH and HOME). */
  readonly env?: Record<string, string>;
  readonly clock?: FakeClock;
  /** Coalescing groups run on `clock`'s timers (fire on `clock.advance`), not on real ones. */
  readonly fakeTimers?: boolean;
  /** The gateway's sleeps (delivery retries, the stop's drain bound) end on `clock.advance`, not in real time. */
  readonly fakeSleeps?: boolean;
  /** `uws-threads`: uWS on two ingress threads (`platforms.webhook.workers: 2`). */
  readonly http?: HttpServerKind;
  readonly eventModes?: GatewayOptions["eventModes"];
  readonly drainTimeoutMs?: number;
  readonly runQueueCap?: number;
  readonly retryingDeliveryCap?: number;
  readonly coalesceGroupCap?: number;
  readonly seenIdsCap?: number;
  readonly inspect?: GatewayOptions["inspect"];
  /** Overrides `state.backend` (e.g. `memoryStateStore()`). */
  readonly stateStore?: GatewayOptions["stateStore"];
  /** The log's level (`SVC_LOG_LEVEL`); debug by default, so tests see every line. */
  readonly logLevel?: string;
}

export interface TestGateway {
  readonly home: TempHome;
  readonly gateway: Gateway;
  readonly clock: FakeClock;
  readonly base: string;
  url(path: string): string;
  /** Parsed lines of $SVC_HOME/logs/gateway.log (written as JSON lines for the tests). */
  logs(): Array<Record<string, unknown> & { msg: string; level: number }>;
  stop(): Promise<void>;
}

/**
 * Stops `gw` past its drain: the drain's bound is one of the gateway's sleeps, which end on `gw.clock`, so the
 * clock is moved (in 100 ms steps, far short of any retry's wait) until the stop is done.
 */
export async function stopPastDrain(gw: TestGateway): Promise<void> {
  let stopped = false;
  const stopping = gw.gateway.stop().then(() => {
    stopped = true;
  });
  await vi.waitFor(
    () => {
      if (!stopped) gw.clock.advance(100);
      if (!stopped) throw new Error("the gateway is still stopping");
    },
    { timeout: 15_000, interval: 10 },
  );
  await stopping;
}

/** A webhook config with sane test defaults: loopback, port 0 (the helper passes it), the given routes. */
export function webhookConfig(
  routes: Record<string, unknown>,
  webhook: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...rest,
    platforms: {
      ...((rest.platforms as object) ?? {}),
      webhook: { enabled: true, host: "127.0.0.1", ...webhook, routes },
    },
  };
}

/**
 * A gateway config with one open route, `note`, that sends `{text}` of each event straight to `deliver`
 * (`deliver_only`) with `deliverExtra`, and the platform's own settings: the shape the delivery targets'
 * tests post to.
 */
export function directNoteConfig(
  deliver: string,
  deliverExtra: Record<string, unknown>,
  platform: Record<string, unknown>,
  webhook: Record<string, unknown> = {},
): Record<string, unknown> {
  return webhookConfig(
    {
      note: {
        secret: "INSECURE_NO_AUTH",
        prompt: "{text}",
        deliver,
        deliver_only: true,
        deliver_extra: deliverExtra,
      },
    },
    webhook,
    { platforms: { [deliver]: { enabled: true, ...platform } } },
  );
}

/**
 * Starts the real gateway in-process on port 0 in an existing SVC_HOME (restart tests: the caller owns
 * the home and stops the gateway itself). Logs at DEBUG to the home's `logs/gateway.log`, as JSON lines.
 */
export function startGatewayInHome(
  home: TempHome,
  drainTimeoutMs = 300,
  /** The wall clock, when not the machine's (a home made at a known time, replayed later). */
  now?: () => number,
  /** The timers, when not the machine's (a fake clock the test moves). */
  timers?: GatewayOptions["timers"],
  /** The gateway's sleeps (delivery retries, the stop's drain bound) end on this clock's `advance`. */
  sleeps?: FakeClock,
): Promise<Gateway> {
  return startGateway({
    ...(now === undefined ? {} : { now }),
    ...(timers === undefined ? {} : { timers }),
    ...(sleeps === undefined
      ? {}
      : { clock: { ...systemClock, now: now ?? systemClock.now, sleep: sleepOn(sleeps) } }),
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    logger: createLogger({
      file: join(home.dir, "logs", "gateway.log"),
      fileFormat: "json",
      stdout: false,
      level: "debug",
    }),
    drainTimeoutMs,
  });
}

/** The HTTP servers the adapter tests run on: uWS, node:http, and uWS on ingress threads. */
export const HTTP_SERVERS = ["uws", "node", "uws-threads"] as const;
export type HttpServerKind = (typeof HTTP_SERVERS)[number];

/** The config with `platforms.webhook.workers: 2` when the server is `uws-threads`. */
function withServer(
  config: Record<string, unknown>,
  http: HttpServerKind | undefined,
): Record<string, unknown> {
  if (http !== "uws-threads") return config;
  const platforms = (config.platforms ?? {}) as Record<string, Record<string, unknown>>;
  return { ...config, platforms: { ...platforms, webhook: { ...platforms.webhook, workers: 2 } } };
}

/** Writes config.yaml into a fresh SVC_HOME and starts the real gateway in-process on port 0. */
export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const home = tempHome();
  // Mode 0600, as svc writes it: routes' secrets are written out in it (a readable one is warned about).
  home.write(
    "config.yaml",
    typeof options.config === "string" ? options.config : stringify(withServer(options.config, options.http)),
    0o600,
  );
  for (const [path, text] of Object.entries(options.files ?? {})) {
    // Secret files as svc writes them (0600): a wider mode is warned about at start.
    const secret = path.endsWith(".env") || path.includes("mcp-tokens/");
    home.write(
      path,
      text,
      path.startsWith("scripts/") || path.endsWith(".sh") ? 0o755 : secret ? 0o600 : 0o644,
    );
  }
  const clock = options.clock ?? fakeClock(Date.now());
  const logFile = join(home.dir, "logs", "gateway.log");
  const logger = createLogger({
    file: logFile,
    fileFormat: "json",
    stdout: false,
    level: options.logLevel ?? "debug",
  });
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      home: home.dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir, ...options.env },
      port: 0,
      now: clock.now,
      elapsed: clock.elapsed,
      ...(options.fakeTimers === true ? { timers: clock } : {}),
      ...(options.fakeSleeps === true
        ? { clock: { ...systemClock, now: clock.now, sleep: sleepOn(clock) } }
        : {}),
      logger,
      ...(options.http === undefined ? {} : { http: options.http === "node" ? "node" : "uws" }),
      ...(options.eventModes === undefined ? {} : { eventModes: options.eventModes }),
      drainTimeoutMs: options.drainTimeoutMs ?? 5000,
      ...(options.runQueueCap === undefined ? {} : { runQueueCap: options.runQueueCap }),
      ...(options.retryingDeliveryCap === undefined
        ? {}
        : { retryingDeliveryCap: options.retryingDeliveryCap }),
      ...(options.coalesceGroupCap === undefined ? {} : { coalesceGroupCap: options.coalesceGroupCap }),
      ...(options.seenIdsCap === undefined ? {} : { seenIdsCap: options.seenIdsCap }),
      ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
      ...(options.stateStore === undefined ? {} : { stateStore: options.stateStore }),
    });
  } catch (err) {
    home.cleanup();
    throw err;
  }
  const base = `http://127.0.0.1:${gateway.port}`;
  return {
    home,
    gateway,
    clock,
    base,
    url: (path) => base + path,
    logs() {
      if (!existsSync(logFile)) return [];
      return readFileSync(logFile, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string; level: number });
    },
    async stop() {
      await gateway.stop();
      home.cleanup();
    },
  };
}

/**
 * A test file's one running gateway: `start` starts it (any earlier one of the same test is stopped after
 * the test too), `live()` returns it or throws, and it is stopped after each test. `restart` starts another
 * in its home (a restart test, once the test stopped the first), stopped after the test before that home
 * is removed.
 */
export function gatewayPerTest(): {
  start(options: TestGatewayOptions): Promise<TestGateway>;
  restart(gw: TestGateway): Promise<Gateway>;
  live(): TestGateway;
} {
  const running: TestGateway[] = [];
  const restarted: Gateway[] = [];
  afterEach(async () => {
    for (const gateway of restarted.splice(0)) await gateway.stop();
    for (const gw of running.splice(0)) await gw.stop();
  });
  return {
    async start(options) {
      const gw = await startTestGateway(options);
      running.push(gw);
      return gw;
    },
    async restart(gw) {
      const gateway = await startGatewayInHome(gw.home);
      restarted.push(gateway);
      return gateway;
    },
    live() {
      const gw = running.at(-1);
      if (gw === undefined) throw new Error("no gateway running");
      return gw;
    },
  };
}

/**
 * A bash `command` agent (write it to `agent/recorder.sh`) that records what each run received under
 * `<home>/runs/<delivery id>.json` and replies with its first argument, else `reply to <id>`.
 */
export const RECORDER_AGENT = `#!/usr/bin/env bash
set -euo pipefail
dir="$(dirname "$0")/../runs"
mkdir -p "$dir"
"${python3()}" -S -c 'import json,os,sys; print(json.dumps({"prompt": sys.stdin.read(), "route": os.environ["SVC_ROUTE"], "event": os.environ["SVC_EVENT"], "delivery_id": os.environ["SVC_DELIVERY_ID"], "toolsets": os.environ.get("SVC_TOOLSETS"), "secret_in_env": "WEBHOOK_SECRET" in os.environ}))' > "$dir/.$SVC_DELIVERY_ID.tmp"
mv "$dir/.$SVC_DELIVERY_ID.tmp" "$dir/$SVC_DELIVERY_ID.json"
if [ "$#" -gt 0 ]; then printf '%s' "$1"; else printf 'reply to %s' "$SVC_DELIVERY_ID"; fi
`;

/**
 * A bash `command` agent (write it to `agent/gated.sh`) that holds its run until the test writes `release` in
 * the home (or the home is gone), whatever the machine's load, then replies `done`.
 */
export const GATED_AGENT = [
  'home="$(dirname "$0")/.."; cat >/dev/null',
  'while [ -d "$home/agent" ] && [ ! -e "$home/release" ]; do sleep 0.05; done',
  "printf done",
].join("\n");

export interface RecordedRun {
  prompt: string;
  route: string;
  event: string;
  delivery_id: string;
  /** SVC_TOOLSETS: the run's toolsets, comma-separated. */
  toolsets: string | null;
  secret_in_env: boolean;
}

export function readRun(home: TempHome, deliveryId: string): RecordedRun | undefined {
  const path = join(home.dir, "runs", `${deliveryId}.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as RecordedRun) : undefined;
}

/** Waits (polling, up to 10 s) until the recorder agent has recorded the run of `deliveryId`. */
export function waitForRun(gw: TestGateway, deliveryId: string): Promise<RecordedRun> {
  return vi.waitFor(
    () => {
      const run = readRun(gw.home, deliveryId);
      if (run === undefined) throw new Error(`run ${deliveryId} not recorded yet`);
      return run;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/**
 * What the log delivery wrote as the reply of `deliveryId`, parsed: a command agent that prints JSON
 * (`{ tools, result }` for the MCP-calling agents) is read back whole. Waits up to 15 s for the line.
 */
export async function loggedReply<T>(gw: TestGateway, deliveryId: string): Promise<T> {
  const line = await vi.waitFor(
    () => {
      const found = gw.logs().find((l) => l.delivery_id === deliveryId && l.msg.includes(" reply:"));
      if (found === undefined) throw new Error(`${deliveryId} not delivered yet`);
      return found.msg;
    },
    { timeout: 15_000, interval: 50 },
  );
  return JSON.parse(line.slice(line.indexOf("{"))) as T;
}

/** The `agent:` section that runs the recorder written to `agent/recorder.sh`; `args` become its reply. */
export function recorderAgent(...args: string[]): Record<string, unknown> {
  return { provider: "command", command: ["bash", inHome("agent/recorder.sh"), ...args] };
}
