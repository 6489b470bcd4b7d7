import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, loggedReply, webhookConfig } from "../../helpers/gateway.js";
import { postJson, postSignedIssue } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * docs/agent.md, Credentials in a reply: what an MCP server sends as a credential is hidden in a run's reply
 * and in what a model is sent, also when a named profile's hub rendered it from `profiles/<name>/.env` — in
 * that profile's runs and in every other's. A plain value the entry sends is not hidden.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const AGENT = await bundledFixture(join(import.meta.dirname, "../../fixtures/agent/mcpClientAgent.mjs"));
const ROOT = "root-token-value-AAAA1111";
const ALPHA = "alpha-token-value-BBBB2222";
const BETA = "beta-token-value-CCCC3333";
const PLAIN = "plain-value-DDDD4444";
const perTest = gatewayPerTest();
let telegram: FakeApi;
let model: FakeModel;
beforeAll(async () => {
  [telegram, model] = await Promise.all([startFakeTelegram(), startFakeOpenAI()]);
});
afterAll(async () => {
  await Promise.all([telegram?.close(), model?.close()]);
});

const SERVERS = {
  envs: { command: process.execPath, args: [SERVER], env: { API_TOKEN: "${TOK}", PLAIN: "${PLAINV}" } },
};
const ENV_FILES = {
  ".env": `TOK=${ROOT}\nPLAINV=${PLAIN}\n`,
  "profiles/alpha/.env": `TOK=${ALPHA}\nPLAINV=${PLAIN}\n`,
  "profiles/beta/.env": `TOK=${BETA}\nPLAINV=${PLAIN}\n`,
};

const route = (extra: Record<string, unknown> = {}) => ({
  secret: "INSECURE_NO_AUTH",
  prompt: "quoted: {text}",
  deliver: "telegram",
  deliver_extra: { chat_id: "-7" },
  ...extra,
});

describe("what a named profile's MCP servers send as credentials", () => {
  it("is hidden in its own runs' tool results and replies, and in the other profiles' runs", async () => {
    const gw = await perTest.start({
      config: webhookConfig(
        { ra: route({ profile: "alpha" }), rb: route({ profile: "beta" }), ru: route() },
        {},
        {
          gateway: { multiplex_profiles: true },
          agent: { provider: "openai", model: "m", base_url: model.baseUrl },
          mcp_servers: SERVERS,
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
        },
      ),
      files: ENV_FILES,
    });
    await vi.waitFor(() => expect(gw.logs().some((l) => l.msg === "[mcp] envs: connected")).toBe(true), {
      timeout: 10_000,
    });
    let sent = 0;
    // A run told to show its server's environment, whose payload quotes `quoted` and whose model replies `reply`.
    const run = async (path: string, quoted: string, reply: string) => {
      model.requests.length = 0;
      model.script(
        { toolCalls: ["API_TOKEN", "PLAIN"].map((name) => ({ name: "mcp__envs__env", args: { name } })) },
        { text: reply },
      );
      expect((await postJson(gw.url(path), { text: quoted })).status).toBe(202);
      sent += 1;
      const delivered = (await telegramMessages(telegram, sent))[sent - 1];
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
      return {
        prompt: messages.find((m) => m.role === "user")?.content,
        tools: messages.filter((m) => m.role === "tool").map((m) => m.content),
        delivered,
      };
    };

    expect(await run("/p/beta/webhooks/rb", "nothing", `beta read ${BETA}`)).toEqual({
      prompt: "quoted: nothing",
      tools: ["[redacted]", PLAIN],
      delivered: "beta read [redacted]",
    });
    // Alpha's run: its own token, and beta's its payload quotes.
    expect(await run("/p/alpha/webhooks/ra", BETA, `alpha read ${ALPHA} and ${BETA} and ${ROOT}`)).toEqual({
      prompt: "quoted: [redacted]",
      tools: ["[redacted]", PLAIN],
      delivered: "alpha read [redacted] and [redacted] and [redacted]",
    });
    // The default profile's run hides both named profiles' tokens too.
    expect(await run("/webhooks/ru", ALPHA, `default read ${BETA}`)).toEqual({
      prompt: "quoted: [redacted]",
      tools: ["[redacted]", PLAIN],
      delivered: "default read [redacted]",
    });
    // Alpha's token rotated in its .env: the reload renders its servers with the new one, hidden from then on.
    const ROTATED = "alpha-token-rotated-EEEE5555";
    gw.home.write("profiles/alpha/.env", `TOK=${ROTATED}\nPLAINV=${PLAIN}\n`, 0o600);
    gw.gateway.reload();
    expect(await run("/p/alpha/webhooks/ra", "nothing", `alpha read ${ROTATED}`)).toEqual({
      prompt: "quoted: nothing",
      tools: ["[redacted]", PLAIN],
      delivered: "alpha read [redacted]",
    });
  });

  it("that a live connection still sends stays hidden once its .env is edited, past a status change of its hub", async () => {
    const gw = await perTest.start({
      config: webhookConfig(
        { ra: route({ profile: "alpha" }) },
        {},
        {
          gateway: { multiplex_profiles: true },
          agent: { provider: "openai", model: "m", base_url: model.baseUrl },
          mcp_servers: { envs: { ...SERVERS.envs, args: [SERVER, "--count-lists"] } },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
        },
      ),
      files: ENV_FILES,
    });
    let sent = sentTexts(telegram).length;
    const run = async (toolCalls: Array<{ name: string; args: Record<string, unknown> }>, reply: string) => {
      model.requests.length = 0;
      model.script({ toolCalls }, { text: reply });
      expect((await postJson(gw.url("/p/alpha/webhooks/ra"), { text: "nothing" })).status).toBe(202);
      sent += 1;
      const delivered = (await telegramMessages(telegram, sent))[sent - 1];
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
      return { tools: messages.filter((m) => m.role === "tool").map((m) => m.content), delivered };
    };
    const showToken = [{ name: "mcp__envs__env", args: { name: "API_TOKEN" } }];
    expect(await run(showToken, `read ${ALPHA}`)).toEqual({
      tools: ["[redacted]"],
      delivered: "read [redacted]",
    });
    // Its .env edited, no reload: the connection keeps sending the token it was started with.
    const ROTATED = "alpha-token-rotated-EEEE5555";
    gw.home.write("profiles/alpha/.env", `TOK=${ROTATED}\nPLAINV=${PLAIN}\n`, 0o600);
    // A tools/list_changed of its server changes the hub's status, which renders the entries with the new .env.
    await run([{ name: "mcp__envs__add_tools", args: { count: 1 } }], "added");
    const status = join(gw.home.dir, "profiles/alpha/mcp-cache/status.json");
    await vi.waitFor(
      () => expect(JSON.parse(readFileSync(status, "utf8")).servers[0].toolCount).toBeGreaterThan(2),
      { timeout: 10_000 },
    );
    expect(await run(showToken, `read ${ALPHA} or ${ROTATED}`)).toEqual({
      tools: ["[redacted]"],
      delivered: "read [redacted] or [redacted]",
    });
  });

  it("is hidden in a command agent's reply, in its own profile's runs and in another's", async () => {
    const SECRET = "hook-secret-profile-credentials";
    const commandRoute = (profile?: string) => ({
      prompt: "{call}",
      deliver: "log",
      ...(profile === undefined ? {} : { profile }),
    });
    const gw = await perTest.start({
      config: webhookConfig(
        { ra: commandRoute("alpha"), rb: commandRoute("beta"), ru: commandRoute() },
        { secret: SECRET },
        {
          gateway: { multiplex_profiles: true },
          agent: { provider: "command", command: [process.execPath, AGENT] },
          mcp_servers: SERVERS,
        },
      ),
      files: ENV_FILES,
    });
    // The agent calls the server's `env` tool and replies with what it returned.
    const shown = async (path: string, name: string, id: string) => {
      const call = JSON.stringify({ call: "mcp__envs__env", arguments: { name } });
      expect((await postSignedIssue(gw.url(path), SECRET, { call }, id)).status).toBe(202);
      const { result } = await loggedReply<{ result: { content: Array<{ text: string }> } }>(gw, id);
      return result.content.map((c) => c.text);
    };
    expect(await shown("/p/alpha/webhooks/ra", "API_TOKEN", "a-1")).toEqual(["[redacted]"]);
    expect(await shown("/p/alpha/webhooks/ra", "PLAIN", "a-2")).toEqual([PLAIN]);
    expect(await shown("/p/beta/webhooks/rb", "API_TOKEN", "b-1")).toEqual(["[redacted]"]);
    expect(await shown("/webhooks/ru", "API_TOKEN", "u-1")).toEqual(["[redacted]"]);
    const replies = gw
      .logs()
      .filter((l) => l.msg.includes(" reply:"))
      .map((l) => l.msg)
      .join("\n");
    for (const token of [ROOT, ALPHA, BETA]) expect(replies).not.toContain(token);
  });
});
