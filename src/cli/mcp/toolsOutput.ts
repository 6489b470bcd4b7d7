import type { RegisteredTool } from "../../actors/mcp/toolNames.js";
import { cutText } from "../../io/cutText.js";
import { terminalText } from "../../io/terminalText.js";
import { formatTable } from "../format.js";

/** A description's lines as a terminal shows them: Windows (`\r\n`) and old Mac (`\r`) breaks as `\n`, no blank lines around. */
const lines = (text: string) => text.replace(/\r\n?/g, "\n").trim();

/**
 * `svc mcp tools <server>`: each registered name, the server's own name and its description (first line);
 * `schema` adds each input schema (indented JSON); `json` prints everything as one JSON array instead.
 */
export function formatTools(
  tools: readonly RegisteredTool[],
  options: { schema?: boolean; json?: boolean },
): string {
  if (options.json === true)
    return `${JSON.stringify(
      tools.map((t) => ({
        name: t.name,
        tool: t.original,
        description: t.description ?? null,
        read_only: t.readOnly,
        input_schema: t.inputSchema,
      })),
      null,
      2,
    )}\n`;
  // The server's text: no escape sequence reaches the terminal, and a long description stays one line.
  const firstLine = (text: string | undefined) => {
    const line = terminalText(lines(text ?? "").split("\n")[0] ?? "");
    return line.length > 100 ? `${cutText(line, 99)}…` : line;
  };
  if (options.schema !== true)
    return `${formatTable([
      ["REGISTERED NAME", "SERVER TOOL", "DESCRIPTION"],
      ...tools.map((t) => [t.name, terminalText(t.original), firstLine(t.description)]),
    ])}\n`;
  return tools
    .map((t) => {
      const schema = terminalText(JSON.stringify(t.inputSchema, null, 2)).replace(/^/gm, "    ");
      return `${t.name} (${terminalText(JSON.stringify(t.original))})\n  ${terminalText(lines(t.description ?? "") || "(no description)").replace(/\n/g, "\n  ")}\n  input schema:\n${schema}\n`;
    })
    .join("\n");
}
