import { describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";

const FILE = "/h/config.yaml";
const warningsFor = (raw: Record<string, unknown>) => unusedSettingWarnings(configSchema.parse(raw), FILE);

describe("settings the rest of the configuration leaves unused are named, not dropped", () => {
  it("agent.command under the echo provider: a forgotten provider: command", () => {
    expect(warningsFor({ agent: { command: ["./reply.sh"], model: "gpt-4" } })).toEqual([
      `[agent] ${FILE}: agent.provider is echo, which does not use agent.command, agent.model — set agent.provider: command to run agent.command, or remove them`,
    ]);
  });

  it("model settings under the command provider; command under a model provider", () => {
    expect(warningsFor({ agent: { provider: "command", command: ["x"], api_key: "k" } })).toEqual([
      `[agent] ${FILE}: agent.provider is command, which does not use agent.api_key — set agent.provider: openai or anthropic to run a model, or remove it`,
    ]);
    expect(warningsFor({ agent: { provider: "openai", model: "m", command: ["x"] } })[0]).toContain(
      "agent.provider is openai, which does not use agent.command — set agent.provider: command",
    );
  });

  it("state.redis_url with the local backend", () => {
    expect(warningsFor({ state: { redis_url: "redis://r:6379/0" } })).toEqual([
      `[state] ${FILE}: state.redis_url is set, but state.backend is local: Redis is not used — set state.backend: redis to share state between gateways, or remove it`,
    ]);
  });

  it("a model provider's public endpoint without agent.api_key: every run would fail with a 401", () => {
    expect(warningsFor({ agent: { provider: "anthropic", model: "m" } })).toEqual([
      `[agent] ${FILE}: agent.api_key is not set, and https://api.anthropic.com/v1 refuses requests without a key: every run would fail — set agent.api_key: \${ANTHROPIC_API_KEY} (with the key in .env), or set agent.base_url to an endpoint that needs none`,
    ]);
    expect(warningsFor({ agent: { provider: "openai", model: "m", api_key: "" } })[0]).toContain(
      "https://api.openai.com/v1 refuses requests without a key",
    );
    // A local endpoint may need no key.
    expect(
      warningsFor({ agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:11434/v1" } }),
    ).toEqual([]);
  });

  it("a route's toolsets naming code_execution, browser, memory, or web_search without a backend: a model run gets no tool", () => {
    const routes = {
      ci: { secret: "s", toolsets: ["terminal", "code_execution", "browser"] },
      ok: { secret: "s", toolsets: ["terminal", "web"] },
    };
    expect(
      warningsFor({
        agent: { provider: "openai", model: "m", api_key: "k" },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toEqual([
      `[agent] ${FILE}: platforms.webhook.routes.ci.toolsets: "code_execution", "browser" have no built-in tool in svc, so openai runs of the route are offered nothing for them (a command agent sees them in SVC_TOOLSETS) — list terminal, file or web instead, or remove them`,
    ]);
    // web_search named without a backend: no search tool either.
    expect(
      warningsFor({
        agent: { provider: "anthropic", model: "m", api_key: "k" },
        platforms: { webhook: { enabled: true, routes: { s: { secret: "s", toolsets: ["web_search"] } } } },
      }),
    ).toEqual([
      `[agent] ${FILE}: platforms.webhook.routes.s.toolsets: "web_search" needs a search backend, and tools.web_search names none, so runs of the route are offered no web_search — set tools.web_search (backend: searxng, brave or tavily), or remove it`,
    ]);
    expect(
      warningsFor({
        agent: { provider: "anthropic", model: "m", api_key: "k" },
        tools: { web_search: { backend: "searxng", url: "http://127.0.0.1:8080" } },
        platforms: { webhook: { enabled: true, routes: { s: { secret: "s", toolsets: ["web_search"] } } } },
      }),
    ).toEqual([]);
    // A command agent is handed them in SVC_TOOLSETS: nothing to say.
    expect(
      warningsFor({
        agent: { provider: "command", command: ["x"] },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toEqual([]);
  });

  it("nothing for settings in use", () => {
    expect(warningsFor({})).toEqual([]);
    expect(warningsFor({ agent: { provider: "command", command: ["x"] } })).toEqual([]);
    expect(
      warningsFor({
        agent: {
          provider: "anthropic",
          model: "m",
          api_key: "k",
          base_url: "http://l/v1",
          system_prompt: "s",
        },
        state: { backend: "redis", redis_url: "redis://r:6379/0" },
      }),
    ).toEqual([]);
  });
});
