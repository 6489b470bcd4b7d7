import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { inHome, startTestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { cliConfig, svc } from "../cli/svc.js";

/**
 * A disabled subscription (`svc webhook disable`) is not served, but its sender still signs with its secret,
 * which `svc webhook enable` brings back: a run's output hides it as it hides a served one's.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

const OFF_SECRET = "off-secret-5541-abcdef";
const ON_SECRET = "on-secret-5542-abcdef";

const subscription = (secret: string, enabled: boolean) => ({
  secret,
  prompt: "x",
  deliver: "log",
  enabled,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});

/** A command agent that replies with the file `reply` (a payload talked it into reading the data directory). */
const replying = (reply: string) => ({
  provider: "command",
  command: ["sh", "-c", 'cat >/dev/null; cat "$0"', reply],
});

describe("a disabled subscription's secret quoted by a run's reply is hidden", { timeout: 60_000 }, () => {
  it("by the gateway (state.backend: local): the reply is delivered [redacted]", async () => {
    const gw = await startTestGateway({
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          on: subscription(ON_SECRET, true),
          off: subscription(OFF_SECRET, false),
        }),
        "reply.txt": `keys: ${ON_SECRET} ${OFF_SECRET}\n`,
      },
      config: webhookConfig(
        { probe: { secret: "INSECURE_NO_AUTH", prompt: "x" } },
        {},
        { agent: replying(inHome("reply.txt")) },
      ),
    });
    try {
      const home = gw.home.dir;
      expect((await postJson(gw.url("/webhooks/probe"), { x: 1 }, { "X-Request-Id": "p-1" })).status).toBe(
        202,
      );
      await vi.waitFor(
        () => {
          const run = readHistory(join(home, "deliveries")).find((r) => r.kind === "run" && r.id === "p-1");
          expect(run).toMatchObject({ outcome: "ok" });
        },
        { timeout: 20_000 },
      );
      const journals = readdirSync(join(home, "sessions", "webhook-runs")).map((f) =>
        join("sessions", "webhook-runs", f),
      );
      const written = ["logs/gateway.log", "deliveries/history.jsonl", ...journals]
        .map((file) => readFileSync(join(home, file), "utf8"))
        .join("\n");
      expect(written).toContain("keys: [redacted] [redacted]");
      expect(written).not.toContain(OFF_SECRET);
    } finally {
      await gw.stop();
    }
  });

  describe("state.backend: redis, where the subscriptions are in Redis (not in webhook_subscriptions.json)", () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startTestRedis();
    });
    afterAll(async () => {
      await redis?.cleanup();
    });

    /**
     * A home on the Redis above (keys under `prefix`) whose agent replies with the secret of the subscription
     * "off", which is stored there and disabled; `extra` goes into its config too.
     */
    async function disabledOnRedis(prefix: string, extra: Record<string, unknown> = {}): Promise<TempHome> {
      const home = tempHome();
      try {
        const reply = home.write("reply.txt", `keys: ${OFF_SECRET}\n`);
        const state = { backend: "redis", redis_url: redis.url, redis_key_prefix: prefix };
        home.write(
          "config.yaml",
          stringify(cliConfig({}, { agent: replying(reply), state, ...extra })),
          0o600,
        );
        expect((await svc(home, ["webhook", "subscribe", "off", "--secret", OFF_SECRET])).code).toBe(0);
        expect((await svc(home, ["webhook", "disable", "off"])).code).toBe(0);
        return home;
      } catch (err) {
        home.cleanup();
        throw err;
      }
    }

    it("svc cron run prints the reply [redacted]", async () => {
      const home = await disabledOnRedis("disabled-secret");
      try {
        const created = await svc(home, [
          "cron",
          "create",
          "--name",
          "n",
          "--schedule",
          "@daily",
          "--prompt",
          "x",
        ]);
        expect(created.code).toBe(0);
        const run = await svc(home, ["cron", "run", "n"]);
        expect(run.stdout).toBe("keys: [redacted]\n");
      } finally {
        home.cleanup();
      }
    });

    // The server asks for a model's answer (sampling) before it lists its tools, and quotes it in its refusal.
    // `svc mcp test --all` and `svc mcp list` (no gateway running) check the server as the gateway would
    // connect it: with sampling offered, answered by the agent.
    it("svc mcp tools, test, test --all and list print a server's sampling reply [redacted]", async () => {
      const home = await disabledOnRedis("disabled-secret-mcp", {
        mcp_servers: {
          s: { command: process.execPath, args: [SERVER, "--sample-on-list"], sampling: { enabled: true } },
        },
      });
      try {
        for (const command of [["tools", "s"], ["test", "s"], ["test", "--all"], ["list"]]) {
          const shown = await svc(home, ["mcp", ...command]);
          const output = shown.stdout + shown.stderr;
          expect(output).toContain("the model said: keys: [redacted]");
          expect(output).not.toContain(OFF_SECRET);
        }
      } finally {
        home.cleanup();
      }
    });
  });
});
