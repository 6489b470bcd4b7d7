import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function refusal(yaml: string): string {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
  throw new Error("loaded without an error");
}

const SEE = " (see docs/configuration.md)";

describe("a key written one level off is named with where it belongs (not just 'check the spelling')", () => {
  it("gateway.multiplex_profiles written under platforms.webhook", () => {
    expect(refusal("platforms:\n  webhook:\n    multiplex_profiles: true\n")).toBe(
      `FILE: platforms.webhook: unknown key "multiplex_profiles" — it belongs under gateway (gateway.multiplex_profiles)${SEE}`,
    );
  });

  it("a top-level profiles section (or profile) says what a profile is and how a route names one", () => {
    const what =
      "config.yaml has no profiles section: a profile is its directory, <SVC_HOME>/profiles/<name>/ (its scripts, skills, cron jobs, MCP tokens and .env), made with mkdir; a route runs as one with profile: <name> among its keys";
    expect(refusal("platforms: {webhook: {enabled: true}}\nprofiles:\n  work:\n    mcp_servers: {}\n")).toBe(
      `FILE: (top level): unknown key "profiles" — ${what}${SEE}`,
    );
    expect(refusal("platforms: {webhook: {enabled: true}}\nprofile: work\n")).toBe(
      `FILE: (top level): unknown key "profile" — ${what}${SEE}`,
    );
  });

  it("a top-level cron section (or cron_jobs) says where cron jobs are kept and how to make one", () => {
    const what =
      "config.yaml has no cron section: cron jobs are kept in <SVC_HOME>/cron/jobs.json (a profile's in <SVC_HOME>/profiles/<name>/cron/jobs.json), made with svc cron create --name <name> --schedule <expr> --prompt <text>; a route fires one with cron_job: <job name> among its keys";
    expect(
      refusal(
        "platforms: {webhook: {enabled: true}}\ncron:\n  nightly:\n    schedule: '0 3 * * *'\n    prompt: Summarize the day\n",
      ),
    ).toBe(`FILE: (top level): unknown key "cron" — ${what}${SEE}`);
    expect(refusal("platforms: {webhook: {enabled: true}}\ncron_jobs: []\n")).toBe(
      `FILE: (top level): unknown key "cron_jobs" — ${what}${SEE}`,
    );
  });

  it("a route written without the routes: level, directly or under extra", () => {
    expect(refusal("platforms:\n  webhook:\n    enabled: true\n    github:\n      secret: x\n")).toBe(
      `FILE: platforms.webhook: unknown key "github" — a route goes under platforms.webhook.routes (routes: {github: ...})${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    extra:\n      github:\n        secret: x\n")).toBe(
      `FILE: platforms.webhook.extra: unknown key "github" — a route goes under platforms.webhook.routes (routes: {github: ...})${SEE}`,
    );
  });

  it("a subscription's enabled or description in a config.yaml route says what to do instead, not 'check the spelling'", () => {
    expect(
      refusal("platforms:\n  webhook:\n    routes:\n      gh:\n        secret: s\n        enabled: false\n"),
    ).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "enabled" — a config.yaml route has no enabled flag: it is served while it is in the file — remove it (or comment it out) to stop it; enabled belongs to subscriptions (svc webhook disable)${SEE}`,
    );
    expect(
      refusal(
        "platforms:\n  webhook:\n    extra:\n      routes:\n        gh:\n          secret: s\n          description: PRs\n",
      ),
    ).toBe(
      `FILE: platforms.webhook.extra.routes.gh: unknown key "description" — a config.yaml route has no description: write a # comment above it; description belongs to subscriptions${SEE}`,
    );
  });

  it("a route key as other webhook relays write it, or a delivery target's key a level up, says what a route reads instead", () => {
    const route = (line: string) =>
      refusal(
        `platforms:\n  webhook:\n    routes:\n      gh:\n        secret: s\n        deliver: telegram\n        ${line}\n`,
      );
    expect(route("chat_id: -1001234")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "chat_id" — a key of the delivery target: put it under deliver_extra (deliver_extra: {chat_id: ...})${SEE}`,
    );
    expect(route("template: 'PR {number}'")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "template" — write prompt (a {dot.path} template)${SEE}`,
    );
    expect(route("event_types: [push]")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "event_types" — write events (a list: events: [push, pull_request])${SEE}`,
    );
    expect(route("hmac_secret: s3cret")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "hmac_secret" — write secret (the route's HMAC secret or token)${SEE}`,
    );
    expect(route("path: /hooks/gh")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "path" — a route answers at /webhooks/<its name>: the name is its path — remove it (rename the route for another path)${SEE}`,
    );
    expect(route("debounce: {key: number}")).toBe(
      `FILE: platforms.webhook.routes.gh: unknown key "debounce" — write coalesce (coalesce: {key: <payload path>, window_seconds: 30})${SEE}`,
    );
  });

  it("a coalesce key as other batching tools write it (a cap on events, a debounce delay) says what svc has instead, not 'check the spelling'", () => {
    const coalesce = (line: string, under = "routes") =>
      refusal(
        `platforms:\n  webhook:\n    ${under === "routes" ? "routes" : "extra:\n      routes"}:\n        gh:\n          secret: s\n          coalesce:\n            key: number\n            ${line}\n`,
      );
    const noCap =
      "coalesce has no cap on a group's events: a group runs once, with its latest event, when its quiet window (window_seconds) or its max_wait_seconds ends — lower max_wait_seconds for a busy key to run sooner";
    expect(coalesce("max_events: 10")).toBe(
      `FILE: platforms.webhook.routes.gh.coalesce: unknown key "max_events" — ${noCap}${SEE}`,
    );
    expect(coalesce("max_batch_size: 10", "extra")).toBe(
      `FILE: platforms.webhook.extra.routes.gh.coalesce: unknown key "max_batch_size" — ${noCap}${SEE}`,
    );
    expect(coalesce("debounce_seconds: 5")).toBe(
      `FILE: platforms.webhook.routes.gh.coalesce: unknown key "debounce_seconds" — write window_seconds (the quiet window: a group fires once no event came for that long)${SEE}`,
    );
    expect(coalesce("group_by: repo.id")).toBe(
      `FILE: platforms.webhook.routes.gh.coalesce: unknown key "group_by" — write key (the payload path or {template} that names a group)${SEE}`,
    );
  });

  it("routes written under another name (endpoints: {github: {...}}) say to write routes, not that a route named endpoints goes under routes", () => {
    expect(
      refusal("platforms:\n  webhook:\n    endpoints:\n      github:\n        secret: s\n      stripe:\n"),
    ).toBe(
      `FILE: platforms.webhook: unknown key "endpoints" — it holds routes: write routes (routes: {<name>: {...}}, each answering at /webhooks/<name>)${SEE}`,
    );
    // One route missing its routes: level (its keys are route properties) keeps that advice.
    expect(refusal("platforms:\n  webhook:\n    github:\n      coalesce: {key: number}\n")).toBe(
      `FILE: platforms.webhook: unknown key "github" — a route goes under platforms.webhook.routes (routes: {github: ...})${SEE}`,
    );
  });

  it("a platforms.webhook setting as other webhook servers name it says what svc reads instead, under extra too", () => {
    expect(refusal("platforms:\n  webhook:\n    bind: 127.0.0.1\n")).toBe(
      `FILE: platforms.webhook: unknown key "bind" — write host (the bind address: 127.0.0.1, or 0.0.0.0 for every interface)${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    extra:\n      max_body_size: 1000\n")).toBe(
      `FILE: platforms.webhook.extra: unknown key "max_body_size" — write max_body_bytes (the largest body, in bytes)${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    requests_per_minute: 60\n")).toBe(
      `FILE: platforms.webhook: unknown key "requests_per_minute" — write rate_limit (requests per minute, counted per route)${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    webhook_secret: s3cret\n")).toBe(
      `FILE: platforms.webhook: unknown key "webhook_secret" — write secret (the global secret of the routes without their own)${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    listen: 8000\n")).toBe(
      `FILE: platforms.webhook: unknown key "listen" — write host and port (host: 127.0.0.1, port: 8644)${SEE}`,
    );
  });

  it("a subscription record pasted as a route (enabled and description together, beside a typo) keeps each key's advice", () => {
    expect(
      refusal(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        secret: s\n        enabled: true\n        description: PRs\n        evnts: [push]\n        zzz_unknown: 1\n",
      ),
    ).toBe(
      `FILE: platforms.webhook.routes.gh: unknown keys "enabled", "description", "evnts", "zzz_unknown" — enabled: a config.yaml route has no enabled flag: it is served while it is in the file — remove it (or comment it out) to stop it; enabled belongs to subscriptions (svc webhook disable); description: a config.yaml route has no description: write a # comment above it; description belongs to subscriptions; "evnts": did you mean "events"?; "zzz_unknown": check the spelling${SEE}`,
    );
  });

  it('a version field at the top level (docker compose\'s version: "3", a schema version) says config.yaml has none, not to check its spelling', () => {
    const advice =
      "config.yaml has no version field: every version of svc reads the file as it is, and names a key it does not know (a newer version's setting) as unknown — remove the line";
    for (const [key, value] of [
      ["version", "1"],
      ["version", '"3"'],
      ["config_version", "2"],
      ["schema_version", "1"],
    ])
      expect(refusal(`${key}: ${value}\nplatforms:\n  webhook:\n    secret: s\n`)).toBe(
        `FILE: (top level): unknown key "${key}" — ${advice}${SEE}`,
      );
  });

  it("a docker compose extension key holding an anchor says where the anchor goes instead", () => {
    expect(refusal("x-base: &base\n  secret: s\nplatforms:\n  webhook:\n    routes:\n      a: *base\n")).toBe(
      `FILE: (top level): unknown key "x-base" — config.yaml has no extension keys (docker compose's x-...): put the anchor on the first route that uses it (routes: {a: &base {...}, b: {<<: *base, ...}})${SEE}`,
    );
  });

  it("two routes written without the routes: level are each named as a route", () => {
    expect(
      refusal(
        "platforms:\n  webhook:\n    enabled: true\n    github:\n      secret: x\n    gitlab:\n      secret: y\n",
      ),
    ).toBe(
      `FILE: platforms.webhook: unknown keys "github", "gitlab" — github: a route goes under platforms.webhook.routes (routes: {github: ...}); gitlab: a route goes under platforms.webhook.routes (routes: {gitlab: ...})${SEE}`,
    );
  });

  it("routes at the top level, and an adapter setting inside a route", () => {
    expect(refusal("routes:\n  a: {secret: s}\n")).toBe(
      `FILE: (top level): unknown key "routes" — it belongs under platforms.webhook (platforms.webhook.routes)${SEE}`,
    );
    expect(refusal("platforms:\n  webhook:\n    routes:\n      a: {secret: s, rate_limit: 5}\n")).toBe(
      `FILE: platforms.webhook.routes.a: unknown key "rate_limit" — it belongs under platforms.webhook (platforms.webhook.rate_limit)${SEE}`,
    );
  });

  it("agent.max_tool_result_chars written at the top level, under tools or under an MCP server says it belongs under agent", () => {
    const belongs =
      'unknown key "max_tool_result_chars" — it belongs under agent (agent.max_tool_result_chars)';
    expect(refusal("max_tool_result_chars: 5000\n")).toBe(`FILE: (top level): ${belongs}${SEE}`);
    expect(refusal("tools:\n  max_tool_result_chars: 5000\n")).toBe(
      `FILE: tools: ${belongs} (see docs/agent-tools.md)`,
    );
    expect(refusal("mcp_servers:\n  files:\n    command: node\n    max_tool_result_chars: 5000\n")).toBe(
      `FILE: mcp_servers.files: ${belongs} (see docs/mcp.md)`,
    );
  });

  it("a section's setting written at the top level (a flat config: port, secret, model, backend) says which section", () => {
    expect(refusal("platforms:\n  webhook:\n    enabled: true\nport: 9000\n")).toBe(
      `FILE: (top level): unknown key "port" — it belongs under platforms.webhook (platforms.webhook.port)${SEE}`,
    );
    expect(refusal("secret: sec-KKK777\nhost: 127.0.0.1\n")).toBe(
      `FILE: (top level): unknown keys "secret", "host" — secret: it belongs under platforms.webhook (platforms.webhook.secret); host: it belongs under platforms.webhook (platforms.webhook.host)${SEE}`,
    );
    expect(refusal("model: gpt-4.1-mini\n")).toBe(
      `FILE: (top level): unknown key "model" — it belongs under agent (agent.model)${SEE}`,
    );
    expect(refusal("redis_url: redis://127.0.0.1:6379/0\n")).toBe(
      `FILE: (top level): unknown key "redis_url" — it belongs under state (state.redis_url)${SEE}`,
    );
    // A section's own key of that name is not misplaced: a delivery platform's port is its own.
    expect(
      refusal("platforms:\n  webhook:\n    enabled: true\n    routes:\n      a: {secret: s, model: x}\n"),
    ).not.toContain("belongs under agent");
  });

  it("an adapter setting written beside webhook: under platforms is named with where it goes, not as a platform", () => {
    expect(refusal("platforms:\n  webhook:\n    enabled: true\n  port: 8644\n")).toBe(
      "FILE: platforms.port: unknown platform — port is a setting of platforms.webhook: indent it under webhook: (platforms.webhook.port)",
    );
  });

  it("a route written as one value (its secret, as often as not) says to write its keys under it, the value not shown", () => {
    const direct = refusal("platforms:\n  webhook:\n    routes:\n      gh: sec-LLL111\n");
    expect(direct).toBe(
      "FILE: platforms.webhook.routes.gh: expected a mapping, got text (not shown: it may be the route's secret) — a route is a mapping of its keys: write gh: on its own line, with secret: and its other keys (events, prompt, ...) indented under it",
    );
    expect(direct).not.toContain("sec-LLL111");
    const extra = refusal("platforms:\n  webhook:\n    extra:\n      routes:\n        gh: 123456\n");
    expect(extra).toBe(
      "FILE: platforms.webhook.extra.routes.gh: expected a mapping, got a number (not shown: it may be the route's secret) — a route is a mapping of its keys: write gh: on its own line, with secret: and its other keys (events, prompt, ...) indented under it",
    );
  });

  it("a route property written where route names go is named as one, directly or under extra", () => {
    expect(
      refusal(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        secret: sec-JJJ999\n      events: [push]\n",
      ),
    ).toBe(
      `FILE: platforms.webhook.routes.events: expected a mapping, got ["push"] — events is a route property, not a route: indent it under the route's name (platforms.webhook.routes.<name>.events)`,
    );
    const secret = refusal("platforms:\n  webhook:\n    extra:\n      routes:\n        secret: sec-KKK000\n");
    expect(secret).toContain(
      "FILE: platforms.webhook.extra.routes.secret: expected a mapping, got a string (not shown: the key holds a secret) — secret is a route property, not a route: indent it under the route's name (platforms.webhook.extra.routes.<name>.secret)",
    );
    expect(secret).not.toContain("sec-KKK000");
    // A mapping-valued property (deliver_extra, coalesce) reads as a route of that name with unknown keys.
    expect(
      refusal(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        deliver: log\n      deliver_extra:\n        chat_id: 5\n",
      ),
    ).toBe(
      `FILE: platforms.webhook.routes.deliver_extra: unknown key "chat_id" — deliver_extra is a route property, not a route: indent it under the route's name (platforms.webhook.routes.<name>.deliver_extra)${SEE}`,
    );
  });

  it("an extra inside extra is refused, not dropped with its keys (spec 2.1: extra is one level)", () => {
    expect(refusal("platforms:\n  webhook:\n    extra:\n      extra:\n        port: 1\n")).toBe(
      "FILE: platforms.webhook.extra.extra: extra inside extra is not read — move its keys up into platforms.webhook.extra",
    );
  });

  it("a plain misspelling still gets did-you-mean, an unrelated key 'check the spelling'", () => {
    expect(refusal("gateway:\n  multiplex_profile: true\n")).toContain('did you mean "multiplex_profiles"?');
    expect(refusal("platforms:\n  webhook:\n    routes:\n      a: {secret: s, bogus: 1}\n")).toBe(
      `FILE: platforms.webhook.routes.a: unknown key "bogus" — check the spelling${SEE}`,
    );
  });
});

describe("an MCP server entry with another client's keys (pasted from Claude Desktop, Cline, Windsurf, VS Code)", () => {
  const mcp = (entry: string) =>
    refusal(`platforms: {webhook: {enabled: true}}\nmcp_servers:\n  a: {${entry}}\n`);

  it("says what svc reads instead of each one", () => {
    expect(mcp("serverUrl: https://x/mcp, transportType: sse")).toContain(
      'FILE: mcp_servers.a: unknown keys "serverUrl", "transportType" — serverUrl: write url; transportType: write transport (see docs/mcp.md)',
    );
    expect(mcp("command: x, disabled: true")).toBe(
      'FILE: mcp_servers.a: unknown key "disabled" — disabled: write enabled: false for disabled: true (or remove it) (see docs/mcp.md)',
    );
    expect(mcp("command: x, cwd: /srv, autoApprove: [t], timout: 5")).toMatch(
      /^FILE: mcp_servers\.a: unknown keys "cwd", "autoApprove", "timout" — cwd: svc has no cwd: a stdio server starts in the gateway's working directory .*; autoApprove: svc has no per-tool approval list: trust: full .*; "timout": did you mean "timeout"\? \(see docs\/mcp\.md\)$/,
    );
  });
});

describe("an MCP server entry with the keys of Codex's config.toml, Gemini CLI or Roo Code", () => {
  const mcp = (entry: string) =>
    refusal(`platforms: {webhook: {enabled: true}}\nmcp_servers:\n  a: {${entry}}\n`);

  it("tool filters are named with tools.include / tools.exclude", () => {
    expect(mcp("command: x, disabled_tools: [rm]")).toBe(
      `FILE: mcp_servers.a: unknown key "disabled_tools" — disabled_tools: write tools: {exclude: [...]} (the server's own tool names, or globs) (see docs/mcp.md)`,
    );
    expect(mcp("command: x, enabled_tools: [ls], disabledTools: [rm]")).toContain(
      `enabled_tools: write tools: {include: [...]} (the server's own tool names, or globs); disabledTools: write tools: {exclude: [...]}`,
    );
    expect(mcp("httpUrl: https://x/mcp, includeTools: [a], excludeTools: [b]")).toContain(
      `httpUrl: write url; includeTools: write tools: {include: [...]} (the server's own tool names, or globs); excludeTools: write tools: {exclude: [...]}`,
    );
  });

  it("Codex's timeouts, headers and variables; a misspelling beside them keeps its did-you-mean", () => {
    expect(
      mcp(
        "url: https://x/mcp, startup_timeout_sec: 20, tool_timeout_sec: 60, http_headers: {A: b}, timout: 5",
      ),
    ).toBe(
      `FILE: mcp_servers.a: unknown keys "startup_timeout_sec", "tool_timeout_sec", "http_headers", "timout" — startup_timeout_sec: write connect_timeout (seconds); tool_timeout_sec: write timeout (seconds); http_headers: write headers; "timout": did you mean "timeout"? (see docs/mcp.md)`,
    );
    expect(mcp("command: x, timeout_seconds: 60, connect_timeout_seconds: 5, trust_level: low")).toBe(
      `FILE: mcp_servers.a: unknown keys "timeout_seconds", "connect_timeout_seconds", "trust_level" — timeout_seconds: write timeout (seconds per tool call); connect_timeout_seconds: write connect_timeout (seconds); trust_level: write trust: full or trust: untrusted (see docs/mcp.md)`,
    );
    expect(mcp("url: https://x/mcp, bearer_token_env_var: GH_TOKEN")).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      'bearer_token_env_var: write headers: {Authorization: "Bearer ${NAME}"}, with NAME in the profile\'s .env or the environment',
    );
    expect(mcp("command: x, env_vars: [GH_TOKEN]")).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      'env_vars: pass each variable as env: {NAME: "${NAME}"}',
    );
  });
});

describe("an MCP server's tools written as a list of tool names", () => {
  it("says the names go under tools.include (or exclude)", () => {
    expect(refusal("mcp_servers:\n  a: {command: x, tools: [search, get_issue]}\n")).toBe(
      'FILE: mcp_servers.a.tools: expected a mapping, got ["search","get_issue"] — a list of tool names goes under include (or exclude): write tools: {include: [search, get_issue]}',
    );
  });
});

describe("an MCP server's env or headers written as a list or text (NAME=value, Name: value)", () => {
  it("names the entries and the mapping to write, never quoting their values", () => {
    expect(refusal("mcp_servers:\n  a: {command: x, env: [GITHUB_TOKEN=ghp_s3cret99, DEBUG=1]}\n")).toBe(
      "FILE: mcp_servers.a.env: expected a mapping, got a list (not shown: env values are often credentials) — write each entry as NAME: value, env: {GITHUB_TOKEN: ..., DEBUG: ...}",
    );
    expect(
      refusal('mcp_servers:\n  a: {url: "https://x/mcp", headers: ["Authorization: Bearer sk-9f8e7d"]}\n'),
    ).toBe(
      "FILE: mcp_servers.a.headers: expected a mapping, got a list (not shown: header values are often credentials) — write each entry as NAME: value, headers: {Authorization: ...}",
    );
    expect(refusal("mcp_servers:\n  a: {command: x, env: TOKEN=abc123}\n")).toBe(
      "FILE: mcp_servers.a.env: expected a mapping, got text (not shown: env values are often credentials) — write each entry as NAME: value, env: {TOKEN: ...}",
    );
    // Entries without a name: still not quoted.
    expect(refusal("mcp_servers:\n  a: {command: x, env: [ghp_s3cret99]}\n")).toBe(
      "FILE: mcp_servers.a.env: expected a mapping, got a list (not shown: env values are often credentials) — write each entry as NAME: value",
    );
  });
});

describe("other clients' ways to write an MCP server's command and auth", () => {
  it("command as a mapping (Zed's {path, args}), auth as a token scheme, oauth as a switch: each gets what to write", () => {
    expect(refusal("mcp_servers:\n  a: {command: {path: npx, args: [-y, pkg]}}\n")).toBe(
      'FILE: mcp_servers.a.command: expected a string, got {"path":"npx","args":["-y","pkg"]} — command is the program alone, beside the entry\'s other keys: write command: npx and args: [-y, pkg]',
    );
    expect(
      refusal(
        "mcp_servers:\n  a: {command: {path: npx, args: [-y, '@scope/pkg', --api-key, ak-4242-secret]}}\n",
      ),
    ).toBe(
      "FILE: mcp_servers.a.command: expected a string, got a mapping (not shown: it may hold a credential) — command is the program alone, beside the entry's other keys: write command: npx and args: [the arguments]",
    );
    expect(refusal("mcp_servers:\n  a: {command: {path: npx, args: [-y, '@scope/pkg']}}\n")).toContain(
      'write command: npx and args: [-y, "@scope/pkg"]',
    );
    expect(refusal("mcp_servers:\n  a: {url: 'https://x/mcp', auth: bearer}\n")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      'FILE: mcp_servers.a.auth: expected one of "oauth", "none", got "bearer" — auth: oauth logs in with OAuth; a token is sent with headers: {Authorization: "Bearer ${TOKEN}"} (TOKEN in the profile\'s .env)',
    );
    expect(
      refusal("mcp_servers:\n  a: {url: 'https://x/mcp', auth: {type: bearer, token: sk-123456}}\n"),
    ).not.toContain("sk-123456");
    expect(refusal("mcp_servers:\n  a: {url: 'https://x/mcp', oauth: true}\n")).toBe(
      "FILE: mcp_servers.a.oauth: expected a mapping, got true — auth: oauth turns the login on; oauth holds its options (flow, client_id, ...): write auth: oauth",
    );
  });
});

describe("an MCP server's args written as one command line", () => {
  it("gives the list of its words (a list of the line alone would be one argument), never a credential", () => {
    expect(
      refusal(
        'mcp_servers:\n  a: {command: npx, args: "-y @modelcontextprotocol/server-github --port 8080"}\n',
      ),
    ).toBe(
      'FILE: mcp_servers.a.args: expected a list, got "-y @modelcontextprotocol/server-github --port 8080" — each argument is one entry of a list (svc starts no shell to split a line): write args: [-y, "@modelcontextprotocol/server-github", --port, 8080]',
    );
    for (const line of ["--api-key sk-live-12345", "postgresql://app:pw-777@db/app", "--name 'my server'"]) {
      const message = refusal(`mcp_servers:\n  a: {command: npx, args: ${JSON.stringify(line)}}\n`);
      expect(message).toBe(
        "FILE: mcp_servers.a.args: expected a list, got text (not shown: it may hold a credential or quoting) — each argument is one entry of a list (svc starts no shell to split a line): write one list entry per argument: args: [first, second, ...]",
      );
    }
  });
});

describe("an MCP server written as its url or command line", () => {
  it("gives the entry to write, never quoting a credential", () => {
    expect(refusal("mcp_servers:\n  gh: https://api.example.com/mcp\n")).toBe(
      'FILE: mcp_servers.gh: expected a mapping, got "https://api.example.com/mcp" — a server is a mapping of its keys: write gh: {url: https://api.example.com/mcp}',
    );
    expect(refusal("mcp_servers:\n  fs: npx -y @modelcontextprotocol/server-filesystem /data\n")).toBe(
      'FILE: mcp_servers.fs: expected a mapping, got "npx -y @modelcontextprotocol/server-filesystem /data" — a server is a mapping of its keys: write fs: {command: npx, args: [-y, "@modelcontextprotocol/server-filesystem", /data]}',
    );
    expect(refusal("mcp_servers:\n  fs: [uvx, mcp-server-git]\n")).toBe(
      'FILE: mcp_servers.fs: expected a mapping, got ["uvx","mcp-server-git"] — a server is a mapping of its keys: write fs: {command: uvx, args: [mcp-server-git]}',
    );
    expect(refusal("mcp_servers:\n  gh: https://me:pw-424242@api.example.com/mcp\n")).toBe(
      "FILE: mcp_servers.gh: expected a mapping, got text (not shown: it may hold a credential) — a server is a mapping of its keys: write gh: {url: ...}",
    );
    expect(refusal("mcp_servers:\n  c7: npx -y ctx7 --api-key ak-424242\n")).not.toContain("ak-424242");
  });
});

describe("a server entry's own key written inside its lifecycle mapping", () => {
  it("is named with where it belongs, not 'check the spelling' (it is spelled right)", () => {
    const where = (key: string) =>
      `it belongs in the server entry itself (mcp_servers.files.${key}); lifecycle holds only idle_timeout_seconds and max_lifetime_seconds`;
    expect(
      refusal(
        "mcp_servers:\n  files:\n    command: npx\n    lifecycle: {idle_timeout_seconds: 600, keepalive_interval: 30}\n",
      ),
    ).toBe(
      `FILE: mcp_servers.files.lifecycle: unknown key "keepalive_interval" — ${where("keepalive_interval")} (see docs/mcp.md)`,
    );
    expect(refusal("mcp_servers:\n  files:\n    command: npx\n    lifecycle: {lazy: true}\n")).toBe(
      `FILE: mcp_servers.files.lifecycle: unknown key "lazy" — ${where("lazy")} (see docs/mcp.md)`,
    );
    // A near miss of the two keys it holds still gets its did-you-mean; anything else, the spelling.
    expect(refusal("mcp_servers:\n  files:\n    command: npx\n    lifecycle: {idle_timeout: 600}\n")).toBe(
      'FILE: mcp_servers.files.lifecycle: unknown key "idle_timeout" — did you mean "idle_timeout_seconds"? (see docs/mcp.md)',
    );
    expect(refusal("mcp_servers:\n  files:\n    command: npx\n    lifecycle: {often: 1}\n")).toBe(
      'FILE: mcp_servers.files.lifecycle: unknown key "often" — check the spelling (see docs/mcp.md)',
    );
  });
});

describe("a delivery platform's key that this platform has not (spelled right: not 'check the spelling')", () => {
  const SEE_TARGETS = " (see docs/delivery-targets.md)";
  it("email's base_url: it connects to an SMTP server, named by host and port", () => {
    expect(
      refusal("platforms:\n  email: {host: smtp.example.com, from: a@example.com, base_url: 'http://x'}\n"),
    ).toBe(
      `FILE: platforms.email: unknown key "base_url" — email takes no base_url: it connects to the SMTP server named by host (and port, secure)${SEE_TARGETS}`,
    );
  });

  it("forge_comment's base_url and home_channel: gh reaches GitHub itself, and a comment goes to the route's pull request", () => {
    expect(refusal("platforms:\n  forge_comment: {base_url: 'https://ghe.example.com'}\n")).toBe(
      `FILE: platforms.forge_comment: unknown key "base_url" — forge_comment takes no base_url: gh reaches GitHub itself (for a GitHub Enterprise Server, write its host in deliver_extra.repo, host/owner/name, or set GH_HOST)${SEE_TARGETS}`,
    );
    // Accepted before and never read: every comment goes to the pull request of the route's repo and pr_number.
    expect(refusal("platforms:\n  forge_comment: {home_channel: 'octo/repo#1'}\n")).toBe(
      `FILE: platforms.forge_comment: unknown key "home_channel" — forge_comment has no home channel: a comment goes to the pull request the route's deliver_extra.repo and pr_number name${SEE_TARGETS}`,
    );
  });
});
