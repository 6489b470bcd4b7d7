import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import {
  isTrusted,
  jsonMcpServerSchema,
  mcpServerSchema,
  transportKind,
} from "../../../src/config/sections/mcp.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

function load(yaml: string) {
  home = tempHome();
  home.write("config.yaml", yaml);
  return loadConfig({ home: home.dir, env: {} });
}

describe("mcp_servers schema (spec 2.1, 2.2, 2.4)", () => {
  it("a server named by a ${VAR} is refused, as a route is: a name is never rendered (it was a server named ${NAME})", () => {
    expect(() => load('mcp_servers:\n  "${NAME}":\n    command: echo\n')).toThrow(
      /config\.yaml: mcp_servers\.\$\{NAME\}: invalid name — a \$\{VAR\} is replaced in values only, never in a name: write the server's name itself/,
    );
  });

  it("names the file, key and unit for a bad duration", () => {
    expect(() => load("mcp_servers:\n  github:\n    url: https://x\n    timeout: soon\n")).toThrow(
      /config\.yaml: mcp_servers\.github\.timeout: expected seconds, got "soon"/,
    );
    expect(() => load("mcp_servers:\n  g:\n    url: https://x\n    connect_timeout: 0\n")).toThrow(
      /mcp_servers\.g\.connect_timeout: expected a positive number of seconds, got 0/,
    );
    // YAML's .inf and .nan are numbers JSON has no text for: the message names them, not "null".
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    timeout: .inf\n")).toThrow(
      /mcp_servers\.g\.timeout: expected seconds, got Infinity — write a finite number of seconds; one above 2147483 /,
    );
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    connect_timeout: .nan\n")).toThrow(
      /mcp_servers\.g\.connect_timeout: expected seconds, got NaN — write a finite number of seconds;/,
    );
  });

  it("a negative value of a key that takes 0 says what it takes: 0 or more seconds", () => {
    for (const key of ["keepalive_interval", "idle_timeout_seconds", "max_lifetime_seconds"]) {
      expect(() => load(`mcp_servers:\n  g:\n    command: x\n    ${key}: -3\n`)).toThrow(
        new RegExp(`mcp_servers\\.g\\.${key}: expected 0 or more seconds, got -3$`, "m"),
      );
    }
    // A key that must be above 0 keeps its own words.
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    timeout: -3\n")).toThrow(
      /mcp_servers\.g\.timeout: expected a positive number of seconds, got -3$/m,
    );
  });

  it("a duration written with a unit (30s, 10m, 1h, 500ms) says the number of seconds to write", () => {
    let message = "";
    try {
      load(
        "mcp_servers:\n  g:\n    command: x\n    timeout: 10m\n    connect_timeout: 30s\n    keepalive_interval: 1h\n    idle_timeout_seconds: 500ms\n    elicitation: {timeout: 2 minutes}\n",
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'mcp_servers.g.timeout: expected seconds, got "10m" — write the number of seconds alone: 600',
    );
    expect(message).toContain(
      'connect_timeout: expected seconds, got "30s" — write the number of seconds alone: 30',
    );
    expect(message).toContain(
      'keepalive_interval: expected seconds, got "1h" — write the number of seconds alone: 3600',
    );
    expect(message).toContain(
      'idle_timeout_seconds: expected seconds, got "500ms" — write the number of seconds alone: 0.5',
    );
    expect(message).toContain(
      'elicitation.timeout: expected seconds, got "2 minutes" — write the number of seconds alone: 120',
    );
    // Go's durations (Codex and Go servers write them so): the parts are added up.
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    timeout: 1h30m\n")).toThrow(
      /mcp_servers\.g\.timeout: expected seconds, got "1h30m" — write the number of seconds alone: 5400$/m,
    );
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    connect_timeout: 2m 30s\n")).toThrow(
      /connect_timeout: expected seconds, got "2m 30s" — write the number of seconds alone: 150$/m,
    );
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    timeout: 1h 5 days\n")).toThrow(
      /mcp_servers\.g\.timeout: expected seconds, got "1h 5 days"$/m,
    );
    expect(() => load("mcp_servers:\n  g:\n    command: x\n    timeout: 5 days\n")).toThrow(
      /mcp_servers\.g\.timeout: expected seconds, got "5 days"$/m,
    );
  });

  it("a bad sampling value is named by the key as written, also max_tokens_cap and max_rpm", () => {
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    sampling: { max_rpm: 0 }\n")).toThrow(
      /mcp_servers\.a\.sampling\.max_rpm: expected more than 0, got 0/,
    );
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    sampling: { max_tokens_cap: -5 }\n")).toThrow(
      /mcp_servers\.a\.sampling\.max_tokens_cap: expected more than 0, got -5/,
    );
    const { config } = load(
      "mcp_servers:\n  a:\n    command: x\n    sampling: { max_tokens: 7, max_tokens_cap: 9, max_rpm: 3 }\n",
    );
    expect(config.mcp_servers.a?.sampling).toEqual({
      enabled: false,
      max_tokens: 7,
      max_requests_per_minute: 3,
      timeout: 300,
    });
    expect(load("mcp_servers:\n  a:\n    command: x\n").config.mcp_servers.a?.sampling).toEqual({
      enabled: false,
      max_tokens: 4096,
      max_requests_per_minute: 10,
      timeout: 300,
    });
  });

  it("an env or headers key without a value names the key and says how to write an empty string", () => {
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    env:\n      DEBUG:\n")).toThrow(
      /mcp_servers\.a\.env\.DEBUG: has no value — write KEY: "" for an empty string, or remove the key/,
    );
    expect(() => load("mcp_servers:\n  a:\n    url: https://x\n    headers: { X-Team: [a, b] }\n")).toThrow(
      /mcp_servers\.a\.headers\.X-Team: expected a string, got \["a","b"\]/,
    );
  });

  it("a header name HTTP cannot carry fails at load naming it", () => {
    expect(() => load('mcp_servers:\n  a:\n    url: https://x\n    headers: { "X Api Key": v }\n')).toThrow(
      /mcp_servers\.a\.headers\.X Api Key: .*"X Api Key" is not a valid HTTP header name/,
    );
    expect(() =>
      load('mcp_servers:\n  a:\n    url: https://x\n    headers: { "Authorization:": v }\n'),
    ).toThrow(/"Authorization:" is not a valid HTTP header name/);
    expect(
      load("mcp_servers:\n  a:\n    url: https://x\n    headers: { X-Api-Key: v, x_trace: t }\n"),
    ).toBeDefined();
  });

  it("needs exactly one of command and url", () => {
    expect(() => load("mcp_servers:\n  a: {}\n")).toThrow(/mcp_servers\.a: needs command .* or url/);
    expect(() => load("mcp_servers:\n  a: {command: x, url: https://y}\n")).toThrow(
      /mcp_servers\.a: has both command and url/,
    );
  });

  it("a command of spaces alone is refused as an empty one is (every start would fail: command not found), named once", () => {
    let message = "";
    try {
      load('mcp_servers:\n  a:\n    command: "   "\n');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/mcp_servers\.a\.command: is only spaces — write the program to run/);
    expect(() => load('mcp_servers:\n  a:\n    command: ""\n')).toThrow(
      /mcp_servers\.a\.command: must not be empty — write a value, or leave the key out$/,
    );
    expect(mcpServerSchema.safeParse({ command: " node" }).success).toBe(true);
  });

  it("rejects unknown keys and bad enum values by name", () => {
    expect(() => load("mcp_servers:\n  a: {command: x, timout: 3}\n")).toThrow(
      /mcp_servers\.a: unknown key "timout"/,
    );
    expect(() => load("mcp_servers:\n  a: {command: x, protocol: modern}\n")).toThrow(
      /mcp_servers\.a\.protocol: expected one of "auto", "stateless", "legacy"/,
    );
    expect(() => load("mcp_servers:\n  a: {url: https://x, client_cert: [a]}\n")).toThrow(
      /client_cert: expected a PEM path, \[cert, key\] or \[cert, key, password\]/,
    );
  });

  it("a wrong client_cert list is described without its password entry", () => {
    let message = "";
    try {
      // Four entries (a numeric password alone is taken as written: [c.pem, k.pem, 12345678] is valid).
      load("mcp_servers:\n  a: {url: https://x, client_cert: [c.pem, k.pem, 12345678, extra]}\n");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'client_cert: expected a PEM path, [cert, key] or [cert, key, password], got a list of 4 entries, ["c.pem", "k.pem", …]',
    );
    expect(message).not.toContain("12345678");
  });

  it("applies the spec defaults", () => {
    const { config } = load("mcp_servers:\n  a: {command: x}\n");
    expect(config.mcp_servers.a).toMatchObject({
      enabled: true,
      timeout: 300,
      connect_timeout: 60,
      protocol: "auto",
      supports_parallel_tool_calls: false,
      skip_preflight: false,
      lazy: false,
      idle_timeout_seconds: 0,
      max_lifetime_seconds: 0,
      ssl_verify: true,
      trust: "full",
      tools: { resources: false, prompts: false },
      sampling: { enabled: false },
      elicitation: { enabled: true, timeout: 300, unattended: "decline" },
    });
    expect(config.mcp_servers.a?.keepalive_interval).toBeUndefined();
  });

  it("a key with nothing under it (its lines commented out) counts as absent, as a route's does", () => {
    const loaded = load(
      "mcp_servers:\n  a:\n    command: x\n    env:\n      # TOKEN: x\n    headers:\n    tools:\n      include:\n      # - search\n      resources:\n    sampling:\n    trust:\n",
    );
    expect(loaded.config.mcp_servers.a).toMatchObject({
      env: {},
      headers: {},
      tools: { resources: false, prompts: false },
      trust: "full",
      sampling: { enabled: false },
    });
    expect(loaded.config.mcp_servers.a?.tools.include).toBeUndefined();
    // An entry with nothing under it has neither command nor url.
    expect(() => load("mcp_servers:\n  a:\n")).toThrow(
      "mcp_servers.a: needs command (a local stdio server) or url (a remote server)",
    );
  });

  it("refuses an env name holding = (the OS would set another variable: T_A=1: x sets T_A to 1=x) or an empty one", () => {
    expect(() => load('mcp_servers:\n  a:\n    command: x\n    env: {"T_A=1": x}\n')).toThrow(
      'mcp_servers.a.env.T_A=1: invalid name — "T_A=1" is not a variable name (a name is not empty and holds no "=") — write NAME: value',
    );
    expect(() => load('mcp_servers:\n  a:\n    command: x\n    env: {"": x}\n')).toThrow(
      /mcp_servers\.a\.env\.: invalid name — "" is not a variable name/,
    );
  });

  it("refuses a list or mapping as a bool-like tool flag (String([true]) would read as true)", () => {
    for (const [written, shown] of [
      ["[true]", "[true]"],
      ["[]", "[]"],
      ["{on: 1}", '{"on":1}'],
    ])
      expect(() => load(`mcp_servers:\n  a:\n    command: x\n    tools: {resources: ${written}}\n`)).toThrow(
        `mcp_servers.a.tools.resources: expected true or false, got ${shown}`,
      );
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    tools: {prompts: [yes]}\n")).toThrow(
      'mcp_servers.a.tools.prompts: expected true or false, got ["yes"]',
    );
  });

  it("accepts lifecycle: as an alternative location, bool-like tool flags and string include", () => {
    const { config } = load(
      "mcp_servers:\n  a:\n    command: x\n    lifecycle: {idle_timeout_seconds: 30, max_lifetime_seconds: 600}\n    tools: {include: 'git_*', resources: yes, prompts: 'off'}\n",
    );
    expect(config.mcp_servers.a).toMatchObject({
      idle_timeout_seconds: 30,
      max_lifetime_seconds: 600,
      tools: { include: ["git_*"], resources: true, prompts: false },
    });
  });

  it("takes a number or boolean in tools.include / tools.exclude as the text written (a tool named 7, 3.10 or True)", () => {
    const { config } = load(
      "mcp_servers:\n  a:\n    command: x\n    tools: {include: [2024, 3.10, 0755, 0x1F, 1e3, true, True, 12345678901234567890123, 'q']}\n" +
        "  b:\n    command: x\n    tools:\n      include: 7\n      exclude:\n        - 1.50\n        - FALSE\n" +
        "  c:\n    command: x\n    tools: {exclude: 3.10}\n",
    );
    expect(config.mcp_servers.a?.tools.include).toEqual([
      "2024",
      "3.10",
      "0755",
      "0x1F",
      "1e3",
      "true",
      "True",
      "12345678901234567890123",
      "q",
    ]);
    expect(config.mcp_servers.b?.tools).toMatchObject({ include: ["7"], exclude: ["1.50", "FALSE"] });
    expect(config.mcp_servers.c?.tools.exclude).toEqual(["3.10"]);
    // A null word in a list is its text, as True is; an entry written ~ (or left empty) names no tool: refused.
    expect(
      load("mcp_servers:\n  a:\n    command: x\n    tools: {include: [Null, null, 7]}\n").config.mcp_servers.a
        ?.tools.include,
    ).toEqual(["Null", "null", "7"]);
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    tools: {include: [a, ~]}\n")).toThrow(
      `mcp_servers.a.tools.include: expected a tool name, a glob, or a list of them, got ["a",null] — an entry left empty or written ~ (null to YAML) names no tool: remove it, or put '~' in quotes if it is meant as text`,
    );
  });

  it("a number or boolean tool name from JSON (an install link's entry), whose text is not known, is refused with the fix", () => {
    const message = (tools: unknown) => {
      const parsed = mcpServerSchema.safeParse({ command: "x", tools }, { reportInput: true });
      return parsed.success ? "accepted" : parsed.error.issues.map((issue) => issue.message).join("\n");
    };
    expect(message({ include: 7 })).toBe(
      "expected a tool name, a glob, or a list of them, got 7 — put it in quotes if it is meant as text",
    );
    expect(message({ exclude: [true] })).toBe(
      "expected a tool name, a glob, or a list of them, got [true] — put true in quotes if it is meant as text",
    );
    expect(message({ include: ["a", 7, 1.5, false, 2] })).toBe(
      'expected a tool name, a glob, or a list of them, got ["a",7,1.5,false,2] — put 7, 1.5, false and 1 more in quotes if they are meant as text',
    );
    // No number or boolean: no such advice.
    expect(message({ include: { a: 1 } })).toBe(
      'expected a tool name, a glob, or a list of them, got {"a":1}',
    );
  });

  // Seen: {"include": null, "exclude": ["delete_all"]} told to "remove the key to expose every tool of the server",
  // though exclude still leaves delete_all out once include is removed.
  it("a null alone as tools.include or exclude (JSON) says what removing the key leads to, with the filter written beside it", () => {
    const messages = (tools: unknown) => {
      const parsed = jsonMcpServerSchema.safeParse({ command: "x", tools }, { reportInput: true });
      return parsed.success
        ? ["accepted"]
        : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    const got =
      "tools.include: expected a tool name, a glob, or a list of them, got null — a null names no tool:";
    const gotExclude = got.replace("tools.include", "tools.exclude");
    expect(messages({ include: null, exclude: ["delete_all"] })).toEqual([
      `${got} remove the key to let exclude alone filter the tools, or name the tools to expose`,
    ]);
    expect(messages({ include: ["search"], exclude: null })).toEqual([
      `${gotExclude} remove the key to let include alone filter the tools, or name the tools to leave out`,
    ]);
    // Alone, or beside another null (removed too), removing it leaves no filter of its own.
    expect(messages({ include: null, resources: true })).toEqual([
      `${got} remove the key to expose every tool of the server, or name the tools to expose`,
    ]);
    expect(messages({ include: null, exclude: null })).toEqual([
      `${got} remove the key to expose every tool of the server, or name the tools to expose`,
      `${gotExclude} remove the key to leave no tool out, or name the tools to leave out`,
    ]);
    // Said beside the other filter's own refusal, and beside a key svc does not know.
    expect(messages({ include: null, exclude: [7] })).toEqual([
      "tools.exclude: expected a tool name, a glob, or a list of them, got [7] — put 7 in quotes if it is meant as text",
      `${got} remove the key to let exclude alone filter the tools, or name the tools to expose`,
    ]);
    expect(messages({ include: null, Exclude: ["x"] })).toEqual([
      'tools: Unrecognized key: "Exclude"',
      `${got} remove the key to expose every tool of the server, or name the tools to expose`,
    ]);
    // A filter written is read as before.
    const entry = jsonMcpServerSchema.parse({ command: "x", tools: { include: "a", exclude: ["b"] } });
    expect(entry.tools).toEqual({ include: ["a"], exclude: ["b"], resources: false, prompts: false });
  });

  // Seen: {"include": null, "exclude": []} told to "remove the key to let exclude alone filter the tools": an empty
  // exclude leaves no tool out, so following it exposed every tool of the server without a word saying so.
  it("a null include beside an empty exclude says that removing it exposes every tool; an empty include still filters", () => {
    const messages = (tools: unknown) => {
      const parsed = jsonMcpServerSchema.safeParse({ command: "x", tools }, { reportInput: true });
      return parsed.success
        ? ["accepted"]
        : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    const got =
      "tools.include: expected a tool name, a glob, or a list of them, got null — a null names no tool:";
    const gotExclude = got.replace("tools.include", "tools.exclude");
    expect(messages({ include: null, exclude: [] })).toEqual([
      `${got} remove the key to expose every tool of the server, or name the tools to expose`,
    ]);
    // An empty include exposes no tool: it alone filters once the null exclude is removed.
    expect(messages({ include: [], exclude: null })).toEqual([
      `${gotExclude} remove the key to let include alone filter the tools, or name the tools to leave out`,
    ]);
  });

  it("reads y and n (YAML 1.1's short booleans, text in YAML 1.2) as bool-like tool flags", () => {
    const { config } = load("mcp_servers:\n  a:\n    command: x\n    tools: {resources: y, prompts: N}\n");
    expect(config.mcp_servers.a?.tools).toMatchObject({ resources: true, prompts: false });
  });

  it("names a bad value under lifecycle: where it is written (lifecycle.<key>), not as a top-level key", () => {
    expect(() =>
      load(
        "mcp_servers:\n  a:\n    command: x\n    lifecycle: {idle_timeout_seconds: soon, max_lifetime_seconds: 5}\n",
      ),
    ).toThrow(/mcp_servers\.a\.lifecycle\.idle_timeout_seconds: expected seconds, got "soon"/);
    expect(() =>
      load("mcp_servers:\n  a:\n    command: x\n    lifecycle: {max_lifetime_seconds: -1}\n"),
    ).toThrow(/mcp_servers\.a\.lifecycle\.max_lifetime_seconds: expected 0 or more seconds, got -1/);
    // A top-level key still wins over a good lifecycle value.
    const { config } = load(
      "mcp_servers:\n  a:\n    command: x\n    idle_timeout_seconds: 7\n    lifecycle: {idle_timeout_seconds: 30}\n",
    );
    expect(config.mcp_servers.a?.idle_timeout_seconds).toBe(7);
  });

  it("keeps ${VAR} raw: rendering happens at connect time", () => {
    const { config } = load(
      "mcp_servers:\n  a:\n    url: https://x/${TOKEN}\n    headers: {Authorization: 'Bearer ${TOKEN}'}\n",
    );
    expect(config.mcp_servers.a?.url).toBe("https://x/${TOKEN}");
    expect(config.mcp_servers.a?.headers.Authorization).toBe("Bearer ${TOKEN}");
  });

  it("accepts every oauth key of 2.4 and ignores an empty user_agent", () => {
    const { config } = load(
      [
        "mcp_servers:",
        "  o:",
        "    url: https://x",
        "    auth: oauth",
        "    oauth:",
        "      flow: device",
        "      timeout: 120",
        "      client_id: cid",
        "      client_secret: ${CS}",
        "      token_endpoint_auth_method: client_secret_post",
        "      client_name: svc",
        "      scope: [read, write]",
        "      redirect_uri: http://127.0.0.1:9999/callback",
        "      redirect_port: 9999",
        "      client_metadata_url: https://me.example/client.json",
        "      cimd: false",
        "      user_agent: ''",
        "",
      ].join("\n"),
    );
    expect(config.mcp_servers.o?.oauth).toMatchObject({
      flow: "device",
      timeout: 120,
      scope: "read write",
      redirect_port: 9999,
      cimd: false,
    });
    expect(config.mcp_servers.o?.oauth?.user_agent).toBeUndefined();
    expect(() => load("mcp_servers:\n  c: {command: x, auth: oauth}\n")).toThrow(
      /mcp_servers\.c\.auth: oauth applies to url servers only/,
    );
  });

  it("refuses an oauth.user_agent no HTTP header can carry (outside Latin-1, a line break), naming the key", () => {
    const entry = (ua: string) =>
      `mcp_servers:\n  o:\n    url: https://x\n    auth: oauth\n    oauth:\n      user_agent: ${JSON.stringify(ua)}\n`;
    expect(() => load(entry("MyAgent \u2713 1.0"))).toThrow(
      /mcp_servers\.o\.oauth\.user_agent: contains "\u2713" \(U\+2713\), a character outside Latin-1, which an HTTP header cannot carry, so every token request would fail — write it in ASCII/,
    );
    expect(() => load(entry("MyAgent\n1.0"))).toThrow(
      /mcp_servers\.o\.oauth\.user_agent: contains a control character \(U\+000A\)/,
    );
    // Latin-1 and a tab are sent as they are.
    expect(load(entry("Agent\u00e9\t1.0")).config.mcp_servers.o?.oauth?.user_agent).toBe("Agent\u00e9\t1.0");
  });

  it("renders ${VAR} in the text keys checked at load (transport, protocol, durations, tools switches, oauth.flow)", () => {
    home = tempHome();
    home.write(".env", "T=sse\nTO=2.5\nR=yes\nF=device\n");
    home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  a:",
        "    url: https://x/sse",
        '    transport: "${T}"',
        '    protocol: "${PROTO:-legacy}"',
        '    timeout: "${TO}"',
        '    connect_timeout: "${env:CT}"',
        '    tools: { resources: "${R}", prompts: "${R}" }',
        "    auth: oauth",
        '    oauth: { flow: "${F}" }',
        "  b:",
        "    command: x",
        '    type: "${STDIO}"',
        "",
      ].join("\n"),
    );
    const { config } = loadConfig({ home: home.dir, env: { CT: "7", STDIO: "stdio" } });
    const a = config.mcp_servers.a;
    expect(a && transportKind(a)).toBe("sse");
    expect(a).toMatchObject({
      protocol: "legacy",
      timeout: 2.5,
      connect_timeout: 7,
      tools: { resources: true, prompts: true },
    });
    expect(a?.oauth?.flow).toBe("device");
    expect(config.mcp_servers.b?.transport).toBe("stdio");
  });

  it("a text key checked at load whose ${VAR} is not set names it and the .env to set it in; a rendered value is never quoted", () => {
    home = tempHome();
    home.write(".env", "TO=soon\nP=modern\n");
    const file = home.write(
      "config.yaml",
      'mcp_servers:\n  a:\n    url: https://x\n    transport: "${T}"\n    timeout: "${TO}"\n    protocol: "${P}"\n    enabled: "${E}"\n',
    );
    let message = "";
    try {
      loadConfig({ home: home.dir, env: { E: "true" } });
    } catch (err) {
      message = (err as Error).message.replaceAll(file, "FILE").replaceAll(home.dir, "HOME");
    }
    expect(message).toContain(
      "FILE: mcp_servers.a.transport: ${T} is not set — set T in HOME/.env or the environment",
    );
    expect(message).toContain(
      'FILE: mcp_servers.a.timeout: expected seconds, got "${TO}" (the value it gives is not shown)',
    );
    expect(message).toMatch(
      /FILE: mcp_servers\.a\.protocol: expected one of .*, got "\$\{P\}" \(the value it gives is not shown\)/,
    );
    // A boolean is not text: written out, as everywhere in config.yaml.
    expect(message).toContain(
      'FILE: mcp_servers.a.enabled: expected true or false, got "${E}" (the value it gives is not shown) — a ${VAR} always gives text',
    );
    expect(message).not.toMatch(/soon|modern/);
  });

  it("a scope that is neither a string nor a list of them names the key and both forms", () => {
    const oauth = (scope: string) =>
      load(`mcp_servers:\n  o:\n    url: https://x\n    auth: oauth\n    oauth: { scope: ${scope} }\n`);
    expect(() => oauth("5")).toThrow(
      /mcp_servers\.o\.oauth\.scope: expected a scope or a list of scopes \(read write, or \[read, write\]\), got 5$/m,
    );
    expect(() => oauth("[1]")).toThrow(
      /mcp_servers\.o\.oauth\.scope: expected a scope or a list of scopes .*got \[1\]$/m,
    );
  });

  it("refuses private_key_jwt and a secret-based auth method without client_secret, naming the key", () => {
    const oauth = (lines: string) =>
      load(`mcp_servers:\n  o:\n    url: https://x\n    auth: oauth\n    oauth:\n${lines}`);
    expect(() => oauth("      client_id: c\n      token_endpoint_auth_method: private_key_jwt\n")).toThrow(
      /mcp_servers\.o\.oauth\.token_endpoint_auth_method: private_key_jwt is not supported .* use client_secret_jwt/,
    );
    expect(() => oauth("      client_id: c\n      token_endpoint_auth_method: client_secret_jwt\n")).toThrow(
      /mcp_servers\.o\.oauth\.client_secret: missing — token_endpoint_auth_method client_secret_jwt needs/,
    );
    for (const method of ["none", "client_secret_basic", "client_secret_post", "client_secret_jwt"]) {
      const secret = method === "none" ? "" : "      client_secret: s\n";
      const { config } = oauth(`      client_id: c\n${secret}      token_endpoint_auth_method: ${method}\n`);
      expect(config.mcp_servers.o?.oauth?.token_endpoint_auth_method).toBe(method);
    }
  });

  it("treats trust values other than full as untrusted, and picks the transport", () => {
    const parse = (raw: Record<string, unknown>) => mcpServerSchema.parse(raw);
    expect(isTrusted(parse({ command: "x" }))).toBe(true);
    expect(isTrusted(parse({ command: "x", trust: "untrusted" }))).toBe(false);
    expect(isTrusted(parse({ command: "x", trust: "mostly" }))).toBe(false);
    // Only full as written: another case or padding is an unrecognized value, so untrusted (fails safe).
    expect(isTrusted(parse({ command: "x", trust: "full" }))).toBe(true);
    expect(isTrusted(parse({ command: "x", trust: "Full" }))).toBe(false);
    expect(isTrusted(parse({ command: "x", trust: "FULL" }))).toBe(false);
    expect(isTrusted(parse({ command: "x", trust: " full " }))).toBe(false);
    expect(transportKind(parse({ command: "x" }))).toBe("stdio");
    expect(transportKind(parse({ url: "https://x" }))).toBe("http");
    expect(transportKind(parse({ url: "https://x", transport: "sse" }))).toBe("sse");
  });

  it("accepts transport as other clients' configs write it (stdio, http) and refuses one that contradicts command/url", () => {
    const parse = (raw: Record<string, unknown>) => mcpServerSchema.parse(raw);
    expect(transportKind(parse({ command: "x", transport: "stdio" }))).toBe("stdio");
    expect(transportKind(parse({ url: "https://x", transport: "streamable-http" }))).toBe("http");
    expect(() => load("mcp_servers:\n  a:\n    url: https://x\n    transport: stdio\n")).toThrow(
      /mcp_servers\.a\.transport: stdio applies to command \(stdio\) servers only/,
    );
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    transport: sse\n")).toThrow(
      /mcp_servers\.a\.transport: sse applies to url servers only/,
    );
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    transport: http\n")).toThrow(
      /mcp_servers\.a\.transport: http applies to url servers only/,
    );
  });

  it("names a transport written as type: (as Claude Code and VS Code write it) at type, the key the file has", () => {
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    type: http\n")).toThrow(
      /mcp_servers\.a\.type: http applies to url servers only/,
    );
    expect(() => load("mcp_servers:\n  a:\n    url: https://x\n    type: stdio\n")).toThrow(
      /mcp_servers\.a\.type: stdio applies to command \(stdio\) servers only/,
    );
    expect(() => load("mcp_servers:\n  a:\n    url: https://x\n    type: websocket\n")).toThrow(
      /mcp_servers\.a\.type: expected one of .*got "websocket"/,
    );
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    type: sse\n")).toThrow(
      /mcp_servers\.a\.type: sse applies to url servers only/,
    );
    // Written as transport, it is named so.
    expect(() => load("mcp_servers:\n  a:\n    command: x\n    transport: sse\n")).toThrow(
      /mcp_servers\.a\.transport: sse applies to url servers only/,
    );
  });
});
