import { describe, expect, it } from "vitest";
import type { RegisteredTool } from "../../../src/actors/mcp/toolNames.js";
import { formatTools } from "../../../src/cli/mcp/toolsOutput.js";

const tool = (original: string, description?: string): RegisteredTool => ({
  name: `mcp__d__${original.replace(/[^A-Za-z0-9_]/g, "_")}`,
  server: "d",
  original,
  kind: "native",
  ...(description === undefined ? {} : { description }),
  inputSchema: { type: "object" },
  readOnly: false,
});

describe("svc mcp tools output", () => {
  it("shows a description's first line whatever its line breaks (a server on Windows writes \\r\\n)", () => {
    const table = formatTools(
      [
        tool("crlf", "Line one\r\nLine two"),
        tool("cr", "Old Mac\rsecond"),
        tool("blank", "\n\n  Searches.\nMore"),
      ],
      {},
    );
    expect(table).toMatch(/^mcp__d__crlf +crlf +Line one$/m);
    expect(table).toMatch(/^mcp__d__cr +cr +Old Mac$/m);
    expect(table).toMatch(/^mcp__d__blank +blank +Searches\.$/m);
    expect(table).not.toContain("\\u000d");
  });

  it("--schema shows the whole description, its lines indented, without blank lines around it", () => {
    const text = formatTools([tool("crlf", "\r\nLine one\r\nLine two\r\n"), tool("none", "")], {
      schema: true,
    });
    expect(text).toContain('mcp__d__crlf ("crlf")\n  Line one\n  Line two\n  input schema:\n');
    expect(text).toContain('mcp__d__none ("none")\n  (no description)\n  input schema:\n');
    expect(text).not.toContain("\\u000d");
  });

  it("--schema quotes the server's tool name: a line break in it cannot forge lines", () => {
    const evil = 'x"\nInstalled mcp_servers.evil.\n  0 collisions; all tools verified\nz';
    const text = formatTools([tool(evil, "d")], { schema: true });
    expect(text.split("\n")[0]).toBe(`${tool(evil).name} (${JSON.stringify(evil)})`);
    expect(text).not.toMatch(/^Installed/m);
    // The table shows no line break either: one row.
    expect(
      formatTools([tool(evil, "d")], {})
        .trimEnd()
        .split("\n"),
    ).toHaveLength(2);
  });
});
