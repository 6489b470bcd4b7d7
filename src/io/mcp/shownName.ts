import { terminalText } from "../terminalText.js";

/**
 * A server name (or a key of an imported file) as a line of svc mcp's output shows it: one holding a line
 * break, a control or an invisible character (an imported file from a cloned repository, or a config.yaml
 * key written by hand, naming a server "a\u001b]0;x\u0007b") in JSON quotes with those escaped, so the line
 * stays one line and cannot act on the terminal; any other as it is.
 */
export function shownName(name: string): string {
  return /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name) ? terminalText(JSON.stringify(name)) : name;
}
