import { describe, expect, it } from "vitest";
import { runToolsets } from "../../../src/actors/agent/index.js";
import { selectToolsets } from "../../../src/agent/toolSelection.js";
import { runSessionLine } from "../../../src/io/sessions/runJournal.js";

const servers = ["github", "notes", "off"];

describe("selectToolsets (docs/agent.md, Tools in a run)", () => {
  it("no MCP server named: every configured server; the other names are built-in toolsets", () => {
    expect(selectToolsets(["web_search", "clarify"], servers)).toEqual({
      builtinToolsets: ["web_search", "clarify"],
      mcpServers: ["github", "notes", "off"],
    });
  });

  it("servers named: only those", () => {
    expect(selectToolsets(["notes", "web_extract"], servers)).toEqual({
      builtinToolsets: ["web_extract"],
      mcpServers: ["notes"],
    });
  });

  it("mcp: every server, and no built-in; beside a server's name, that server alone", () => {
    expect(selectToolsets(["mcp"], servers)).toEqual({ builtinToolsets: ["mcp"], mcpServers: servers });
    expect(selectToolsets(["mcp", "notes"], servers).mcpServers).toEqual(["notes"]);
  });

  it("no_mcp: no server, even one named", () => {
    expect(selectToolsets(["no_mcp", "notes", "terminal"], servers)).toEqual({
      builtinToolsets: ["terminal"],
      mcpServers: [],
    });
  });
});

describe("runToolsets keeps the names of MCP servers", () => {
  it("a server name and no_mcp survive; an unknown name is dropped and reported", () => {
    const dropped: string[] = [];
    const kept = runToolsets(
      ["notes", "svc-webhook", "no_mcp", "nonsense"],
      (name) => dropped.push(name),
      (name) => name === "notes",
    );
    expect(kept).toEqual(["notes", "web_search", "web_extract", "vision_analyze", "clarify", "no_mcp"]);
    expect(dropped).toEqual(["nonsense"]);
  });
});

describe("the run journal line", () => {
  it("carries a model run's record under `run`, and stays the same without one", () => {
    const record = {
      provider: "openai",
      model: "m",
      steps: 2,
      toolCalls: [{ name: "mcp__a__b", ms: 3, ok: true }],
      usage: { input: 20, output: 10 },
      outcome: "ok" as const,
      ms: 40,
    };
    const withRecord = JSON.parse(
      runSessionLine("r", "d", "2026-11-28T00:00:00.000Z", "p", "answer", record),
    );
    expect(withRecord.run).toEqual(record);
    expect(withRecord.entries[1]).toMatchObject({ role: "assistant", content: "answer" });
    const plain = JSON.parse(runSessionLine("r", "d", "2026-11-28T00:00:00.000Z", "p", "p"));
    expect(plain.run).toBeUndefined();
  });
});
