import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  buildToolset,
  isReadOnly,
  longNameWarning,
  mergeToolsets,
  registeredName,
  sanitize,
  selectTools,
  unmatchedFilters,
  unregisteredListedReason,
} from "../../../src/actors/mcp/toolNames.js";
import { modelToolName } from "../../../src/agent/sdkTools.js";
import { lostToCrossServer } from "../../../src/cli/mcp/crossServer.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";

const tool = (name: string, annotations?: Record<string, unknown>): Tool =>
  ({ name, inputSchema: { type: "object" }, ...(annotations ? { annotations } : {}) }) as Tool;
const policy = (tools: Record<string, unknown>) => mcpServerSchema.parse({ command: "x", tools }).tools;
const names = (tools: Array<{ name: string }>) => tools.map((t) => t.name);

describe("tool names (spec 2.5)", () => {
  it("prefixes mcp__<server>__<tool> and replaces every character outside [A-Za-z0-9_]", () => {
    expect(registeredName("git-hub.io", "search.issues-v2")).toBe("mcp__git_hub_io__search_issues_v2");
    expect(sanitize("ünï côde/é")).toBe("_n__c_de__");
    // One underscore per character, also for characters outside the BMP (two UTF-16 code units).
    expect(sanitize("deploy🚀now")).toBe("deploy_now");
    expect(registeredName("𝔣iles", "read𐐷")).toBe("mcp___iles__read_");
  });

  it("accepts readOnlyHint and read_only_hint", () => {
    expect(isReadOnly(tool("a", { readOnlyHint: true }))).toBe(true);
    expect(isReadOnly(tool("a", { read_only_hint: true }))).toBe(true);
    expect(isReadOnly(tool("a", { readOnlyHint: false }))).toBe(false);
    expect(isReadOnly(tool("a"))).toBe(false);
    expect(isReadOnly({ ...tool("a"), read_only_hint: true } as Tool)).toBe(true);
    // MCP's own annotations.readOnlyHint, written as a boolean, decides over the other spellings.
    expect(isReadOnly(tool("a", { readOnlyHint: false, read_only_hint: true }))).toBe(false);
    expect(isReadOnly({ ...tool("a", { readOnlyHint: false }), readOnlyHint: true } as Tool)).toBe(false);
    expect(isReadOnly(tool("a", { readOnlyHint: "no", read_only_hint: true }))).toBe(true);
  });
});

describe("what a command agent's MCP client is listed of a tool", () => {
  it("keeps title, MCP's annotations and an object outputSchema; leaves out values a client would refuse the list for", () => {
    const listed = [
      {
        name: "ok",
        title: "Fine tool",
        inputSchema: { type: "object" },
        outputSchema: { type: "object", properties: { v: { type: "number" } } },
        annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false, custom: 1 },
      },
      {
        name: "odd",
        title: 7,
        inputSchema: { type: "object" },
        outputSchema: { type: "array" },
        annotations: { readOnlyHint: "yes", idempotentHint: "no", read_only_hint: true },
      },
    ] as unknown as Tool[];
    const [ok, odd] = buildToolset("s", listed, { resources: false, prompts: false }, policy({})).tools;
    expect(ok).toMatchObject({
      title: "Fine tool",
      outputSchema: { type: "object", properties: { v: { type: "number" } } },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    });
    expect(ok?.annotations).not.toHaveProperty("custom");
    expect(odd).not.toHaveProperty("title");
    expect(odd).not.toHaveProperty("outputSchema");
    expect(odd?.annotations).toEqual({ readOnlyHint: true });
  });
});

describe("tools policy (spec 2.2)", () => {
  const all = [tool("git.log"), tool("git.push"), tool("web-fetch"), tool("shell")];
  it("rule 1: include registers only matches (exact names and globs)", () => {
    expect(names(selectTools(all, policy({ include: ["git.*", "shell"] })))).toEqual([
      "git.log",
      "git.push",
      "shell",
    ]);
  });
  it("rule 2: exclude alone removes matches", () => {
    expect(names(selectTools(all, policy({ exclude: "git.p*" })))).toEqual(["git.log", "web-fetch", "shell"]);
  });
  it("rule 3: include wins, exclude is ignored", () => {
    expect(names(selectTools(all, policy({ include: "git.*", exclude: "git.log" })))).toEqual([
      "git.log",
      "git.push",
    ]);
  });
  it("globs match characters, not UTF-16 code units: ? and [!...] take one emoji", () => {
    const tools = [tool("ship🚀"), tool("ship-"), tool("ship"), tool("a-b"), tool("a/b")];
    expect(names(selectTools(tools, policy({ include: "ship?" })))).toEqual(["ship🚀", "ship-"]);
    expect(names(selectTools(tools, policy({ include: "ship[!-]" })))).toEqual(["ship🚀"]);
    expect(names(selectTools(tools, policy({ include: ["a-?", "a/*"] })))).toEqual(["a-b", "a/b"]);
    const brackets = [tool("x]"), tool("xa"), tool("x["), tool("xb")];
    expect(names(selectTools(brackets, policy({ include: "x[]a]" })))).toEqual(["x]", "xa"]);
    expect(names(selectTools(brackets, policy({ include: "x[![]" })))).toEqual(["x]", "xa", "xb"]);
  });

  it("rule 6: filters use the original names with hyphens and dots, not sanitized ones", () => {
    expect(names(selectTools(all, policy({ include: "web_fetch" })))).toEqual([]);
    expect(names(selectTools(all, policy({ include: "web-fetch" })))).toEqual(["web-fetch"]);
    expect(names(selectTools(all, policy({ include: "web?fetch" })))).toEqual(["web-fetch"]);
  });
  it("an include or exclude entry that matches no tool is reported, with the server's own name when a sanitized one was written", () => {
    expect(unmatchedFilters(all, policy({ include: ["web_fetch", "git.*", "nope"] }))).toEqual([
      'tools.include: "web_fetch" matches no tool of this server — filters use the server\'s own names: did you mean "web-fetch"?',
      // svc mcp tools shows the registered tools only, which leaves out what include does not name: the
      // server's names are listed here.
      'tools.include: "nope" matches no tool of this server — filters use the server\'s own names: it lists "git.log", "git.push", "web-fetch", "shell"',
    ]);
    const many = Array.from({ length: 13 }, (_, i) => tool(`tool-${i + 1}`));
    expect(unmatchedFilters(many, policy({ include: "nope" }))).toEqual([
      'tools.include: "nope" matches no tool of this server — filters use the server\'s own names: it lists "tool-1", "tool-2", "tool-3", "tool-4", "tool-5", "tool-6", "tool-7", "tool-8", "tool-9", "tool-10" and 3 more',
    ]);
    // An exclude entry leaves every tool registered: svc mcp tools shows them all.
    expect(unmatchedFilters(all, policy({ exclude: "shel" }))).toEqual([
      'tools.exclude: "shel" matches no tool of this server — filters use the server\'s own names (svc mcp tools <server> shows them)',
    ]);
    // Matching is case-sensitive, as fnmatchcase: another case gets the server's spelling.
    expect(unmatchedFilters(all, policy({ include: ["Web-Fetch", "GIT_LOG"] }))).toEqual([
      'tools.include: "Web-Fetch" matches no tool of this server — filters use the server\'s own names: did you mean "web-fetch"?',
      'tools.include: "GIT_LOG" matches no tool of this server — filters use the server\'s own names: did you mean "git.log"?',
    ]);
    // A registered name written for the server's own (as Claude Code's allow lists write tools).
    expect(unmatchedFilters(all, policy({ include: ["mcp__web__web_fetch"] }))).toEqual([
      'tools.include: "mcp__web__web_fetch" matches no tool of this server — filters use the server\'s own names: did you mean "web-fetch"?',
    ]);
    // Several names in one text: one pattern, commas and all.
    expect(unmatchedFilters(all, policy({ include: "web-fetch, git.*" }))).toEqual([
      'tools.include: "web-fetch, git.*" matches no tool of this server — it is one name with commas in it: a list is written in brackets, tools.include: [web-fetch, git.*]',
    ]);
    // Rule 3: exclude is ignored when include is set: said once, its entries not checked.
    expect(unmatchedFilters(all, policy({ include: "shell", exclude: "nope" }))).toEqual([
      "tools.exclude is ignored because tools.include is set (include wins) — remove one of them",
    ]);
  });

  it("a filter entry naming a utility tool says filters do not apply to it and which switch does", () => {
    expect(unmatchedFilters(all, policy({ exclude: ["read_resource", "Get-Prompt"] }))).toEqual([
      'tools.exclude: "read_resource" matches no tool of this server — read_resource is a utility tool of tools.resources, which filters do not apply to (they match the server\'s own tools): tools.resources switches list_resources and read_resource on or off together',
      'tools.exclude: "Get-Prompt" matches no tool of this server — get_prompt is a utility tool of tools.prompts, which filters do not apply to (they match the server\'s own tools): tools.prompts switches list_prompts and get_prompt on or off together',
    ]);
    // A server tool of that name is filtered as any other.
    expect(unmatchedFilters([tool("read_resource")], policy({ exclude: "read_resource" }))).toEqual([]);
  });

  it("a registered name past 64 characters: the warning says model runs offer it shortened, not that the API refuses it", () => {
    const server = "s".repeat(50);
    expect(longNameWarning(server, [{ name: `mcp__${server}__echo` }])).toBeUndefined();
    expect(
      longNameWarning(server, [
        { name: `mcp__${server}__write_note` },
        { name: `mcp__${server}__add_all_x` },
      ]),
    ).toBe(
      `${server}: mcp__${server}__write_note, mcp__${server}__add_all_x are longer than 64 characters, the limit of the OpenAI and Anthropic APIs' tool names: model runs offer them shortened (the first 55 characters, _ and a hash), a command agent's MCP client gets them whole — a shorter server name or tools.exclude keeps them as registered`,
    );
    // What a model run offers (sdkTools' modelToolName): 64 characters.
    expect(modelToolName(`mcp__${server}__write_note`)).toHaveLength(64);
  });

  it("include: [] is set (rule 1), so it registers no tool: said, since no entry of it can be reported", () => {
    expect(names(selectTools(all, policy({ include: [] })))).toEqual([]);
    expect(unmatchedFilters(all, policy({ include: [] }))).toEqual([
      `tools.include is an empty list, so none of the server's ${all.length} tools is registered — list the tools to register, or remove tools.include to register them all`,
    ]);
    expect(unmatchedFilters([], policy({ include: [] }))).toEqual([]);
    expect(unmatchedFilters(all, policy({ exclude: [] }))).toEqual([]);
  });

  it("a listed tool that is not registered is explained by the filter that leaves it out or the collision it lost", () => {
    const collisions = ['s: "a_b" and "a-b" both register as mcp__s__a_b; "a_b" is skipped'];
    expect(unregisteredListedReason("shell", policy({ include: "web-*" }), [])).toBe(
      'the server lists it, but tools.include leaves it out — add "shell" to tools.include',
    );
    expect(unregisteredListedReason("shell", policy({ exclude: ["sh*"] }), [])).toBe(
      "the server lists it, but tools.exclude leaves it out — remove its entry from tools.exclude",
    );
    expect(unregisteredListedReason("a_b", policy({}), collisions)).toBe(
      'it lost a name collision: "a_b" and "a-b" both register as mcp__s__a_b; "a_b" is skipped',
    );
    expect(unregisteredListedReason("a-b", policy({}), collisions)).toBeUndefined();
  });

  it("an entry holding a ${VAR} nothing set (the policy is rendered) names the variable, not the tool names", () => {
    expect(unmatchedFilters(all, policy({ exclude: ["${DENY}", "x-${A}-${env:B}"] }))).toEqual([
      'tools.exclude: "${DENY}" matches no tool of this server — ${DENY} is not set, so it stands as written: add DENY=... to the profile\'s .env or the environment',
      'tools.exclude: "x-${A}-${env:B}" matches no tool of this server — ${A}, ${B} are not set, so it stands as written: add A=..., B=... to the profile\'s .env or the environment',
    ]);
  });

  it("rule 4: utility tools only when enabled and the capability exists", () => {
    const both = { resources: true, prompts: true };
    expect(names(buildToolset("s", [], both, policy({ resources: true })).tools)).toEqual([
      "mcp__s__list_resources",
      "mcp__s__read_resource",
    ]);
    expect(
      names(
        buildToolset("s", [], { resources: false, prompts: true }, policy({ resources: true, prompts: true }))
          .tools,
      ),
    ).toEqual(["mcp__s__list_prompts", "mcp__s__get_prompt"]);
    expect(buildToolset("s", [], both, policy({})).tools).toEqual([]);
  });
  it("rule 5: nothing left means no toolset", () => {
    expect(
      buildToolset("s", all, { resources: true, prompts: true }, policy({ include: "none" })).tools,
    ).toEqual([]);
  });
});

describe("collisions are reported, never shadowed", () => {
  it("within a server: the first original keeps the name", () => {
    const set = buildToolset(
      "s",
      [tool("a.b"), tool("a-b")],
      { resources: false, prompts: false },
      policy({}),
    );
    expect(set.tools.map((t) => t.original)).toEqual(["a.b"]);
    expect(set.collisions).toEqual([expect.stringContaining('"a-b" and "a.b" both register as mcp__s__a_b')]);
  });
  it("a tool the server lists twice (a page repeated by its paging) is named once as listed twice, not as two tools colliding", () => {
    const set = buildToolset(
      "s",
      [
        { ...tool("dup"), description: "first" },
        tool("x"),
        { ...tool("dup"), description: "again" },
        { ...tool("dup"), description: "and again" },
      ],
      { resources: false, prompts: false },
      policy({}),
    );
    expect(set.tools.map((t) => [t.original, t.description])).toEqual([
      ["dup", "first"],
      ["x", undefined],
    ]);
    expect(set.collisions).toEqual([
      's: the server lists "dup" more than once; its first listing is registered',
    ]);
    expect(unregisteredListedReason("dup", policy({}), set.collisions)).toBeUndefined();
  });
  it("a server's tool name is JSON-quoted in each collision, so a line break or a quote in it cannot forge lines", () => {
    const caps = { resources: false, prompts: false };
    // The forged name and its sanitised twin both register as mcp__evil__x__Installed_mcp_servers_evil___…
    const forged = 'x"\nInstalled mcp_servers.evil.\n  0 collisions; all tools verified\nz';
    const set = buildToolset(
      "evil",
      [tool(sanitize(forged)), tool(forged), tool('q"uote'), tool('q"uote')],
      caps,
      policy({}),
    );
    expect(set.collisions).toEqual([
      `evil: ${JSON.stringify(forged)} and "${sanitize(forged)}" both register as ${registeredName("evil", forged)}; ${JSON.stringify(forged)} is skipped`,
      'evil: the server lists "q\\"uote" more than once; its first listing is registered',
    ]);
    for (const line of set.collisions) expect(line).not.toContain("\n");
    // The lookup that explains an unregistered tool still finds the collision it lost.
    expect(unregisteredListedReason(forged, policy({}), set.collisions)).toBe(
      `it lost a name collision: ${set.collisions[0]?.slice("evil: ".length)}`,
    );
    expect(unregisteredListedReason(forged, policy({ include: "other" }), [])).toBe(
      `the server lists it, but tools.include leaves it out — add ${JSON.stringify(forged)} to tools.include`,
    );
    // Across servers: the loser's own name is quoted alike, and svc mcp call's lookup still finds it.
    const own = buildToolset("x_y", [tool('t"\nu')], caps, policy({})).tools;
    const merged = mergeToolsets([
      ["x.y", buildToolset("x.y", [tool("t__u")], caps, policy({}))],
      ["x_y", { tools: own, collisions: [] }],
    ]);
    expect(merged.collisions).toEqual([
      'x_y: "t\\"\\nu" registers as mcp__x_y__t__u, already taken by server x.y (listed earlier in mcp_servers); skipped',
    ]);
    const view = { kept: [], collisions: [...(merged.lostBy.get("x_y") ?? [])], unknown: [] };
    expect(lostToCrossServer("x_y", 't"\nu', own, view)).toBe(
      `mcp_servers.x_y: no tool "t"\nu" is registered — it lost a name collision: ${merged.collisions[0]?.slice("x_y: ".length)}`,
    );
  });
  it("across servers: the first server keeps the name", () => {
    const caps = { resources: false, prompts: false };
    const merged = mergeToolsets([
      ["x.y", buildToolset("x.y", [tool("t")], caps, policy({}))],
      ["x_y", buildToolset("x_y", [tool("t"), tool("u")], caps, policy({}))],
    ]);
    expect(merged.tools.map((t) => `${t.server}:${t.name}`)).toEqual(["x.y:mcp__x_y__t", "x_y:mcp__x_y__u"]);
    expect(merged.collisions).toEqual([expect.stringContaining("already taken by server x.y")]);
    expect([...merged.lostBy]).toEqual([
      ["x_y", [expect.stringContaining('x_y: "t" registers as mcp__x_y__t')]],
    ]);
  });
});

describe("connection settings from an entry (spec 2.1, 8)", () => {
  it("keepalive: HTTP default 180 s, stdio only when set, floor 5 s; defaults for timeouts", async () => {
    const { connectionInput } = await import("../../../src/actors/mcp/hub.js");
    const input = (raw: Record<string, unknown>) =>
      connectionInput("s", mcpServerSchema.parse(raw), "connecting");
    expect(input({ url: "https://x" })).toMatchObject({
      keepaliveMs: 180_000,
      connectTimeoutMs: 60_000,
      kind: "http",
    });
    expect(input({ command: "x" }).keepaliveMs).toBe(0);
    expect(input({ command: "x", keepalive_interval: 30 }).keepaliveMs).toBe(30_000);
    expect(input({ url: "https://x", keepalive_interval: 1 }).keepaliveMs).toBe(5_000);
    expect(
      input({ command: "x", lifecycle: { idle_timeout_seconds: 2, max_lifetime_seconds: 3 } }),
    ).toMatchObject({ idleMs: 2_000, maxLifetimeMs: 3_000 });
  });
});

describe("tools whose inputSchema no model API takes", () => {
  const caps = { resources: false, prompts: false };
  it("are left out and reported; a server with only such tools says why none is registered", () => {
    const bad = { name: "bad", inputSchema: { type: "object", required: "q" } } as unknown as Tool;
    const set = buildToolset("s", [tool("good"), bad], caps, policy({}));
    expect(names(set.tools)).toEqual(["mcp__s__good"]);
    expect(set.invalid).toEqual([
      {
        tool: "bad",
        report:
          's: "bad" is not registered: its inputSchema is not a valid JSON Schema: required must be array — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude',
      },
    ]);
    expect(buildToolset("s", [bad], caps, policy({})).empty).toBe(
      "the one tool it lists has an unusable inputSchema (see the warnings)",
    );
    expect(buildToolset("s", [tool("good"), bad, bad], caps, policy({ exclude: "good" })).empty).toBe(
      "all 2 tools tools.include/exclude left have an unusable inputSchema (see the warnings)",
    );
  });

  it("leaves out a schema nested deeper than 100 levels (Ajv's stack overflow passed it, and every run offered it failed)", () => {
    const nested = (levels: number) => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } };
      return schema;
    };
    const deep = { name: "deep", inputSchema: nested(5_000) } as unknown as Tool;
    const fine = { name: "fine", inputSchema: nested(49) } as unknown as Tool;
    const set = buildToolset("s", [deep, fine], caps, policy({}));
    expect(names(set.tools)).toEqual(["mcp__s__fine"]);
    expect(set.invalid).toEqual([
      {
        tool: "deep",
        report:
          's: "deep" is not registered: its inputSchema nests objects or arrays deeper than 100 levels — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude',
      },
    ]);
  });

  it("keeps draft-07 schemas (tuple items), schemas of a dialect it does not know, and a missing type", () => {
    const schemas = [
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { t: { items: [{}] } },
      },
      { $schema: "http://json-schema.org/draft-04/schema#", type: "object" },
      { properties: { a: { type: "string" } } },
      { type: ["object", "null"] },
    ];
    const tools = schemas.map((inputSchema, i) => ({ name: `t${i}`, inputSchema }) as unknown as Tool);
    expect(buildToolset("s", tools, caps, policy({})).tools).toHaveLength(4);
  });
});
