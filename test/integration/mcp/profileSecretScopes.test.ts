import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * Spec 2.3: a server entry's `${VAR}`s resolve from the active profile's secret scope, then the process
 * environment. An agent run of a route bound to a named profile renders them from that profile's own
 * `.env` only, never the default profile's; a run of the default profile never sees the named one's.
 * Observed as the stdio server's environment, through its `env` tool called by the fake model.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const perTest = gatewayPerTest();
let telegram: FakeApi;
let model: FakeModel;
beforeAll(async () => {
  [telegram, model] = await Promise.all([startFakeTelegram(), startFakeOpenAI()]);
});
afterAll(async () => {
  await Promise.all([telegram?.close(), model?.close()]);
});

const route = (extra: Record<string, unknown> = {}) => ({
  secret: "INSECURE_NO_AUTH",
  prompt: "go",
  deliver: "telegram",
  deliver_extra: { chat_id: "-7" },
  ...extra,
});

describe("a server entry's ${VAR}s in agent runs of two profiles", () => {
  it("render from the run's own profile's .env, then the environment, never from the other profile's", async () => {
    const gw = await perTest.start({
      config: webhookConfig(
        { mine: route(), team: route({ profile: "work" }) },
        {},
        {
          gateway: { multiplex_profiles: true },
          agent: { provider: "openai", model: "m", base_url: model.baseUrl },
          mcp_servers: {
            fx: {
              command: process.execPath,
              args: [SERVER],
              env: { D: "${DEFAULT_ONLY}", W: "${WORK_ONLY}", E: "${ENV_ONLY}" },
            },
          },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
        },
      ),
      files: { ".env": "DEFAULT_ONLY=default-value\n", "profiles/work/.env": "WORK_ONLY=work-value\n" },
      env: { ENV_ONLY: "env-value" },
    });
    const seen = async (path: string, sent: number) => {
      model.requests.length = 0;
      model.script(
        { toolCalls: ["D", "W", "E"].map((name) => ({ name: "mcp__fx__env", args: { name } })) },
        { text: `done ${path}` },
      );
      expect((await postJson(gw.url(path), {})).status).toBe(202);
      await telegramMessages(telegram, sent);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
      return messages.filter((m) => m.role === "tool").map((m) => m.content);
    };
    await vi.waitFor(() => expect(gw.logs().some((l) => l.msg === "[mcp] fx: connected")).toBe(true), {
      timeout: 10_000,
    });
    expect(await seen("/webhooks/mine", 1)).toEqual(["default-value", "${WORK_ONLY}", "env-value"]);
    expect(await seen("/p/work/webhooks/team", 2)).toEqual(["${DEFAULT_ONLY}", "work-value", "env-value"]);
  });
});
