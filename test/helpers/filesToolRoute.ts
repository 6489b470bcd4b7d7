import { join } from "node:path";
import type { FakeModel } from "../fakes/modelScript.js";
import { bundledFixture } from "./bundledFixture.js";
import { webhookConfig } from "./gateway.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../fixtures/mcp/stdio-server.mjs"));

/**
 * A gateway config with one open route, `route` (prompt "do it"), whose runs ask `model` through `provider`
 * (no retries) with the tools of a real stdio MCP server (toolset `files`: `mcp__files__echo`, …) and
 * deliver the answer to chat -7 of the fake Telegram at `telegramUrl`.
 */
export function filesToolRouteConfig(
  route: string,
  provider: "openai" | "anthropic",
  model: FakeModel,
  telegramUrl: string,
): Record<string, unknown> {
  return webhookConfig(
    {
      [route]: {
        secret: "INSECURE_NO_AUTH",
        prompt: "do it",
        toolsets: ["files"],
        deliver: "telegram",
        deliver_extra: { chat_id: "-7" },
      },
    },
    {},
    {
      agent: { provider, model: "test-model", base_url: model.baseUrl, retries: 0 },
      mcp_servers: { files: { command: process.execPath, args: [SERVER] } },
      platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegramUrl } },
    },
  );
}
