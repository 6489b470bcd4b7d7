import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { svcPaths } from "../../../src/config/paths.js";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

const NAMED_SERVER = await bundledFixture(
  join(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
);
const OPEN = { secret: "INSECURE_NO_AUTH" };
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}_${i}`);

/** `bigInclude`: the tools.include of the server `big` (none: all its 125 tools). */
const config = (provider: "openai" | "anthropic", bigInclude?: string[]) =>
  webhookConfig(
    {
      everything: { ...OPEN, prompt: "p" },
      narrow: { ...OPEN, prompt: "p", toolsets: ["small"] },
      both: { ...OPEN, prompt: "p", toolsets: ["big", "small"] },
    },
    {},
    {
      agent: { provider, model: "m", base_url: "http://127.0.0.1:9/v1", api_key: "k" },
      mcp_servers: {
        big: {
          command: process.execPath,
          args: [NAMED_SERVER, ...names("big", 125)],
          ...(bigInclude === undefined ? {} : { tools: { include: bigInclude } }),
        },
        small: { command: process.execPath, args: [NAMED_SERVER, ...names("small", 10)] },
      },
    },
  );

let gw: TestGateway | undefined;

/** Waits until the status file (written after the gateway judged the new tools) shows every tool registered. */
async function allRegistered(running: TestGateway): Promise<void> {
  const registered = () =>
    (readStatusFile(svcPaths(running.home.dir).mcpCache)?.servers ?? []).reduce(
      (sum, server) => sum + (server.state === "connected" ? (server.toolCount ?? 0) : 0),
      0,
    );
  await vi.waitFor(() => expect(registered()).toBe(135), { timeout: 15_000 });
}
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/**
 * OpenAI's API refuses a request offering more than 128 tools, so with `agent.provider: openai` every run
 * of a route offered more fails (docs/agent.md): once the servers' tools are registered the gateway names
 * those routes (and the cron jobs, offered every server) in one WARN, said again after a reload only.
 */
describe("routes offered more tools than OpenAI's API takes", { timeout: 30_000 }, () => {
  const capLines = () => (gw?.logs() ?? []).filter((l) => l.msg.includes("more than the 128 tools"));

  it("are named in a WARN once the servers' tools are registered, once until a reload", async () => {
    gw = await startTestGateway({ config: config("openai") });
    const running = gw;
    await allRegistered(running);
    await allRegistered(running);
    const said = capLines()
      .map((l) => l.msg)
      .join("\n");
    expect(said).toMatch(/route everything \(\d+ tools\)/);
    expect(said).toMatch(/cron jobs \(\d+ tools\)/);
    expect(said).not.toMatch(/narrow/);
    expect(said).toMatch(/toolsets/);
    expect(said).toMatch(/tools\.include/);
    // Each once, however many status changes the connects made.
    expect(said.match(/route both /g)).toHaveLength(1);
    expect(said.match(/route everything /g)).toHaveLength(1);
    expect(said.match(/cron jobs /g)).toHaveLength(1);
    for (const line of capLines()) expect(line.level).toBe(40);
    const count = capLines().length;

    // A reload says it again (the config is still so), once.
    running.home.write("config.yaml", stringify(config("openai")));
    running.gateway.reload();
    await vi.waitFor(() => expect(capLines().length).toBeGreaterThan(count), { timeout: 10_000 });
    const again = capLines()
      .slice(count)
      .map((l) => l.msg)
      .join("\n");
    expect(again).toMatch(/route both \(135 tools\)/);
    expect(again.match(/route everything /g)).toHaveLength(1);
  });

  it("is not said again by a reload that brings a server under the cap (tools.include)", async () => {
    gw = await startTestGateway({ config: config("openai") });
    const running = gw;
    await allRegistered(running);
    await vi.waitFor(() => expect(capLines().length).toBeGreaterThan(0));
    const count = capLines().length;

    running.home.write("config.yaml", stringify(config("openai", ["big_0"])));
    running.gateway.reload();
    // The replaced server registers its one tool: every route is under the cap, nothing is said again (the
    // old code counted the server's 125 tools of before the reload).
    const mcpCache = svcPaths(running.home.dir).mcpCache;
    await vi.waitFor(
      () =>
        expect(readStatusFile(mcpCache)?.servers.find((server) => server.name === "big")).toMatchObject({
          state: "connected",
          toolCount: 1,
        }),
      { timeout: 15_000 },
    );
    expect(capLines().slice(count)).toEqual([]);
  });

  it("says nothing for a provider without that cap", async () => {
    gw = await startTestGateway({ config: config("anthropic") });
    const running = gw;
    await allRegistered(running);
    expect(capLines()).toEqual([]);
  });
});

describe("a run offered more tools than OpenAI's API takes", { timeout: 30_000 }, () => {
  it("fails with the API's refusal and what to change in its notice", async () => {
    const [model, telegram] = await Promise.all([startFakeOpenAI(), startFakeTelegram()]);
    try {
      gw = await startTestGateway({
        config: webhookConfig(
          {
            everything: {
              ...OPEN,
              prompt: "p",
              deliver: "telegram",
              deliver_extra: { chat_id: "-7" },
            },
          },
          {},
          {
            agent: { provider: "openai", model: "m", base_url: model.baseUrl },
            mcp_servers: { big: { command: process.execPath, args: [NAMED_SERVER, ...names("big", 130)] } },
            platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
          },
        ),
      });
      model.script({ text: "never sent" });
      expect((await postJson(gw.url("/webhooks/everything"), {})).status).toBe(202);
      const [notice] = await telegramMessages(telegram, 1);
      expect(notice).toContain("array too long. Expected an array with maximum length 128");
      expect(notice).toMatch(
        /— the run was offered 13\d tools, more than the 128 the endpoint takes in one request: name only the MCP servers the route needs in its toolsets, or list the tools a server offers in mcp_servers\.<name>\.tools\.include$/,
      );
    } finally {
      await Promise.all([model.close(), telegram.close()]);
    }
  });
});
