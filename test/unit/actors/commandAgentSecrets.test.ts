import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { webhookSecretValues } from "../../../src/config/webhookSecrets.js";
import { createAgent } from "../../../src/gateway/agent.js";
import { silentLogger } from "../../../src/io/log.js";

// The command prints which of the variables it was given: a webhook secret must not reach an agent that
// reads untrusted payloads, whatever variable config.yaml read it from.
const PRINT =
  'for v in GH_SECRET WEBHOOK_SECRET OTHER_VAR; do printenv "$v" || echo unset; done | paste -sd "|"';
const VARIABLES = ["GH_SECRET", "WEBHOOK_SECRET", "OTHER_VAR", "PART1", "PART2", "TAIL", "SHORT"];

const request = {
  route: "gh",
  event: "push",
  deliveryId: "d1",
  prompt: "hi",
  toolsets: [],
  profile: undefined,
};

/** The reply of one run of the agent `config` makes. */
async function replyOf(config: ReturnType<typeof configSchema.parse>): Promise<string> {
  const agent = createAgent(config, { logger: silentLogger(), home: "/nonexistent" });
  try {
    return (await agent.runner().run(request, new AbortController().signal)).text;
  } finally {
    await agent.stop();
  }
}

const saved = { ...process.env };
afterEach(() => {
  for (const key of VARIABLES) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("command agent environment: no webhook secret", () => {
  it("a route secret read from a variable (GH_SECRET) is kept out of the command's environment, like WEBHOOK_SECRET", async () => {
    process.env.GH_SECRET = "gh-route-secret";
    process.env.WEBHOOK_SECRET = "global-secret";
    process.env.OTHER_VAR = "kept";
    const config = configSchema.parse({
      agent: { provider: "command", command: ["sh", "-c", PRINT] },
      platforms: {
        webhook: { enabled: true, secret: "global-secret", routes: { gh: { secret: "gh-route-secret" } } },
      },
    });
    expect(await replyOf(config)).toBe("unset|unset|kept");
  });

  it("so are the parts of a secret config.yaml writes from several variables or with text around one", async () => {
    // secret: ${PART1}${PART2} and secret: pre-${TAIL}, as the config's interpolation made them.
    Object.assign(process.env, {
      PART1: "partone_AAAA",
      PART2: "parttwo_BBBB",
      TAIL: "tailsecret_CCC",
      SHORT: "ab",
    });
    const print = 'for v in PART1 PART2 TAIL SHORT; do printenv "$v" || echo unset; done | paste -sd "|"';
    const config = configSchema.parse({
      agent: { provider: "command", command: ["sh", "-c", print] },
      platforms: {
        webhook: {
          enabled: true,
          routes: { b: { secret: "partone_AAAAparttwo_BBBB" }, c: { secret: "pre-tailsecret_CCC-ab" } },
        },
      },
    });
    // A value of a few characters (SHORT) tells nothing of a secret and stays.
    expect(await replyOf(config)).toBe("unset|unset|unset|ab");
  });

  it("a reply quoting a webhook secret (the agent read ~/.svc/.env) is delivered with [redacted] in its place", async () => {
    const config = configSchema.parse({
      agent: {
        provider: "command",
        command: ["sh", "-c", "cat >/dev/null; echo 'it is gh-route-secret-0123456789'"],
      },
      platforms: { webhook: { enabled: true, routes: { gh: { secret: "gh-route-secret-0123456789" } } } },
    });
    expect(await replyOf(config)).toBe("it is [redacted]");
  });

  it("webhookSecretValues: the global secret and each route's own, never INSECURE_NO_AUTH", () => {
    const config = configSchema.parse({
      platforms: {
        webhook: {
          host: "127.0.0.1",
          secret: "g",
          routes: { a: { secret: "a1" }, b: {}, c: { secret: "INSECURE_NO_AUTH" }, d: { secret: "a1" } },
        },
      },
    });
    expect(webhookSecretValues(config).sort()).toEqual(["a1", "g"]);
  });
  it("hiddenValues (what MCP servers' text is redacted of): the model's API key, the web search key, webhook and subscription secrets, as the config now reads", async () => {
    const at = (key: string) =>
      configSchema.parse({
        agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:9/v1", api_key: key },
        tools: { web_search: { backend: "tavily", api_key: "tvly-search-key" } },
        platforms: { webhook: { host: "127.0.0.1", routes: { gh: { secret: "gh-route-secret" } } } },
      });
    const agent = createAgent(at("sk-first"), {
      logger: silentLogger(),
      home: "/nonexistent",
      subscriptionSecrets: () => ["sub-secret"],
    });
    try {
      expect([...agent.hiddenValues()].sort()).toEqual([
        "gh-route-secret",
        "sk-first",
        "sub-secret",
        "tvly-search-key",
      ]);
      agent.reload(at("sk-second"));
      expect(agent.hiddenValues()).toContain("sk-second");
      expect(agent.hiddenValues()).not.toContain("sk-first");
    } finally {
      await agent.stop();
    }
  });

  it("hiddenValues is the same list while no secret changed (each stderr line of an MCP server is redacted with it)", async () => {
    const config = configSchema.parse({
      agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:9/v1", api_key: "sk-first" },
      platforms: { webhook: { host: "127.0.0.1", routes: { gh: { secret: "gh-route-secret" } } } },
    });
    // The store's secrets, a new array only when a subscription changed (storedSecrets).
    let stored: readonly string[] = ["sub-secret-1"];
    const agent = createAgent(config, {
      logger: silentLogger(),
      home: "/nonexistent",
      subscriptionSecrets: () => stored,
    });
    try {
      const first = agent.hiddenValues();
      expect(agent.hiddenValues()).toBe(first);
      stored = ["sub-secret-1", "sub-secret-2"];
      const added = agent.hiddenValues();
      expect(added).not.toBe(first);
      expect(added).toContain("sub-secret-2");
      expect(agent.hiddenValues()).toBe(added);
      agent.reload(configSchema.parse({ ...config, agent: { ...config.agent, api_key: "sk-second" } }));
      expect(agent.hiddenValues()).not.toBe(added);
      expect(agent.hiddenValues()).toContain("sk-second");
    } finally {
      await agent.stop();
    }
  });
});
