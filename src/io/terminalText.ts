/** C0 controls except tab and newline, DEL and C1 controls: what a terminal acts on instead of showing. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text for the terminal that may quote a remote party (an MCP server's error body, an authorization
 * server's answer): control characters are shown as `\u001b`, so an escape sequence in it cannot erase
 * lines, retitle the window or fake output. Newlines stay (messages list one problem per line).
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
