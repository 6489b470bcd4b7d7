import { describe, expect, it } from "vitest";
import { importedServers } from "../../../src/cli/mcp/importFormats.js";
import { mcpServerSchema, transportKind } from "../../../src/config/sections/mcp.js";

/**
 * Cline, Cursor and other clients write Streamable HTTP as `"type": "streamableHttp"` (Roo Code
 * `streamable-http`, Claude Code and VS Code `http`): every spelling names svc's default transport.
 */
describe("streamableHttp, as other clients' configs write it", () => {
  it("config.yaml takes it as transport: or type:", () => {
    for (const key of ["transport", "type"]) {
      const entry = mcpServerSchema.parse({ url: "https://x.test/mcp", [key]: "streamableHttp" });
      expect(transportKind(entry)).toBe("http");
    }
  });

  it("svc mcp import carries it over as transport: http, without a note", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { cline: { type: "streamableHttp", url: "https://x.test/mcp" } } },
      "cline_mcp_settings.json",
    );
    expect(entries.cline).toEqual({ url: "https://x.test/mcp", transport: "http" });
    expect(notes).toEqual([]);
  });

  it("svc mcp import reads Cline's transportType as type (an SSE server stays SSE) and its timeout (seconds)", () => {
    const { entries, notes } = importedServers(
      {
        mcpServers: {
          old: { url: "http://localhost:6688/sse", transportType: "sse", timeout: 60 },
          neu: { url: "https://x.test/mcp", transportType: "streamable-http" },
        },
      },
      "cline_mcp_settings.json",
    );
    expect(entries.old).toEqual({ url: "http://localhost:6688/sse", timeout: 60, transport: "sse" });
    expect(entries.neu).toEqual({ url: "https://x.test/mcp", transport: "http" });
    expect(notes).toEqual([]);
  });

  it("svc mcp import reads Windsurf's serverUrl as url", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { ws: { serverUrl: "https://x.test/mcp", headers: { "X-Key": "k" } } } },
      "mcp_config.json",
    );
    expect(entries.ws).toEqual({ url: "https://x.test/mcp", headers: { "X-Key": "k" } });
    expect(notes).toEqual([]);
  });
});

describe("svc mcp import of Gemini CLI's and Roo Code's server keys", () => {
  it("httpUrl is a Streamable HTTP url; includeTools / excludeTools / disabledTools are tools.include / exclude", () => {
    const { entries, notes } = importedServers(
      {
        mcpServers: {
          gh: { httpUrl: "https://api.example.com/mcp", includeTools: ["search", "get_issue"] },
          fs: { command: "npx", args: ["-y", "fs"], excludeTools: ["rm"] },
          roo: { command: "roo-srv", disabledTools: ["drop_table"] },
        },
      },
      "settings.json",
    );
    expect(entries.gh).toEqual({
      url: "https://api.example.com/mcp",
      transport: "http",
      tools: { include: ["search", "get_issue"] },
    });
    expect(entries.fs).toEqual({ command: "npx", args: ["-y", "fs"], tools: { exclude: ["rm"] } });
    expect(entries.roo).toEqual({ command: "roo-srv", tools: { exclude: ["drop_table"] } });
    expect(notes).toEqual([]);
    for (const entry of Object.values(entries)) expect(() => mcpServerSchema.parse(entry)).not.toThrow();
  });

  it("a tool named in both lists stays out, as Gemini excludes it (svc reads include alone then)", () => {
    const { entries } = importedServers(
      { mcpServers: { g: { command: "x", includeTools: ["a", "b", "c"], excludeTools: ["b"] } } },
      "settings.json",
    );
    expect(entries.g?.tools).toEqual({ include: ["a", "c"] });
  });

  it("a Gemini entry's timeout (milliseconds there) is carried over as seconds, with a note", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { g: { httpUrl: "https://x.test/mcp", timeout: 30000 } } },
      "settings.json",
    );
    expect(entries.g?.timeout).toBe(30000);
    expect(notes).toEqual([
      "g: timeout 30000 is read as seconds; Gemini CLI writes milliseconds — if it came from there, write 30",
    ]);
  });

  it("a filter written as one name is that name; an empty includeTools exposes none, as in Gemini CLI", () => {
    const { entries, notes, refused } = importedServers(
      {
        mcpServers: {
          g: { command: "x", excludeTools: "rm" },
          none: { command: "x", includeTools: [], excludeTools: [] },
        },
      },
      "settings.json",
    );
    expect(entries.g).toEqual({ command: "x", tools: { exclude: ["rm"] } });
    expect(entries.none).toEqual({ command: "x", tools: { include: [] } });
    expect(notes).toEqual([]);
    expect(refused).toEqual({});
  });

  // Seen: includeTools ["a", null] left out with "svc has no such key", so every tool of ga was exposed.
  it("a filter svc refuses refuses its server, in the schema's words of the file's key: no allowlist is dropped", () => {
    const { entries, notes, refused } = importedServers(
      {
        mcpServers: {
          ga: { command: "x", includeTools: ["a", null] },
          gb: { command: "x", excludeTools: ["rm"], disabledTools: [7] },
          gn: { command: "x", includeTools: null },
          gd: { command: "x", includeTools: ["a"] },
        },
      },
      "settings.json",
    );
    expect(Object.keys(entries)).toEqual(["gd"]);
    expect(notes).toEqual([]);
    expect(refused).toEqual({
      ga: 'settings.json: mcpServers.ga.includeTools: expected a tool name, a glob, or a list of them, got ["a",null] — a null entry names no tool: remove it',
      gb: "settings.json: mcpServers.gb.disabledTools: expected a tool name, a glob, or a list of them, got [7] — put 7 in quotes if it is meant as text",
      gn: "settings.json: mcpServers.gn.includeTools: expected a tool name, a glob, or a list of them, got null — a null names no tool: remove the key to expose every tool of the server, or name the tools to expose",
    });
  });

  // Seen: includeTools null beside excludeTools told to "remove the key to expose every tool of the server".
  it("a null alone as one of Gemini's lists says that the lists written beside it then filter the tools alone", () => {
    const { entries, refused } = importedServers(
      {
        mcpServers: {
          gi: { command: "x", includeTools: null, excludeTools: ["rm"], disabledTools: ["mv"] },
          ge: { command: "x", includeTools: ["a"], excludeTools: null },
          both: { command: "x", includeTools: null, excludeTools: null },
        },
      },
      "settings.json",
    );
    expect(entries).toEqual({});
    const got =
      "expected a tool name, a glob, or a list of them, got null — a null names no tool: remove the key to";
    expect(refused).toEqual({
      gi: `settings.json: mcpServers.gi.includeTools: ${got} let excludeTools and disabledTools alone filter the tools, or name the tools to expose`,
      ge: `settings.json: mcpServers.ge.excludeTools: ${got} let includeTools alone filter the tools, or name the tools to leave out`,
      both: `settings.json: mcpServers.both.includeTools: ${got} expose every tool of the server, or name the tools to expose`,
    });
  });

  // Seen: "includeTools": null beside "excludeTools": [] told to "let excludeTools alone filter the tools", which
  // leaves no tool out: following it exposed every tool.
  it("a null beside an empty exclude list says that removing it exposes every tool, in Gemini's lists and a tools mapping", () => {
    const { entries, refused } = importedServers(
      {
        mcpServers: {
          gi: { command: "x", includeTools: null, excludeTools: [] },
          gd: { command: "x", includeTools: null, excludeTools: [], disabledTools: ["mv"] },
          ge: { command: "x", includeTools: [], excludeTools: null },
          own: { command: "x", tools: { include: null, exclude: [] } },
        },
      },
      "settings.json",
    );
    expect(entries).toEqual({});
    const got =
      "expected a tool name, a glob, or a list of them, got null — a null names no tool: remove the key to";
    expect(refused).toEqual({
      gi: `settings.json: mcpServers.gi.includeTools: ${got} expose every tool of the server, or name the tools to expose`,
      gd: `settings.json: mcpServers.gd.includeTools: ${got} let disabledTools alone filter the tools, or name the tools to expose`,
      ge: `settings.json: mcpServers.ge.excludeTools: ${got} let includeTools alone filter the tools, or name the tools to leave out`,
      own: `settings.json: mcpServers.own.tools.include: ${got} expose every tool of the server, or name the tools to expose`,
    });
  });

  it("svc's own tools mapping is carried over as written, or its server refused; beside Gemini's lists it is refused", () => {
    const { entries, notes, refused } = importedServers(
      {
        servers: {
          own: { command: "x", tools: { include: ["a"], resources: true } },
          bad: { command: "x", tools: { include: ["a", null] } },
          both: { command: "x", tools: { exclude: ["b"] }, includeTools: ["a"] },
        },
      },
      "mcp.json",
    );
    expect(entries).toEqual({ own: { command: "x", tools: { include: ["a"], resources: true } } });
    expect(notes).toEqual([]);
    expect(refused).toEqual({
      bad: 'mcp.json: servers.bad.tools.include: expected a tool name, a glob, or a list of them, got ["a",null] — a null entry names no tool: remove it',
      both: "mcp.json: servers.both: writes both tools and includeTools — keep one and import again",
    });
  });

  // Seen: {"Include": ["get_issue"]} left out with "svc's key takes other values than this file's": every tool exposed.
  it("a tools mapping with no key of svc's is judged as svc's: a key svc does not know refuses the server, as beside svc's keys", () => {
    const { entries, notes, refused } = importedServers(
      {
        mcpServers: {
          t1: { command: "node", tools: { Include: ["get_issue"] } },
          t2: { command: "node", tools: { include: ["get_issue"], Exclude: ["x"] } },
          empty: { command: "node", tools: {} },
        },
      },
      "mcp.json",
    );
    expect(entries).toEqual({ empty: { command: "node", tools: {} } });
    expect(notes).toEqual([]);
    expect(refused).toEqual({
      t1: 'mcp.json: mcpServers.t1.tools: unknown key "Include" — check the spelling (see docs/configuration.md)',
      t2: 'mcp.json: mcpServers.t2.tools: unknown key "Exclude" — check the spelling (see docs/configuration.md)',
    });
  });
});

/**
 * GitHub Copilot's `mcp-config.json` (CLI and SDK) writes the tools a server may offer as a `tools` list: `["*"]`
 * every tool, `[]` none, or the names to allow; a command server's `type` is `local` or `stdio`.
 */
describe("svc mcp import of GitHub Copilot's tools list", () => {
  // Seen: "cp: tools not carried over (svc's key takes other values …)", cp imported with every tool exposed.
  it('a list of names is tools.include, [] is include: [] (no tool), ["*"] no filter; type local is a command server', () => {
    const { entries, notes, refused } = importedServers(
      {
        mcpServers: {
          names: { type: "local", command: "node", tools: ["get_issue", "list_*"] },
          none: { type: "local", command: "node", tools: [] },
          all: { type: "stdio", command: "node", tools: ["*"] },
          remote: { type: "http", url: "https://x.test/mcp", tools: ["search"] },
        },
      },
      "mcp-config.json",
    );
    expect(entries).toEqual({
      names: { command: "node", tools: { include: ["get_issue", "list_*"] } },
      none: { command: "node", tools: { include: [] } },
      all: { command: "node" },
      remote: { url: "https://x.test/mcp", transport: "http", tools: { include: ["search"] } },
    });
    expect(notes).toEqual([]);
    expect(refused).toEqual({});
  });

  it("a list svc refuses refuses its server, named by the file's key; beside Gemini's lists it is refused", () => {
    const { entries, notes, refused } = importedServers(
      {
        mcpServers: {
          nul: { command: "node", tools: ["get_issue", null] },
          num: { command: "node", tools: ["*", 7] },
          both: { command: "node", tools: ["get_issue"], excludeTools: ["x"] },
        },
      },
      "mcp-config.json",
    );
    expect(entries).toEqual({});
    expect(notes).toEqual([]);
    expect(refused).toEqual({
      nul: 'mcp-config.json: mcpServers.nul.tools: expected a tool name, a glob, or a list of them, got ["get_issue",null] — a null entry names no tool: remove it',
      num: 'mcp-config.json: mcpServers.num.tools: expected a tool name, a glob, or a list of them, got ["*",7] — put 7 in quotes if it is meant as text',
      both: "mcp-config.json: mcpServers.both: writes both tools and excludeTools — keep one and import again",
    });
  });
  // Seen: {"tools": "echo"} imported with "tools not carried over" and no tools key: every tool of the server exposed.
  it('a lone name is tools.include ("*" no filter), a null no filter; a number or boolean refuses its server', () => {
    for (const format of ["mcpServers", "servers"] as const) {
      const { entries, notes, refused } = importedServers(
        {
          [format]: {
            one: { command: "node", tools: "echo" },
            glob: { command: "node", tools: "list_*" },
            all: { command: "node", tools: "*" },
            nul: { command: "node", tools: null },
            nulBeside: { command: "node", tools: null, includeTools: ["a"] },
            num: { command: "node", tools: 7 },
            yes: { command: "node", tools: true },
            empty: { command: "node", tools: "" },
            both: { command: "node", tools: "echo", excludeTools: ["x"] },
          },
        },
        "mcp.json",
      );
      expect(entries).toEqual({
        one: { command: "node", tools: { include: ["echo"] } },
        glob: { command: "node", tools: { include: ["list_*"] } },
        all: { command: "node" },
        nul: { command: "node" },
        nulBeside: { command: "node", tools: { include: ["a"] } },
      });
      expect(notes).toEqual([]);
      const got = `mcp.json: ${format}`;
      expect(refused).toEqual({
        num: `${got}.num.tools: expected a tool name, a glob, or a list of them, got 7 — put it in quotes if it is meant as text`,
        yes: `${got}.yes.tools: expected a tool name, a glob, or a list of them, got true — put it in quotes if it is meant as text`,
        empty: `${got}.empty.tools: must not be empty — write a value, or leave the key out`,
        both: `${got}.both: writes both tools and excludeTools — keep one and import again`,
      });
    }
  });
});

describe("svc mcp import of an OAuth server's login settings", () => {
  it("Claude Code's oauth (clientId, callbackPort, scopes) is auth: oauth with svc's keys", () => {
    const { entries, notes } = importedServers(
      {
        mcpServers: {
          g: {
            type: "http",
            url: "https://g.example/mcp",
            oauth: {
              clientId: "pre-registered-client",
              callbackPort: 8080,
              scopes: "read write",
              authServerMetadataUrl: "https://auth.example/.well-known/openid-configuration",
            },
          },
          h: { type: "http", url: "https://h.example/mcp", oauth: {} },
        },
      },
      ".mcp.json",
    );
    expect(entries.g).toEqual({
      url: "https://g.example/mcp",
      transport: "http",
      auth: "oauth",
      oauth: {
        client_id: "pre-registered-client",
        redirect_uri: "http://localhost:8080/callback",
        scope: "read write",
      },
    });
    expect(entries.h).toEqual({ url: "https://h.example/mcp", transport: "http", auth: "oauth" });
    // Each one passes config.yaml's check as it is written.
    for (const entry of [entries.g, entries.h]) expect(() => mcpServerSchema.parse(entry)).not.toThrow();
    expect(notes).toEqual([
      "g: oauth.authServerMetadataUrl not carried over (svc's oauth keys are others: client_id, client_secret, scope, redirect_uri, ...; svc finds the authorization server from the MCP server's metadata; see docs/mcp-oauth.md)",
    ]);
  });

  it("a key svc has but the file writes another way is not said to be unknown to svc", () => {
    const { entries, notes } = importedServers(
      { mcpServers: { gem: { httpUrl: "https://gem.example/mcp", trust: 1, oauth: true } } },
      "settings.json",
    );
    expect(entries.gem).toEqual({ url: "https://gem.example/mcp", transport: "http" });
    expect(notes).toEqual([
      "gem: trust, oauth not carried over (svc's keys take other values than this file's; see docs/mcp.md)",
    ]);
  });

  it("Gemini CLI's trust and oauth.enabled: false are read as svc's", () => {
    const { entries, notes } = importedServers(
      {
        mcpServers: {
          trusted: { httpUrl: "https://a.example/mcp", trust: true, oauth: { enabled: false } },
          asks: { command: "npx", args: ["-y", "srv"], trust: false },
        },
      },
      "settings.json",
    );
    // trust: true is svc's default (full); false asks before a call, as trust: untrusted does.
    expect(entries.trusted).toEqual({ url: "https://a.example/mcp", transport: "http" });
    expect(entries.asks).toEqual({ command: "npx", args: ["-y", "srv"], trust: "untrusted" });
    expect(notes).toEqual([]);
  });
});
