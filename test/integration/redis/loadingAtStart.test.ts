import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startGateway } from "../../../src/gateway/index.js";
import { createLogger, silentLogger } from "../../../src/io/log.js";
import { createRedisHealth } from "../../../src/io/state/redis/connection.js";
import { redisKeys } from "../../../src/io/state/redis/keys.js";
import { createSharedQueue } from "../../../src/io/state/redis/sharedQueue.js";
import { CLI_MAIN, CLI_NODE_ARGS } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type LoadingRedis, startLoadingRedis } from "../../helpers/loadingRedis.js";
import { clusterConfig, clusterSuite, sharedAppendAgent } from "../../helpers/redisCluster.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";

/**
 * A gateway (and a CLI command) started against a Redis still loading its data after a restart: it says
 * that it waits for the load, a stop signal ends the wait at once, `svc gateway start` names the load when
 * it gives up, and a stop that came during the start leaves the queued runs in Redis for the others.
 */

const SECRET = "loading-secret";
const suite = clusterSuite("svc-redis-loading-", SECRET);
const children: ChildProcess[] = [];
let proxy: LoadingRedis | undefined;
let home: TempHome | undefined;
const homes: TempHome[] = [];
afterEach(async () => {
  for (const made of homes.splice(0)) made.cleanup();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await proxy?.close();
  proxy = undefined;
  home?.cleanup();
  home = undefined;
});

/** A home whose config.yaml names the Redis at `url`. */
function homeOn(url: string): TempHome {
  const made = tempHome();
  made.write(
    "config.yaml",
    stringify(
      clusterConfig(
        url,
        `p${randomUUID()}`,
        { hook: { secret: SECRET, prompt: "x" } },
        sharedAppendAgent("/dev/null"),
      ),
    ),
  );
  return made;
}

/**
 * `svc <args>` on `dir`, its output gathered; `until` resolves once the output matches. With `clock`, its
 * monotonic clock (and that of the gateway a start spawns, which inherits the preload) is that one.
 */
function svc(dir: string, args: readonly string[], clock?: SteppedClock) {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, ...(clock?.nodeArgs ?? []), CLI_MAIN, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir, ...clock?.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  const seen: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const gather = (chunk: Buffer) => {
    out += chunk.toString();
    for (const wait of seen.filter((w) => w.pattern.test(out))) wait.resolve();
  };
  child.stdout?.on("data", gather);
  child.stderr?.on("data", gather);
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return {
    child,
    exited,
    output: () => out,
    until: (pattern: RegExp) =>
      pattern.test(out) ? Promise.resolve() : new Promise<void>((resolve) => seen.push({ pattern, resolve })),
  };
}

const LOADING =
  /Redis is loading its data after a restart: it answers once loaded \(redis:\/\/127\.0\.0\.1:\d+\/0\); svc waits for it — 42% loaded, about 1 s left/;

/**
 * `svc gateway start --timeout 10` on `dir`, its clock stepped past those 10 s once the gateway it started says
 * it waits for Redis's load (in logs/gateway.out), rather than waiting them out: the start then gives up.
 */
async function startGivenUp(dir: string) {
  const clock = steppedClock();
  const start = svc(dir, ["gateway", "start", "--timeout", "10"], clock);
  const out = join(dir, "logs", "gateway.out");
  await vi.waitFor(() => expect(existsSync(out) ? readFileSync(out, "utf8") : "").toMatch(LOADING), {
    timeout: 30_000,
    interval: 50,
  });
  clock.step(10_000);
  return start;
}

describe("a gateway started against a Redis still loading its data", { timeout: 60_000 }, () => {
  it("svc gateway run says it waits for the load, and a SIGTERM meanwhile ends the start at once, as a stop does (exit 0)", async () => {
    proxy = await startLoadingRedis(suite.redis.port);
    home = homeOn(proxy.url);
    const run = svc(home.dir, ["gateway", "run", "--port", "0"]);
    await run.until(LOADING);
    run.child.kill("SIGTERM");
    // Ended while Redis still loads (the proxy is never told the load is over).
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(
      /SIGTERM received during startup \(stopped while waiting for Redis at redis:\/\/127\.0\.0\.1:\d+\/0\), stopping/,
    );
    expect(run.output()).toContain("stopped (exit 0)");
    expect(run.output()).not.toContain("Listening on");
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });

  it("svc gateway start that gives up names the load it was waiting for, and leaves no gateway behind", async () => {
    proxy = await startLoadingRedis(suite.redis.port);
    home = homeOn(proxy.url);
    // Given up once the gateway waits for Redis: what is asserted is what it says then.
    const start = await startGivenUp(home.dir);
    expect(await start.exited).toBe(1);
    expect(start.output()).toMatch(
      /did not answer \/health within 10s: it was waiting for Redis to load its data \(Redis is loading its data after a restart/,
    );
    expect(start.output()).toMatch(/so it was stopped — start it again once Redis has loaded/);
  });

  it("svc gateway start beside a state/LOCK of another PID namespace, which a Redis gateway never waits for, still names the load, not the lock", async () => {
    proxy = await startLoadingRedis(suite.redis.port);
    home = homeOn(proxy.url);
    // Left from the local backend by a gateway killed in a container: only a local gateway waits for it.
    home.write("state/LOCK", "99999 12345 their-token pid:[4026599999]\n");
    const start = await startGivenUp(home.dir);
    expect(await start.exited).toBe(1);
    expect(start.output()).toMatch(
      /did not answer \/health within 10s: it was waiting for Redis to load its data/,
    );
    expect(start.output()).not.toContain("LOCK");
  });

  it("a CLI command that reads Redis says it waits for the load, then does its work once Redis has loaded", async () => {
    proxy = await startLoadingRedis(suite.redis.port);
    home = homeOn(proxy.url);
    const list = svc(home.dir, ["webhook", "list"]);
    await list.until(LOADING);
    expect(list.output()).toMatch(/Note: Redis is loading its data/);
    proxy.loaded();
    expect(await list.exited).toBe(0);
  });
});

describe("a stop signal that came while the gateway started (Redis up)", { timeout: 60_000 }, () => {
  it("leaves a waiting run waiting in Redis, untaken, for the other instances", async () => {
    const prefix = `p${randomUUID()}`;
    const ranFile = join(suite.dir, `ran-${randomUUID()}`);
    const producer = createSharedQueue<Record<string, unknown>>({
      url: suite.redis.url,
      name: "runs",
      keys: redisKeys(prefix),
      health: createRedisHealth("test", silentLogger()),
      logger: silentLogger(),
      concurrency: 1,
      process: () => Promise.resolve(),
    });
    const redis = new Redis(suite.redis.url);
    try {
      await producer.enqueue("hook:d1", {
        profile: "default",
        routeName: "hook",
        deliveryId: "d1",
        prompt: "x",
        extra: {},
        receivedAt: Date.now(),
      });
      // The stop signal comes once Redis is connected, as the start logs where it listens.
      const stopping = new AbortController();
      const logs = tempHome();
      homes.push(logs);
      const logger = createLogger({ file: join(logs.dir, "gateway.log"), stdout: false });
      const stopAtListening = new Proxy(logger, {
        get(target, name) {
          if (name !== "info") return Reflect.get(target, name);
          return (...args: unknown[]) => {
            if (args.some((arg) => typeof arg === "string" && arg.includes("Listening on"))) stopping.abort();
            return (target.info as (...a: unknown[]) => void)(...args);
          };
        },
      });
      const nodeHome = tempHome();
      homes.push(nodeHome);
      nodeHome.write(
        "config.yaml",
        stringify(
          clusterConfig(
            suite.redis.url,
            prefix,
            { hook: { secret: SECRET, prompt: "x" } },
            sharedAppendAgent(ranFile),
          ),
        ),
      );
      const node = await startGateway({
        home: nodeHome.dir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: nodeHome.dir, SVC_HOME: nodeHome.dir },
        port: 0,
        logger: stopAtListening,
        drainTimeoutMs: 2000,
        stopping: stopping.signal,
      });
      expect(stopping.signal.aborted).toBe(true);
      await node.stop();
      expect(await redis.llen(`${prefix}:bull:runs:active`)).toBe(0);
      expect(await redis.llen(`${prefix}:bull:runs:wait`)).toBe(1);
      expect(existsSync(ranFile) ? readFileSync(ranFile, "utf8") : "").toBe("");
    } finally {
      redis.disconnect();
      await producer.close(0);
    }
  });
});
