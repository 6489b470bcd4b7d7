import type { ToolOutcome } from "./tool.js";

export const textOutcome = (text: string): ToolOutcome => ({ ok: true, content: [{ type: "text", text }] });
export const toolError = (error: string): ToolOutcome => ({ ok: false, error });

/**
 * What the model (or a command agent) gets for a tool that failed without a message (an MCP `isError`
 * result with no content or a blank text, a blank error): the Messages API refuses a blank tool result.
 */
export const FAILED_WITHOUT_WHY = "the tool failed without saying why";

/** The arguments object a tool was called with, or a message saying what is wrong with it. */
export function argsObject(args: unknown): Record<string, unknown> | string {
  return typeof args === "object" && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : "arguments must be a JSON object";
}

/** A required non-empty string argument, or a message naming it. */
export function stringArg(args: Record<string, unknown>, name: string): string | { readonly error: string } {
  const value = args[name];
  return typeof value === "string" && value.trim() !== ""
    ? value
    : { error: `argument "${name}" must be a non-empty string` };
}

/** An optional string argument (undefined when absent), or a message naming it. */
export function optionalString(
  args: Record<string, unknown>,
  name: string,
): string | undefined | { readonly error: string } {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : { error: `argument "${name}" must be a string` };
}

/**
 * `text` cut to `max` characters, with a note saying how much was left out. A cut through a surrogate
 * pair (an emoji) ends before it: half of one is not valid Unicode, and model APIs refuse a request
 * that holds it.
 */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}\n[truncated: ${text.length - end} more characters not shown]`;
}

/** The run's workspace directory, or a message saying why there is none (the tool then answers an error). */
export async function workspaceOf(context: {
  workspace(): Promise<string>;
}): Promise<string | { error: string }> {
  try {
    return await context.workspace();
  } catch (err) {
    return { error: `this run has no working directory: ${(err as Error).message}` };
  }
}
