import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, afterEach, beforeAll } from "vitest";
import { stringify } from "yaml";
import { sleepOn, systemClock } from "../../src/clock.js";
import { type Gateway, startGateway } from "../../src/gateway/index.js";
import { createLogger } from "../../src/io/log.js";
import type { StallSettings } from "../../src/io/state/redis/sharedQueue.js";
import type { FakeClock } from "./gateway.js";
import { type TempHome, tempHome } from "./home.js";
import { postJson } from "./http.js";
import { startTestRedis, type TestRedis } from "./redis.js";

/**
 * A `command` agent for gateways that share work: each run appends its delivery id as one line to
 * `file` (one short O_APPEND write, shared by every instance), after `sleepSeconds` when given.
 */
/**
 * A command agent that appends `<delivery id>|<the prompt's first line>` to `file` for each run, at most two
 * at once: what a coalesced run's count note and latest event are read from.
 */
export function promptAppendAgent(file: string): Record<string, unknown> {
  return {
    provider: "command",
    command: ["sh", "-c", `printf "%s|%s\\n" "$SVC_DELIVERY_ID" "$(head -n1)" >> "$0"`, file],
    max_concurrent_runs: 2,
  };
}

/** A route that groups events by their `pr` field for 1 s (at most 30 s), its prompt `pr <pr>`. */
export function prCoalescingRoute(secret: string): Record<string, unknown> {
  return { secret, prompt: "pr {pr}", coalesce: { key: "pr", window_seconds: 1, max_wait_seconds: 30 } };
}

export function sharedAppendAgent(
  file: string,
  maxConcurrentRuns = 8,
  sleepSeconds = 0,
): Record<string, unknown> {
  const sleep = sleepSeconds > 0 ? `sleep ${sleepSeconds}; ` : "";
  return {
    provider: "command",
    command: ["sh", "-c", `${sleep}printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0"`, file],
    max_concurrent_runs: maxConcurrentRuns,
  };
}

/**
 * A command agent that appends each run's delivery id to `file` and replies with its prompt, one run at a
 * time: what the hand-on tests deliver and count.
 */
export function appendEchoAgent(file: string): Record<string, unknown> {
  return {
    provider: "command",
    command: ["sh", "-c", 'echo "$SVC_DELIVERY_ID" >> "$0"; cat', file],
    max_concurrent_runs: 1,
  };
}

/** `config` (a `clusterConfig`) with the delivery platform `name` set up beside the webhook adapter. */
export function withPlatform(
  config: Record<string, unknown>,
  name: string,
  settings: Record<string, unknown>,
): Record<string, unknown> {
  return { ...config, platforms: { ...(config.platforms as Record<string, unknown>), [name]: settings } };
}

/** How many times each delivery id was appended to `file`. */
export function appendedIds(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const id of readFileSync(file, "utf8").split("\n"))
    if (id !== "") counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** The config.yaml of one instance of a cluster on `redisUrl` (its keys under `prefix`). */
export function clusterConfig(
  redisUrl: string,
  prefix: string,
  routes: Record<string, unknown>,
  agent: Record<string, unknown>,
  webhook: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    state: { backend: "redis", redis_url: redisUrl, redis_key_prefix: prefix },
    agent,
    platforms: { webhook: { enabled: true, host: "127.0.0.1", rate_limit: 100_000, ...webhook, routes } },
  };
}

export interface ClusterNode {
  readonly home: TempHome;
  readonly gateway: Gateway;
  url(path: string): string;
  logs(): Array<Record<string, unknown> & { msg: string }>;
  stop(): Promise<void>;
}

/** One in-process gateway of a cluster, in a fresh SVC_HOME, on port 0. */
export async function startNode(
  config: Record<string, unknown>,
  options: {
    stall?: StallSettings;
    drainTimeoutMs?: number;
    files?: Record<string, string>;
    /** The gateway's clock that is never set (rate-limit windows, durations): tests advance their own. */
    elapsed?: () => number;
    /** How often the gateway reads the subscriptions' revision in Redis (1 s by default). */
    subscriptionPollMs?: number;
    /** A clock the gateway's sleeps (delivery retries) wait on: tests advance it. */
    sleeps?: FakeClock;
    /** Runs whose delivery may wait to retry outside the worker's slots at once (default 1000). */
    retryingDeliveryCap?: number;
  } = {},
): Promise<ClusterNode> {
  const home = tempHome();
  home.write("config.yaml", stringify(config));
  for (const [path, text] of Object.entries(options.files ?? {})) home.write(path, text);
  const logFile = join(home.dir, "logs", "gateway.log");
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      home: home.dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
      port: 0,
      logger: createLogger({ file: logFile, fileFormat: "json", stdout: false, level: "debug" }),
      drainTimeoutMs: options.drainTimeoutMs ?? 2000,
      ...(options.stall === undefined ? {} : { redisStall: options.stall }),
      ...(options.elapsed === undefined ? {} : { elapsed: options.elapsed }),
      ...(options.retryingDeliveryCap === undefined
        ? {}
        : { retryingDeliveryCap: options.retryingDeliveryCap }),
      ...(options.sleeps === undefined ? {} : { clock: { ...systemClock, sleep: sleepOn(options.sleeps) } }),
      ...(options.subscriptionPollMs === undefined ? {} : { subscriptionPollMs: options.subscriptionPollMs }),
    });
  } catch (err) {
    home.cleanup();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    home,
    gateway,
    url: (path) => `http://127.0.0.1:${gateway.port}${path}`,
    logs() {
      if (!existsSync(logFile)) return [];
      return readFileSync(logFile, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });
    },
    stop() {
      const stopping = stopped ?? gateway.stop().finally(() => home.cleanup());
      stopped = stopping;
      return stopping;
    },
  };
}

/** POSTs a GitHub `push` whose body is `{"id": id}`, signed with `secret`, to `route` on one of the gateways. */
async function deliverPush(node: ClusterNode, route: string, id: string, secret: string) {
  const body = JSON.stringify({ id });
  return postJson(node.url(`/webhooks/${route}`), body, {
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(secret, body),
  });
}

/** A host's SVC_HOME whose config names the shared Redis (the CLI runs there, no gateway); added to `homes`. */
function clusterCliHome(config: Record<string, unknown>, homes: TempHome[]): TempHome {
  const home = tempHome();
  homes.push(home);
  home.write("config.yaml", stringify(config));
  return home;
}

/** What a file of tests of gateways sharing one Redis works with (`clusterSuite`). */
export interface ClusterSuite {
  /** The file's private redis-server (set once its `beforeAll` ran). */
  readonly redis: TestRedis;
  /** A temporary directory for the file's run logs. */
  readonly dir: string;
  /** Gateways started by a test: stopped after it. */
  readonly nodes: ClusterNode[];
  /** CLI homes made by a test (`cliHome`): removed after it. */
  readonly homes: TempHome[];
  cliHome(config: Record<string, unknown>): TempHome;
  deliver(node: ClusterNode, route: string, id: string): ReturnType<typeof deliverPush>;
}

/**
 * Registers the hooks such a file needs: a private Redis and a temporary directory for the whole file,
 * the gateways and CLI homes a test made stopped and removed after it. Pushes are signed with `secret`.
 */
export function clusterSuite(dirPrefix: string, secret: string): ClusterSuite {
  let redis: TestRedis | undefined;
  let dir: string | undefined;
  const nodes: ClusterNode[] = [];
  const homes: TempHome[] = [];
  beforeAll(async () => {
    redis = await startTestRedis();
    dir = mkdtempSync(join(tmpdir(), dirPrefix));
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((node) => node.stop()));
    for (const home of homes.splice(0)) home.cleanup();
  });
  afterAll(async () => {
    await redis?.cleanup();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`clusterSuite: ${name} is set in beforeAll`);
    return value;
  };
  return {
    get redis() {
      return ready(redis, "redis");
    },
    get dir() {
      return ready(dir, "dir");
    },
    nodes,
    homes,
    cliHome: (config) => clusterCliHome(config, homes),
    deliver: (node, route, id) => deliverPush(node, route, id, secret),
  };
}
