import { resolve } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { checkConfig } from "../../../src/cli/config/check.js";
import { DEFAULT_KEY_PREFIX, redisKeys } from "../../../src/io/state/redis/keys.js";
import { createRedisSubscriptionStore } from "../../../src/io/state/redis/subscriptions.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { startTestRedis } from "../../helpers/redis.js";

/** A config.yaml that changes the defaults without a word: the start says so, loudly (WARN). */

const EMPTY_SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/empty-server.mjs"),
);
const WARN = 40;
const INFO = 30;

let gw: TestGateway | undefined;

/** What `gateway` logged at WARN. */
const warnedBy = (gateway: TestGateway): string[] =>
  gateway
    .logs()
    .filter((line) => line.level === WARN)
    .map((line) => line.msg);
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("startup warnings about the log level", () => {
  it("a log level above INFO names the routes whose replies the log target would write nowhere", async () => {
    const routes = {
      replies: { secret: "route-secret-LLL111" },
      fired: { secret: "route-secret-LLL222", cron_job: "nightly" },
    };
    gw = await startTestGateway({ config: webhookConfig(routes), logLevel: "warn" });
    const warnings = warnedBy(gw);
    expect(warnings).toContainEqual(
      `[webhook] 1 route(s) in ${gw.home.dir}/config.yaml (replies) deliver to log, which writes each reply at INFO, but the log level is warn: their replies are written nowhere — set SVC_LOG_LEVEL=info, or give them another deliver target`,
    );
    await gw.stop();
    gw = await startTestGateway({ config: webhookConfig(routes), logLevel: "info" });
    expect(gw.logs().some((line) => line.msg.includes("their replies are written nowhere"))).toBe(false);
  });
});

describe("startup warnings about the webhook adapter", () => {
  it("subscriptions exist but a config.yaml holding only mcp_servers turned the adapter off: WARN with the count and how to enable", async () => {
    gw = await startTestGateway({
      config: { mcp_servers: { empty: { command: process.execPath, args: [EMPTY_SERVER] } } },
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          one: { secret: "s1" },
          two: { secret: "s2" },
          off: { secret: "s3", enabled: false },
        }),
      },
    });
    const config = `${gw.home.dir}/config.yaml`;
    const setting = `${config}: platforms.webhook.enabled is not set, and false is its default in a config.yaml`;
    const warnings = warnedBy(gw);
    expect(warnings).toContainEqual(
      expect.stringContaining(
        `[webhook] 2 enabled subscription(s) in ${gw.home.dir}/webhook_subscriptions.json (one, two) are not served: the webhook adapter is off (${setting}).`,
      ),
    );
    // The log and the CLI say the same thing about where the off came from.
    expect(warnings).toContainEqual(expect.stringContaining(`[webhook] Adapter disabled (${setting})`));
    // svc config check says it before any start, and counts none of them as served.
    const report = await checkConfig({ home: gw.home.dir, env: {} });
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContainEqual(
      expect.stringContaining(
        `2 enabled subscription(s) in ${gw.home.dir}/webhook_subscriptions.json (one, two) are not served: the webhook adapter is off (${setting}).`,
      ),
    );
    expect(report.summary).toContain("webhook off, 0 routes, 3 subscriptions (0 served),");
  });

  it("config.yaml routes with the adapter off: WARN naming them, at start and by svc config check alike", async () => {
    gw = await startTestGateway({
      config: {
        platforms: { webhook: { enabled: false, routes: { deploys: { secret: "route-secret-MMM222" } } } },
        mcp_servers: { empty: { command: process.execPath, args: [EMPTY_SERVER] } },
      },
    });
    const config = `${gw.home.dir}/config.yaml`;
    const said = `1 route(s) in ${config} (deploys) are not served: the webhook adapter is off (${config}: platforms.webhook.enabled is false).`;
    const warnings = warnedBy(gw);
    expect(warnings).toContainEqual(expect.stringContaining(`[webhook] ${said}`));
    const report = await checkConfig({ home: gw.home.dir, env: {} });
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContainEqual(expect.stringContaining(said));
  });

  it("a reload that adds routes while the adapter is off names them as not served, and its Reloaded line lists no route as answering", async () => {
    const mcp = { empty: { command: process.execPath, args: [EMPTY_SERVER] } };
    gw = await startTestGateway({
      config: { platforms: { webhook: { enabled: false } }, mcp_servers: mcp },
    });
    const config = `${gw.home.dir}/config.yaml`;
    gw.home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false, routes: { added: { secret: "route-secret-NNN333" } } } },
        mcp_servers: mcp,
      }),
    );
    gw.gateway.reload();
    const running = gw;
    const reloaded = () => running.logs().filter((line) => line.msg.startsWith("[webhook] Reloaded"));
    await expect.poll(() => reloaded().length, { timeout: 10_000 }).toBe(1);
    expect(reloaded()[0]?.msg).toBe(
      `[webhook] Reloaded ${config} — no route answers: the webhook adapter is off (no listener)`,
    );
    expect(warnedBy(gw)).toContainEqual(
      expect.stringContaining(
        `[webhook] 1 route(s) in ${config} (added) are not served: the webhook adapter is off (${config}: platforms.webhook.enabled is false).`,
      ),
    );
  });

  it("with state.backend: redis, a gateway whose adapter is off says at INFO that it serves none of the subscriptions kept in Redis, which the instances with the adapter on serve", async () => {
    const redis = await startTestRedis();
    const client = new Redis(redis.url);
    try {
      await createRedisSubscriptionStore(client, redisKeys(DEFAULT_KEY_PREFIX), "test").update((records) => {
        records.shared = { secret: "s1", enabled: true };
        records.paused = { secret: "s2", enabled: false };
      });
      gw = await startTestGateway({
        config: {
          mcp_servers: { empty: { command: process.execPath, args: [EMPTY_SERVER] } },
          state: { backend: "redis", redis_url: redis.url },
        },
      });
      const said = `[webhook] 1 enabled subscription(s) in ${redis.url} (shared) are not served by this gateway: its webhook adapter is off`;
      expect(warnedBy(gw).filter((line) => line.includes("enabled subscription(s)"))).toEqual([]);
      const info = gw.logs().filter((line) => line.level === INFO && line.msg.startsWith(said));
      expect(info).toHaveLength(1);
      expect(info[0]?.msg).toContain("the gateways sharing that Redis whose adapter is on serve them");
      // svc config check of that home says the same.
      const checked = await checkConfig({ home: gw.home.dir, env: {} });
      expect(checked.warnings).toContainEqual(
        expect.stringMatching(
          /^1 enabled subscription\(s\) in .*Redis.* \(shared\) are not served by this gateway: its webhook adapter is off .*; the gateways sharing that Redis whose adapter is on serve them/,
        ),
      );
    } finally {
      // Stopped before its Redis goes away.
      await gw?.stop();
      gw = undefined;
      client.disconnect();
      await redis.cleanup();
    }
  });

  it("with state.backend: redis, a worker instance's own config.yaml routes are said at INFO to be served by the gateways sharing that Redis, whose runs it runs by them, not at WARN as routes nothing serves", async () => {
    const redis = await startTestRedis();
    try {
      gw = await startTestGateway({
        config: {
          state: { backend: "redis", redis_url: redis.url },
          platforms: { webhook: { enabled: false, routes: { deploys: { secret: "route-secret-QQQ444" } } } },
        },
      });
      const config = `${gw.home.dir}/config.yaml`;
      const said = `1 route(s) in ${config} (deploys) are not served by this gateway: its webhook adapter is off (${config}: platforms.webhook.enabled is false); the gateways sharing that Redis whose adapter is on accept their events, and this one runs the runs it takes from the shared queue with these routes' settings.`;
      expect(warnedBy(gw).filter((line) => line.includes("route(s) in"))).toEqual([]);
      const info = gw
        .logs()
        .filter((line) => line.level === INFO && line.msg.startsWith(`[webhook] ${said}`));
      expect(info).toHaveLength(1);
      const checked = await checkConfig({ home: gw.home.dir, env: {} });
      expect(checked.warnings).toContainEqual(expect.stringContaining(said));
    } finally {
      await gw?.stop();
      gw = undefined;
      await redis.cleanup();
    }
  });

  it("listening on every interface (host 0.0.0.0) is a WARN that names the fix", async () => {
    gw = await startTestGateway({ config: webhookConfig({ r: { secret: "s" } }, { host: "0.0.0.0" }) });
    const warnings = warnedBy(gw);
    expect(warnings).toContainEqual(
      `[webhook] Listening on every network interface (0.0.0.0:${gw.gateway.port}): anyone who can reach this machine can post to its routes — set platforms.webhook.host: 127.0.0.1 to accept senders on this machine only, or keep it and make sure every route has a secret`,
    );
    // svc config check says it before any start, at the configured port (the test gateway was given port 0).
    const report = await checkConfig({ home: gw.home.dir, env: {} });
    expect(report.problems).toEqual([]);
    expect(report.warnings).toContainEqual(
      "Listening on every network interface (0.0.0.0:8644): anyone who can reach this machine can post to its routes — set platforms.webhook.host: 127.0.0.1 to accept senders on this machine only, or keep it and make sure every route has a secret",
    );
  });

  it("names the host key that decides the bind: platforms.webhook.extra.host when it is written there", async () => {
    // host: 127.0.0.1 written directly is already what the fix would say; extra's 0.0.0.0 wins over it.
    gw = await startTestGateway({
      config: webhookConfig({ r: { secret: "s" } }, { extra: { host: "0.0.0.0" } }),
    });
    const fix =
      "set platforms.webhook.extra.host: 127.0.0.1 to accept senders on this machine only, or keep it and make sure every route has a secret";
    expect(warnedBy(gw)).toContainEqual(
      `[webhook] Listening on every network interface (0.0.0.0:${gw.gateway.port}): anyone who can reach this machine can post to its routes — ${fix}`,
    );
    const report = await checkConfig({ home: gw.home.dir, env: {} });
    expect(report.warnings).toContainEqual(
      `Listening on every network interface (0.0.0.0:8644): anyone who can reach this machine can post to its routes — ${fix}`,
    );
  });

  it("::ffff:0.0.0.0, the IPv4-mapped 0.0.0.0, listens on every IPv4 interface and is warned of too", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ r: { secret: "s" } }, { host: "::ffff:0.0.0.0" }),
    });
    const health = await fetch(`http://127.0.0.1:${gw.gateway.port}/health`);
    expect(health.status).toBe(200);
    const warnings = warnedBy(gw);
    expect(warnings).toContainEqual(
      expect.stringContaining(
        `[webhook] Listening on every network interface ([::ffff:0.0.0.0]:${gw.gateway.port}): anyone who can reach this machine`,
      ),
    );
  });

  it("a loopback listener and no unserved subscriptions give neither warning", async () => {
    gw = await startTestGateway({ config: webhookConfig({ r: { secret: "s" } }) });
    const warnings = warnedBy(gw);
    expect(warnings.filter((msg) => /every network interface|not served/.test(msg))).toEqual([]);
    const report = await checkConfig({ home: gw.home.dir, env: {} });
    expect(report.warnings.filter((msg) => /every network interface|not served/.test(msg))).toEqual([]);
  });
});
