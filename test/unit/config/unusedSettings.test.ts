import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { defaultToolsetWithoutSearch, unusedSettingWarnings } from "../../../src/config/unusedSettings.js";

const FILE = "/h/config.yaml";
/** A program that is there: an agent.command naming one that is not is warned about (below). */
const PROGRAM = process.execPath;
const warningsFor = (raw: Record<string, unknown>) => unusedSettingWarnings(configSchema.parse(raw), FILE);

describe("settings the rest of the configuration leaves unused are named, not dropped", () => {
  it("agent.command under the echo provider: a forgotten provider: command", () => {
    expect(warningsFor({ agent: { command: ["./reply.sh"], model: "gpt-4" } })).toEqual([
      `[agent] ${FILE}: agent.provider is echo, which does not use agent.command, agent.model — set agent.provider: command to run agent.command, or remove them`,
    ]);
  });

  it("model settings under the command provider; command under a model provider", () => {
    expect(warningsFor({ agent: { provider: "command", command: [PROGRAM], api_key: "k" } })).toEqual([
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

  it("a filter on a header uWS never lets through (a name with _ or .), only with http_server: uws: never matches, or always holds", () => {
    const route = (filters: unknown[]) => ({ secret: "s", filters });
    const routes = {
      und: route([{ field: "headers.X_Team", equals: "red" }]),
      nested: route([
        { any: [{ field: "headers.X-Ok", equals: "a" }, { not: { field: "headers.X.Trace", equals: "b" } }] },
      ]),
      skip: route([
        { field: "headers.X_Skip", missing: true },
        { not: { field: "headers.X.Trace", exists: true } },
      ]),
      fine: route([
        { field: "headers.X-Team", equals: "red" },
        { field: "x_team", equals: "red" },
      ]),
    };
    const why = (name: string) =>
      `on the default HTTP server: uWS closes a request holding a header whose name has a character other than a letter, a digit or - with no answer, so no request that reaches the route has it — have the sender name it "${name}", or set platforms.webhook.http_server: node`;
    expect(warningsFor({ platforms: { webhook: { routes } } })).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.und.filters[0].field: "headers.X_Team" never matches ${why("X-Team")}`,
      `[webhook] ${FILE}: platforms.webhook.routes.nested.filters[0].any[1].not.field: "headers.X.Trace" always holds ${why("X-Trace")}`,
      `[webhook] ${FILE}: platforms.webhook.routes.skip.filters[0].field: "headers.X_Skip" always holds ${why("X-Skip")}`,
      `[webhook] ${FILE}: platforms.webhook.routes.skip.filters[1].not.field: "headers.X.Trace" always holds ${why("X-Trace")}`,
    ]);
    // node:http takes such names: the filter reads them.
    expect(warningsFor({ platforms: { webhook: { http_server: "node", routes } } })).toEqual([]);
  });

  it("platforms.webhook.workers with http_server: node, which has no ingress threads", () => {
    expect(warningsFor({ platforms: { webhook: { http_server: "node", workers: 2 } } })).toEqual([
      `[webhook] ${FILE}: platforms.webhook.workers is 2, but platforms.webhook.http_server is node, which has no ingress threads: it is not used — set http_server: uws to run the sockets on 2 thread(s), or remove workers`,
    ]);
    // Written under extra, named there.
    expect(
      warningsFor({ platforms: { webhook: { http_server: "node", extra: { workers: 1 } } } })[0],
    ).toContain("platforms.webhook.extra.workers is 1, but platforms.webhook.http_server is node");
    expect(warningsFor({ platforms: { webhook: { http_server: "node", workers: 0 } } })).toEqual([]);
    expect(warningsFor({ platforms: { webhook: { workers: 2 } } })).toEqual([]);
  });

  it("a model provider's public endpoint without agent.api_key: every run would fail with a 401", () => {
    expect(warningsFor({ agent: { provider: "anthropic", model: "m" } })).toEqual([
      `[agent] ${FILE}: agent.api_key is not set, and https://api.anthropic.com/v1 refuses requests without a key: every run would fail — set agent.api_key: \${ANTHROPIC_API_KEY} (with the key in .env), or set agent.base_url to an endpoint that needs none`,
    ]);
    // (An empty api_key is refused at load: agentConfig.test.ts.)
    expect(warningsFor({ agent: { provider: "openai", model: "m" } })[0]).toContain(
      "https://api.openai.com/v1 refuses requests without a key",
    );
    // A local endpoint may need no key.
    expect(
      warningsFor({ agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:11434/v1" } }),
    ).toEqual([]);
  });

  it("the provider's own API written as base_url, without agent.api_key: warned about as when base_url is left out", () => {
    expect(
      warningsFor({ agent: { provider: "openai", model: "m", base_url: "https://api.openai.com/v1/" } }),
    ).toEqual([
      `[agent] ${FILE}: agent.api_key is not set, and https://api.openai.com/v1 refuses requests without a key: every run would fail — set agent.api_key: \${OPENAI_API_KEY} (with the key in .env), or set agent.base_url to an endpoint that needs none`,
    ]);
    // https://api.anthropic.com, as ANTHROPIC_BASE_URL is written, is taken as https://api.anthropic.com/v1.
    expect(
      warningsFor({ agent: { provider: "anthropic", model: "m", base_url: "https://API.Anthropic.com" } }),
    ).toEqual([
      `[agent] ${FILE}: agent.api_key is not set, and https://api.anthropic.com/v1 refuses requests without a key: every run would fail — set agent.api_key: \${ANTHROPIC_API_KEY} (with the key in .env), or set agent.base_url to an endpoint that needs none`,
    ]);
    // With a key: nothing to say.
    expect(
      warningsFor({
        agent: { provider: "openai", model: "m", api_key: "k", base_url: "https://api.openai.com/v1" },
      }),
    ).toEqual([]);
  });

  it("a provider's own API named without /v1: every run would get a 404", () => {
    expect(
      warningsFor({
        agent: { provider: "anthropic", model: "m", api_key: "k", base_url: "http://api.anthropic.com" },
      }),
    ).toEqual([
      `[agent] ${FILE}: agent.base_url http://api.anthropic.com has no /v1: runs would post to http://api.anthropic.com/messages, which the API answers 404 — write https://api.anthropic.com/v1, or leave base_url out`,
    ]);
    expect(
      warningsFor({
        agent: { provider: "openai", model: "m", api_key: "k", base_url: "https://api.openai.com/" },
      })[0],
    ).toContain("runs would post to https://api.openai.com/chat/completions, which the API answers 404");
    // With /v1, or another server (whose paths svc does not know): nothing to say.
    // https://api.anthropic.com as ANTHROPIC_BASE_URL is written is taken as https://api.anthropic.com/v1.
    for (const base_url of [
      "https://api.anthropic.com",
      "https://api.anthropic.com/",
      "https://api.anthropic.com/v1",
      "https://api.openai.com/v1/",
      "http://127.0.0.1:4000",
    ])
      expect(warningsFor({ agent: { provider: "anthropic", model: "m", api_key: "k", base_url } })).toEqual(
        [],
      );
  });

  it("a base_url written as the whole endpoint, which svc appends to: every run would get a 404", () => {
    expect(
      warningsFor({
        agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:1234/v1/chat/completions/" },
      }),
    ).toEqual([
      `[agent] ${FILE}: agent.base_url http://127.0.0.1:1234/v1/chat/completions/ ends in /chat/completions, which svc appends itself: runs would post to http://127.0.0.1:1234/v1/chat/completions/chat/completions, which answers 404 — write http://127.0.0.1:1234/v1`,
    ]);
    expect(
      warningsFor({
        agent: {
          provider: "anthropic",
          model: "m",
          api_key: "k",
          base_url: "https://api.anthropic.com/v1/messages",
        },
      })[0],
    ).toContain(
      "ends in /messages, which svc appends itself: runs would post to https://api.anthropic.com/v1/messages/messages",
    );
    // The other provider's path is no mistake of this kind.
    expect(
      warningsFor({
        agent: { provider: "anthropic", model: "m", base_url: "http://127.0.0.1:4000/chat/completions" },
      }),
    ).toEqual([]);
  });

  it("a route's toolsets naming an MCP server with enabled: false: its runs are offered none of its tools", () => {
    const config = (provider: Record<string, unknown>) => ({
      agent: provider,
      mcp_servers: {
        off: { command: PROGRAM, enabled: false },
        on: { command: PROGRAM },
      },
      platforms: {
        webhook: {
          enabled: true,
          routes: {
            picked: { secret: "s", toolsets: ["off", "on"] },
            direct: { secret: "s", toolsets: ["off"], deliver_only: true, deliver: "telegram" },
            plain: { secret: "s" },
          },
        },
      },
    });
    const warning = `[agent] ${FILE}: platforms.webhook.routes.picked.toolsets: "off" names mcp_servers.off, which has enabled: false, so runs of the route are offered none of its tools — set mcp_servers.off.enabled: true, or remove it from the list`;
    expect(warningsFor(config({ provider: "openai", model: "m", api_key: "k" }))).toEqual([warning]);
    // A command agent's run reaches the same tools at SVC_MCP_URL; an echo run calls none.
    expect(warningsFor(config({ provider: "command", command: [PROGRAM] }))).toEqual([warning]);
    expect(warningsFor(config({ provider: "echo" }))).toEqual([]);
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
        agent: { provider: "command", command: [PROGRAM] },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toEqual([]);
  });

  it("web_search without a backend, for a command agent too (its SVC_MCP_URL offers none); not for echo", () => {
    const routes = { s: { secret: "s", toolsets: ["web_search"] } };
    expect(
      warningsFor({
        agent: { provider: "command", command: [PROGRAM] },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toEqual([
      `[agent] ${FILE}: platforms.webhook.routes.s.toolsets: "web_search" needs a search backend, and tools.web_search names none, so runs of the route are offered no web_search (the command agent still sees it in SVC_TOOLSETS) — set tools.web_search (backend: searxng, brave or tavily), or remove it`,
    ]);
    expect(
      warningsFor({
        agent: { provider: "command", command: [PROGRAM] },
        tools: { web_search: { backend: "searxng", url: "http://127.0.0.1:8080" } },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toEqual([]);
    expect(warningsFor({ platforms: { webhook: { enabled: true, routes } } })).toEqual([]);
  });

  it("nothing for settings in use", () => {
    expect(warningsFor({})).toEqual([]);
    expect(warningsFor({ agent: { provider: "command", command: [PROGRAM] } })).toEqual([]);
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

describe("a route's deliver_extra recipient with a variable that nothing sets is named (its literal text would be the recipient)", () => {
  const unset = (name: string) => `\${${name}}`;
  it("chat_id, to, service, a thread and forge_comment's repo and pr_number; a subject or title (text, where $ before a placeholder is text) is not", () => {
    expect(
      warningsFor({
        platforms: {
          webhook: {
            secret: "route-variable-secret",
            routes: {
              ops: {
                deliver: "telegram",
                deliver_extra: { chat_id: unset("OPS_CHAT"), message_thread_id: "17" },
              },
              mail: {
                deliver: "email",
                deliver_extra: {
                  to: `oncall+${unset("TEAM")}@example.com`,
                  subject: `Paid ${unset("amount")}`,
                },
              },
              ha: {
                deliver: "home_automation",
                deliver_extra: { service: unset("HA_SERVICE"), title: unset("t") },
              },
              pr: { deliver: "forge_comment", deliver_extra: { repo: unset("REPO"), pr_number: "{number}" } },
              set: { deliver: "slack", deliver_extra: { chat_id: "C0123", thread_ts: unset("THREAD") } },
            },
          },
        },
      }).filter((w) => w.includes("is not set")),
    ).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.ops.deliver_extra.chat_id: ${unset("OPS_CHAT")} is not set — set OPS_CHAT in /h/.env or the environment; until then its literal text is used (sent to telegram as written, which names no recipient)`,
      `[webhook] ${FILE}: platforms.webhook.routes.mail.deliver_extra.to: ${unset("TEAM")} is not set — set TEAM in /h/.env or the environment; until then its literal text is used (sent to email as written, which names no recipient)`,
      `[webhook] ${FILE}: platforms.webhook.routes.ha.deliver_extra.service: ${unset("HA_SERVICE")} is not set — set HA_SERVICE in /h/.env or the environment; until then its literal text is used (sent to home_automation as written, which names no recipient)`,
      `[webhook] ${FILE}: platforms.webhook.routes.pr.deliver_extra.repo: ${unset("REPO")} is not set — set REPO in /h/.env or the environment; until then its literal text is used (sent to forge_comment as written, which names no recipient)`,
      `[webhook] ${FILE}: platforms.webhook.routes.set.deliver_extra.thread_ts: ${unset("THREAD")} is not set — set THREAD in /h/.env or the environment; until then its literal text is used (sent to slack as written, which names no recipient)`,
    ]);
  });

  it("of a route bound to a named profile whose own .env sets it: that file serves only the profile's MCP connections", () => {
    // A user giving profile work its own chat put OPS_CHAT in profiles/work/.env and was told only to set it.
    const home = mkdtempSync(join(tmpdir(), "svc-profile-env-"));
    try {
      const own = join(home, "profiles", "work", ".env");
      mkdirSync(dirname(own), { recursive: true });
      writeFileSync(own, "OPS_CHAT=-100123\nDEPLOY_EVENT=deploy\n");
      const file = join(home, "config.yaml");
      const route = (profile?: string) => ({
        ...(profile === undefined ? {} : { profile }),
        events: [unset("DEPLOY_EVENT")],
        deliver: "telegram",
        deliver_extra: { chat_id: unset("OPS_CHAT") },
      });
      const raw = { platforms: { webhook: { secret: "s", routes: { ops: route("work"), plain: route() } } } };
      const reads = ` (${own} sets it, but config.yaml reads its \${...} values from ${home}/.env only: a profile's .env serves only that profile's MCP connections)`;
      expect(
        unusedSettingWarnings(configSchema.parse(raw), file).filter((w) => w.includes("is not set")),
      ).toEqual([
        `[webhook] ${file}: platforms.webhook.routes.ops.deliver_extra.chat_id: ${unset("OPS_CHAT")} is not set — set OPS_CHAT in ${home}/.env or the environment${reads}; until then its literal text is used (sent to telegram as written, which names no recipient)`,
        `[webhook] ${file}: platforms.webhook.routes.ops.events[0]: ${unset("DEPLOY_EVENT")} is not set — set DEPLOY_EVENT in ${home}/.env or the environment${reads}; until then its literal text is used (no event's type is that text, so this entry never matches)`,
        `[webhook] ${file}: platforms.webhook.routes.plain.deliver_extra.chat_id: ${unset("OPS_CHAT")} is not set — set OPS_CHAT in ${home}/.env or the environment; until then its literal text is used (sent to telegram as written, which names no recipient)`,
        `[webhook] ${file}: platforms.webhook.routes.plain.events[0]: ${unset("DEPLOY_EVENT")} is not set — set DEPLOY_EVENT in ${home}/.env or the environment; until then its literal text is used (no event's type is that text, so this entry never matches)`,
      ]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("a delivery platform's ${VAR} that nothing sets is named (its literal text would be sent as the token)", () => {
  it("an enabled platform's unset variables, never a value; disabled platforms and set values are not", () => {
    expect(
      warningsFor({
        platforms: {
          telegram: { enabled: true, token: "$" + "{TELEGRAM_BOT_TOKEN}", home_channel: "1" },
          sms: {
            enabled: true,
            account_sid: "AC1",
            auth_token: "$" + "{TW_A}$" + "{TW_B}",
            from: "+1",
          },
          discord: { enabled: false, token: "$" + "{DISCORD_BOT_TOKEN}" },
          slack: { enabled: true, token: "xoxb-set" },
        },
      }),
    ).toEqual([
      `[delivery] ${FILE}: platforms.telegram.token: $` +
        `{TELEGRAM_BOT_TOKEN} is not set — set TELEGRAM_BOT_TOKEN in /h/.env or the environment; until then its literal text is used (sent to telegram as written)`,
      `[delivery] ${FILE}: platforms.sms.auth_token: $` +
        `{TW_A}, $` +
        `{TW_B} are not set — set TW_A, TW_B in /h/.env or the environment; until then their literal text is used (sent to sms as written)`,
    ]);
  });
});

describe("a delivery platform's ${...} in a form svc does not read is named (its text would be sent as the token)", () => {
  it("a shell's ${NAME:?msg} or ${NAME-x}, another client's ${input:x}, a ${NAME without its }: the name only, never the rest", () => {
    const d = "$";
    expect(
      warningsFor({
        platforms: {
          telegram: { enabled: true, token: `${d}{TELEGRAM_BOT_TOKEN:?set it}`, home_channel: "1" },
          slack: { enabled: true, token: `${d}{SLACK_TOKEN-xoxb-fallback-secret}` },
          discord: { enabled: true, token: `${d}{input:discord_token}` },
          sms: { enabled: true, account_sid: "AC1", auth_token: `${d}{TW_TOKEN`, from: "+1" },
          signal: { enabled: false, number: `${d}{SIGNAL:?x}` },
        },
      }),
    ).toEqual([
      `[delivery] ${FILE}: platforms.telegram.token: ${d}{TELEGRAM_BOT_TOKEN...} is not a variable form svc reads (it replaces ${d}{NAME} and ${d}{NAME:-fallback} only), so this text itself is sent to telegram — write ${d}{NAME} or ${d}{NAME:-fallback}`,
      `[delivery] ${FILE}: platforms.discord.token: ${d}{input...} is not a variable form svc reads (it replaces ${d}{NAME} and ${d}{NAME:-fallback} only), so this text itself is sent to discord — write ${d}{NAME} or ${d}{NAME:-fallback}`,
      `[delivery] ${FILE}: platforms.slack.token: ${d}{SLACK_TOKEN...} is not a variable form svc reads (it replaces ${d}{NAME} and ${d}{NAME:-fallback} only), so this text itself is sent to slack — write ${d}{NAME} or ${d}{NAME:-fallback}`,
      `[delivery] ${FILE}: platforms.sms.auth_token: ${d}{TW_TOKEN has no closing }, so this text itself is sent to sms — write ${d}{NAME} or ${d}{NAME:-fallback}`,
    ]);
  });
});

describe("the search backend's ${VAR} that nothing sets is named", () => {
  it("tools.web_search.api_key", () => {
    expect(
      warningsFor({ tools: { web_search: { backend: "brave", api_key: "$" + "{BRAVE_API_KEY}" } } }),
    ).toEqual([
      `[agent] ${FILE}: tools.web_search.api_key: $` +
        `{BRAVE_API_KEY} is not set — set BRAVE_API_KEY in /h/.env or the environment; until then its literal text is used (sent to the brave backend as written)`,
    ]);
  });

  it("an api_key with the searxng backend, which never sends one: named as unused, not as 'sent as written'", () => {
    expect(
      warningsFor({
        tools: {
          web_search: { backend: "searxng", url: "http://127.0.0.1:8080", api_key: "$" + "{BRAVE_API_KEY}" },
        },
      }),
    ).toEqual([
      `[agent] ${FILE}: tools.web_search.api_key is set, but the searxng backend takes no key: it is never sent — remove it (brave and tavily use it)`,
    ]);
  });
});

describe("a command agent's ${VAR} that nothing sets is named", () => {
  it("agent.command[0]: the run would fail as command not found: ${AGENT_BIN}", () => {
    expect(
      warningsFor({ agent: { provider: "command", command: ["$" + "{AGENT_BIN}", "--quiet"] } }),
    ).toEqual([
      `[agent] ${FILE}: agent.command[0]: $` +
        `{AGENT_BIN} is not set — set AGENT_BIN in /h/.env or the environment; until then its literal text is used (sent to the agent's process as written)`,
    ]);
  });
});

describe("a command agent's program that cannot be started is named (every run would fail with ENOENT)", () => {
  const command = (program: string) =>
    warningsFor({ agent: { provider: "command", command: [program, "--quiet"] } });
  const fix =
    "every agent run fails to start until it can be: write the absolute path of an executable file, or the name of one on the gateway's PATH";

  it("a name on no PATH directory, a path to nothing, a directory, a file without the x bit", () => {
    expect(command("svc-agent-misspelt-qqq")).toEqual([
      `[agent] ${FILE}: agent.command: "svc-agent-misspelt-qqq" was not found on PATH — ${fix}`,
    ]);
    const dir = mkdtempSync(join(tmpdir(), "svc-agent-"));
    try {
      expect(command(join(dir, "nothere"))).toEqual([
        `[agent] ${FILE}: agent.command: "${join(dir, "nothere")}" does not exist — ${fix}`,
      ]);
      expect(command(dir)[0]).toContain(`agent.command: "${dir}" is not a file`);
      const plain = join(dir, "agent.sh");
      writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
      expect(command(plain)[0]).toContain(`agent.command: "${plain}" is not executable (chmod +x ${plain})`);
      chmodSync(plain, 0o755);
      expect(command(plain)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a script whose #! interpreter is missing, or whose #! line ends in a Windows carriage return", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-agent-"));
    try {
      const moved = join(dir, "moved.sh");
      writeFileSync(moved, "#!/opt/nowhere/bin/python9\n", { mode: 0o755 });
      expect(command(moved)).toEqual([
        `[agent] ${FILE}: agent.command: every agent run fails to start: ${moved} exists, but the interpreter its #! line names, /opt/nowhere/bin/python9, is not on this machine — install it, or correct the #! line (#!/usr/bin/env <name> finds it on PATH)`,
      ]);
      const crlf = join(dir, "crlf.sh");
      writeFileSync(crlf, "#!/bin/sh\r\necho hi\r\n", { mode: 0o755 });
      expect(command(crlf)[0]).toContain(
        `${crlf} exists, but its first line ends with a carriage return (the file was saved with Windows line endings)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a program found on PATH, or a ${VAR} (named as unset, if it is), is not", () => {
    expect(command("node")).toEqual([]);
    expect(command(`$` + "{AGENT_BIN}")[0]).toContain("is not set");
    expect(command(`$` + "{AGENT_BIN}")).toHaveLength(1);
  });
});

describe("mcp_servers keys the entry's transport never reads are named, not dropped", () => {
  it("env, args and recycling on a url server; a client_key without client_cert; oauth without auth: oauth", () => {
    const web = {
      url: "https://x.example/mcp",
      env: { API_KEY: `\${API_KEY}` },
      lifecycle: { idle_timeout_seconds: 60 },
      client_key: "/k.pem",
      oauth: { client_id: "abc" },
    };
    expect(warningsFor({ mcp_servers: { web, t: { url: "https://y.example/mcp", args: ["a"] } } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.web: env and lifecycle.idle_timeout_seconds are not used: they apply to the process of a command (stdio) server, and this is a url server — send what the server needs in headers (e.g. Authorization: "Bearer \${TOKEN}"), or remove them`,
      `[mcp] ${FILE}: mcp_servers.web: client_key is not used without client_cert — set client_cert to the certificate file of that key`,
      `[mcp] ${FILE}: mcp_servers.web: oauth is not used without auth: oauth — set auth: oauth to log in with it`,
      `[mcp] ${FILE}: mcp_servers.t: args is not used: it applies to the process of a command (stdio) server, and this is a url server — remove it`,
    ]);
  });

  it("an Authorization header beside auth: oauth (the login's token takes its place; it is not sent)", () => {
    const gh = { url: "https://x.example/mcp", auth: "oauth", headers: { authorization: "Bearer static" } };
    const plain = { url: "https://y.example/mcp", headers: { Authorization: "Bearer static" } };
    expect(warningsFor({ mcp_servers: { gh, plain } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.gh: headers.authorization is not sent: auth: oauth sends the access token of the server's login as the Authorization header — remove the header, or remove auth: oauth to send it instead`,
    ]);
  });

  it("TLS keys on a url server that is plain http:// (no TLS to verify or present a certificate in)", () => {
    const plain = { url: "http://x.example/mcp", ssl_verify: "/ca.pem", client_cert: ["/c.pem", "/k.pem"] };
    const templated = { url: "${MCP_URL}", client_cert: "/c.pem" };
    expect(warningsFor({ mcp_servers: { plain, templated } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.plain: ssl_verify and client_cert are not used: they apply to https:// urls, and this url is http:// — use https:// (if the server serves TLS), or remove them`,
    ]);
  });

  it("headers and TLS keys on a command server", () => {
    const loc = { command: "node", headers: { Authorization: "x" }, ssl_verify: false, oauth: {} };
    expect(warningsFor({ mcp_servers: { loc } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.loc: headers, ssl_verify and oauth are not used: they apply to url servers, and this is a command (stdio) server — pass what it needs in env, or remove them`,
    ]);
  });

  it("TLS keys and skip_preflight alone on a command server: no credentials to move to env, so only their removal is advised", () => {
    const loc = { command: "node", skip_preflight: true, ssl_verify: false };
    expect(warningsFor({ mcp_servers: { loc } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.loc: ssl_verify and skip_preflight are not used: they apply to url servers, and this is a command (stdio) server (it is reached over its stdin and stdout: no connection to verify or check) — remove them`,
    ]);
  });

  it("a trust value that is neither full nor untrusted (treated as untrusted); not a variable, rendered at each call", () => {
    const servers = {
      cased: { command: "node", trust: "Full" },
      num: { command: "node", trust: 1 },
      templated: { command: "node", trust: "$" + "{MCP_TRUST}" },
      untrusted: { command: "node", trust: "untrusted" },
    };
    expect(warningsFor({ mcp_servers: servers })).toEqual([
      `[mcp] ${FILE}: mcp_servers.cased: trust: "Full" is neither full nor untrusted, so the server is treated as untrusted (a call of a tool without readOnlyHint: true needs approval) — write trust: full or trust: untrusted`,
      `[mcp] ${FILE}: mcp_servers.num: trust: "1" is neither full nor untrusted, so the server is treated as untrusted (a call of a tool without readOnlyHint: true needs approval) — write trust: full or trust: untrusted`,
    ]);
  });

  it("recycling under lifecycle is named as written; one written both there and at the top level is named", () => {
    const servers = {
      web: { url: "https://x.example/mcp", lifecycle: { idle_timeout_seconds: 600 } },
      loc: { command: "x", lifecycle: { max_lifetime_seconds: 5 }, max_lifetime_seconds: 10 },
      same: { command: "x", lifecycle: { idle_timeout_seconds: 5 }, max_lifetime_seconds: 10 },
    };
    expect(warningsFor({ mcp_servers: servers })).toEqual([
      `[mcp] ${FILE}: mcp_servers.web: lifecycle.idle_timeout_seconds is not used: it applies to the process of a command (stdio) server, and this is a url server — remove it`,
      `[mcp] ${FILE}: mcp_servers.loc: max_lifetime_seconds is written twice, 10 at the top level and 5 under lifecycle — the top-level 10 is used: remove one of them`,
    ]);
  });

  it("nothing for keys in use, or written with their default values", () => {
    const servers = {
      local: { command: "node", args: ["x"], env: { A: "b" }, idle_timeout_seconds: 5, ssl_verify: true },
      remote: { url: "https://x.example/mcp", auth: "oauth", oauth: { client_id: "x" }, headers: { A: "b" } },
      mtls: { url: "https://x.example/mcp", client_cert: "/c.pem", client_key: "/k.pem", args: [], env: {} },
    };
    expect(warningsFor({ mcp_servers: servers })).toEqual([]);
  });
});

describe("a container started without stdin (docker run without -i) is named", () => {
  it("docker, podman and a path to docker, run and exec; -i, -it, --interactive and a command server's own name do not count", () => {
    const servers = {
      plain: { command: "docker", args: ["run", "--rm", "mcp/fetch"] },
      path: { command: "/usr/local/bin/docker", args: ["container", "run", "--rm", "-e", "A=b", "mcp/x"] },
      pod: { command: "podman", args: ["exec", "box", "server"] },
      i: { command: "docker", args: ["run", "-i", "--rm", "mcp/fetch"] },
      it: { command: "docker", args: ["run", "--rm", "-it", "mcp/fetch"] },
      long: { command: "docker", args: ["run", "--interactive", "mcp/fetch"] },
      pull: { command: "docker", args: ["pull", "mcp/fetch"] },
      other: { command: "npx", args: ["run", "pkg"] },
    };
    const fix = (program: string, sub: string) =>
      `args: ${program} ${sub} without -i gives the container no stdin, so the server gets none of svc's messages (it exits at once, or never answers the handshake) — add -i after ${sub} (${program} ${sub} -i …)`;
    expect(warningsFor({ mcp_servers: servers })).toEqual([
      `[mcp] ${FILE}: mcp_servers.plain: ${fix("docker", "run")}`,
      `[mcp] ${FILE}: mcp_servers.path: ${fix("docker", "run")}`,
      `[mcp] ${FILE}: mcp_servers.pod: ${fix("podman", "exec")}`,
    ]);
  });
});

describe("a credential written $NAME (a shell's variable form, which svc does not replace) is named", () => {
  it("a platform token, a search key and a command argument, never the value; a $ inside a longer value is text", () => {
    const bare = "a $ followed by a name is how a shell writes a variable, but svc replaces only $";
    expect(
      warningsFor({
        platforms: {
          telegram: { enabled: true, token: "$TELEGRAM_BOT_TOKEN", home_channel: "1" },
          slack: { enabled: true, token: "xoxb-$abc" },
        },
        tools: { web_search: { backend: "brave", api_key: "$BRAVE_API_KEY" } },
        agent: { provider: "command", command: [PROGRAM, "$HOME", "$HOME/notes", "a$HOME/x"] },
      }),
    ).toEqual([
      `[delivery] ${FILE}: platforms.telegram.token: ${bare}{NAME} (with braces), so this text itself is sent to telegram — write it as $` +
        "{NAME}, in quotes",
      `[agent] ${FILE}: agent.command[1]: ${bare}{NAME} (with braces), so this text itself is sent to the agent's process — write it as $` +
        "{NAME}, in quotes",
      // A path that starts with one, as a shell would expand it: the argument is a path to nothing.
      `[agent] ${FILE}: agent.command[2]: ${bare}{NAME} (with braces), so this text itself is sent to the agent's process — write it as $` +
        "{NAME}, in quotes",
      `[agent] ${FILE}: tools.web_search.api_key: ${bare}{NAME} (with braces), so this text itself is sent to the brave backend — write it as $` +
        "{NAME}, in quotes",
    ]);
  });
});

describe("an MCP server's args, env or headers value written $NAME (or Bearer $NAME) is named", () => {
  it("only the keys its transport passes on, never the value; a $ inside other text is text", () => {
    const fix =
      "a $ followed by a name is how a shell writes a variable, but svc replaces only $" +
      "{NAME} (with braces), so this text itself is passed to the server — write it as $" +
      "{NAME}, in quotes";
    expect(
      warningsFor({
        mcp_servers: {
          gh: {
            command: "npx",
            args: ["-y", "server-github", "$X"],
            env: { GITHUB_TOKEN: "$GITHUB_TOKEN", OK: "a$b", N: 5 },
          },
          r: { url: "https://x.example/mcp", headers: { Authorization: "Bearer $TOKEN", X: "$" + "{T}" } },
        },
      }),
    ).toEqual([
      `[mcp] ${FILE}: mcp_servers.gh: args[2]: ${fix}`,
      `[mcp] ${FILE}: mcp_servers.gh: env.GITHUB_TOKEN: ${fix}`,
      `[mcp] ${FILE}: mcp_servers.r: headers.Authorization: ${fix}`,
    ]);
  });
});

describe("oauth keys a login never reads beside the others are named", () => {
  it("client_secret without client_id, or with token_endpoint_auth_method none; client_metadata_url beside client_id", () => {
    const servers = {
      lone: { url: "https://x.example/mcp", auth: "oauth", oauth: { client_secret: "s3cret-value" } },
      pub: {
        url: "https://y.example/mcp",
        auth: "oauth",
        oauth: { client_id: "abc", client_secret: "s3cret-value", token_endpoint_auth_method: "none" },
      },
      doc: {
        url: "https://z.example/mcp",
        auth: "oauth",
        oauth: { client_id: "abc", client_metadata_url: "https://app.example.com/svc.json" },
      },
      fine: {
        url: "https://w.example/mcp",
        auth: "oauth",
        oauth: { client_id: "abc", client_secret: "s3cret-value", client_metadata_url: undefined },
      },
      alone: {
        url: "https://v.example/mcp",
        auth: "oauth",
        oauth: { client_metadata_url: "https://a.example/c.json" },
      },
    };
    expect(warningsFor({ mcp_servers: servers })).toEqual([
      `[mcp] ${FILE}: mcp_servers.lone: oauth.client_secret is not used without oauth.client_id: a client svc registers gets its own secret — set oauth.client_id to the client the secret was issued with, or remove it`,
      `[mcp] ${FILE}: mcp_servers.pub: oauth.client_secret is not sent: token_endpoint_auth_method none sends the client_id only — set token_endpoint_auth_method to client_secret_basic or client_secret_post (or leave it out), or remove client_secret`,
      `[mcp] ${FILE}: mcp_servers.doc: oauth.client_metadata_url is not used: the configured oauth.client_id identifies the client — remove one of them`,
    ]);
  });
});

describe("two headers of a url server whose names differ only in case", () => {
  it("are one HTTP header, sent joined by a comma: named (never their values)", () => {
    const web = {
      url: "https://x.example/mcp",
      headers: { Authorization: "Bearer a1b2c3", authorization: "Bearer z9" },
    };
    const warnings = warningsFor({
      mcp_servers: { web, ok: { url: "https://y.example/mcp", headers: { A: "1", B: "2" } } },
    });
    expect(warnings).toEqual([
      `[mcp] ${FILE}: mcp_servers.web: headers.Authorization and headers.authorization are one header (HTTP header names ignore case), so their values are sent joined by a comma — keep one of them`,
    ]);
    expect(warnings.join("")).not.toContain("a1b2c3");
  });
});

describe("headers svc's HTTP client sets itself (Host, Content-Length, ...)", () => {
  it("are named as not sent on a url server (Connection is sent)", () => {
    const web = {
      url: "https://x.example/mcp",
      headers: { Host: "mcp.internal", "Content-Length": "5", "transfer-encoding": "chunked", "X-Ok": "1" },
    };
    expect(warningsFor({ mcp_servers: { web } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.web: headers.Host is not sent: each request carries the host of url as its Host header — write that host name in url (and reach it by DNS or /etc/hosts), or remove the header`,
      `[mcp] ${FILE}: mcp_servers.web: headers.Content-Length is not sent: svc's HTTP client handles Content-Length itself, for each request — remove it`,
      `[mcp] ${FILE}: mcp_servers.web: headers.transfer-encoding is not sent: svc's HTTP client handles transfer-encoding itself, for each request — remove it`,
    ]);
    expect(
      warningsFor({
        mcp_servers: { web: { url: "https://x.example/mcp", headers: { Connection: "close" } } },
      }),
    ).toEqual([]);
    const captured = {
      url: "https://x.example/mcp",
      headers: { "Mcp-Session-Id": "1868a90c", "mcp-protocol-version": "2025-06-18" },
    };
    expect(warningsFor({ mcp_servers: { captured } })).toEqual([
      `[mcp] ${FILE}: mcp_servers.captured: headers.Mcp-Session-Id is not sent: svc's MCP connection sets Mcp-Session-Id itself (the session it opens, the protocol version it agrees on with the server) — remove it`,
      `[mcp] ${FILE}: mcp_servers.captured: headers.mcp-protocol-version is not sent: svc's MCP connection sets mcp-protocol-version itself (the session it opens, the protocol version it agrees on with the server) — remove it`,
    ]);
  });
});

describe("a route's events entry or filter with a variable that nothing sets is named (its literal text is compared)", () => {
  const unset = (name: string) => `\${${name}}`;
  it("events entries and every text a filter compares or looks up, inside groups too; set values and prompts are not", () => {
    expect(
      warningsFor({
        platforms: {
          webhook: {
            secret: "route-variable-secret",
            routes: {
              deploy: {
                events: ["push", unset("DEPLOY_EVENT")],
                prompt: `Paid ${unset("amount")}`,
                deliver_extra: { chat_id: "-100123" },
                filters: [
                  { field: "repository.full_name", equals: unset("ALLOWED_REPO") },
                  {
                    any: [
                      { field: "a", in: ["x", unset("LISTED_VALUE")] },
                      { not: { field: unset("SOME_FIELD"), exists: true } },
                    ],
                  },
                  { field: "sender.login", not_equals: "dependabot" },
                  { field: "ref", regex: `^refs/heads/${unset("BRANCH_NAME")}$` },
                ],
              },
            },
          },
        },
      }),
    ).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.deploy.events[1]: ${unset("DEPLOY_EVENT")} is not set — set DEPLOY_EVENT in /h/.env or the environment; until then its literal text is used (no event's type is that text, so this entry never matches)`,
      `[webhook] ${FILE}: platforms.webhook.routes.deploy.filters[0].equals: ${unset("ALLOWED_REPO")} is not set — set ALLOWED_REPO in /h/.env or the environment; until then its literal text is used (no event holds that text, so the filter does not decide as meant)`,
      `[webhook] ${FILE}: platforms.webhook.routes.deploy.filters[1].any[1].not.field: ${unset("SOME_FIELD")} is not set — set SOME_FIELD in /h/.env or the environment; until then its literal text is used (no event has a field of that name, so the filter does not decide as meant)`,
      `[webhook] ${FILE}: platforms.webhook.routes.deploy.filters[1].any[0].in[1]: ${unset("LISTED_VALUE")} is not set — set LISTED_VALUE in /h/.env or the environment; until then its literal text is used (no event holds that text, so the filter does not decide as meant)`,
      `[webhook] ${FILE}: platforms.webhook.routes.deploy.filters[3].regex: ${unset("BRANCH_NAME")} is not set — set BRANCH_NAME in /h/.env or the environment; until then its literal text is used (no event holds that text, so the filter does not decide as meant)`,
    ]);
  });
});

describe("the default webhook toolset without a search backend", () => {
  const noteFor = (raw: Record<string, unknown>) =>
    defaultToolsetWithoutSearch(configSchema.parse(raw), FILE);
  const routes = {
    plain: { secret: "s" },
    listed: { secret: "s", toolsets: ["svc-webhook", "terminal"] },
    own: { secret: "s", toolsets: ["terminal"] },
    direct: { secret: "s", deliver_only: true, deliver: "telegram" },
  };
  it("names the routes whose model runs get it without web_search; none with a backend, or without a model", () => {
    const model = { provider: "openai", model: "m", api_key: "k" };
    expect(noteFor({ agent: model, platforms: { webhook: { enabled: true, routes } } })).toBe(
      `[agent] ${FILE}: runs of plain, listed get the default webhook toolset without web_search: tools.web_search names no search backend — set tools.web_search (backend: searxng, brave or tavily) to offer it`,
    );
    expect(
      noteFor({
        agent: model,
        tools: { web_search: { backend: "tavily", api_key: "tvly-k" } },
        platforms: { webhook: { enabled: true, routes } },
      }),
    ).toBeUndefined();
    expect(noteFor({ platforms: { webhook: { enabled: true, routes } } })).toBeUndefined();
  });

  it("names them for a command agent too, whose SVC_TOOLSETS still lists web_search", () => {
    const agent = { provider: "command", command: [PROGRAM] };
    expect(noteFor({ agent, platforms: { webhook: { enabled: true, routes } } })).toBe(
      `[agent] ${FILE}: runs of plain, listed get the default webhook toolset without web_search (the command agent still sees it in SVC_TOOLSETS): tools.web_search names no search backend — set tools.web_search (backend: searxng, brave or tavily) to offer it`,
    );
  });
});
