import type { ToolsSettings } from "../../config/sections/tools.js";
import type { FileText } from "../../io/fileText.js";
import { listInside, readInside, writeInside } from "../../io/workspaceFiles.js";
import { CONTROL_CHARACTER } from "../../io/workspacePaths.js";
import { argsObject, optionalString, stringArg, textOutcome, toolError, workspaceOf } from "./outcome.js";
import type { AgentTool } from "./tool.js";

/** Entries `file_list` shows of one directory. */
export const LIST_MAX_ENTRIES = 500;

/** A name as `file_list` shows it: JSON-quoted when it holds a control character, so it reads as one entry. */
const shownName = (name: string): string => (CONTROL_CHARACTER.test(name) ? JSON.stringify(name) : name);

const pathProperty = {
  type: "string",
  description: "A path relative to the workspace (no .., not absolute)",
};

/** What the model is told of a file not read as plain UTF-8, so its text is not taken for the file's bytes. */
function encodingNote(read: FileText): string {
  if (read.encoding !== "utf-8")
    return `\n[the file is ${read.encoding.toUpperCase()} text (its byte order mark), shown decoded]`;
  if (read.notUtf8Line !== undefined)
    return `\n[line ${read.notUtf8Line} is not UTF-8 text: bytes that are not UTF-8 are shown as \ufffd (another encoding, such as Latin-1?)]`;
  return "";
}

function fileRead(settings: ToolsSettings["file"]): AgentTool {
  return {
    name: "file_read",
    description: `Read a text file in this run's working directory (at most ${settings.max_bytes} bytes).`,
    inputSchema: {
      type: "object",
      properties: { path: pathProperty },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const path = stringArg(object, "path");
      if (typeof path !== "string") return toolError(path.error);
      const root = await workspaceOf(context);
      if (typeof root !== "string") return toolError(`file_read: ${root.error}`);
      const read = await readInside(root, path, settings.max_bytes);
      if (!read.ok) return toolError(`file_read: ${read.error}`);
      const { text, size, truncated, shown } = read.value;
      // Said in words: a blank tool result reaches the model as "the tool returned no output".
      if (text.trim() === "")
        return textOutcome(
          size === 0 ? "(the file is empty)" : `(the file holds only whitespace: ${size} bytes)`,
        );
      return textOutcome(
        text +
          (truncated ? `\n[truncated: file is ${size} bytes, shown ${shown}]` : "") +
          encodingNote(read.value),
      );
    },
  };
}

function fileWrite(settings: ToolsSettings["file"]): AgentTool {
  return {
    name: "file_write",
    description:
      "Create or replace a text file in this run's working directory (parent directories are created).",
    inputSchema: {
      type: "object",
      properties: { path: pathProperty, content: { type: "string", description: "The whole new content" } },
      required: ["path", "content"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const path = stringArg(object, "path");
      if (typeof path !== "string") return toolError(path.error);
      if (typeof object.content !== "string") return toolError('argument "content" must be a string');
      const root = await workspaceOf(context);
      if (typeof root !== "string") return toolError(`file_write: ${root.error}`);
      const written = await writeInside(root, path, object.content, settings.max_bytes);
      if (!written.ok) return toolError(`file_write: ${written.error}`);
      return textOutcome(`wrote ${written.value} bytes to ${path}`);
    },
  };
}

function fileList(): AgentTool {
  return {
    name: "file_list",
    description: "List a directory of this run's working directory (default: its top).",
    inputSchema: { type: "object", properties: { path: pathProperty }, additionalProperties: false },
    async execute(args, context) {
      const object = argsObject(args ?? {});
      if (typeof object === "string") return toolError(object);
      const path = optionalString(object, "path");
      if (typeof path === "object") return toolError(path.error);
      const root = await workspaceOf(context);
      if (typeof root !== "string") return toolError(`file_list: ${root.error}`);
      const listed = await listInside(root, path ?? ".", LIST_MAX_ENTRIES);
      if (!listed.ok) return toolError(`file_list: ${listed.error}`);
      const { entries, total } = listed.value;
      if (total === 0) return textOutcome("(empty)");
      const lines = entries.map(({ name, kind, size }) =>
        kind === "dir"
          ? `${shownName(name)}/`
          : kind === "file"
            ? `${shownName(name)}  (${size} bytes)`
            : `${shownName(name)}  (${kind})`,
      );
      if (total > entries.length) lines.push(`[${total - entries.length} more entries not shown]`);
      return textOutcome(lines.join("\n"));
    },
  };
}

/** The `file` toolset: read, write and list inside the run's workspace; traversal refused. */
export function fileTools(settings: ToolsSettings["file"]): AgentTool[] {
  return [fileRead(settings), fileWrite(settings), fileList()];
}
