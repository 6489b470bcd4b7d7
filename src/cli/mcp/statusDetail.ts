import { serverScoped } from "../../actors/mcp/runtime.js";
import { redactCredentials } from "../../io/credentials.js";
import type { ServerStatus } from "../../io/mcp/statusFile.js";
import { terminalText } from "../../io/terminalText.js";

/**
 * The DETAIL column of `svc mcp list` with a gateway running: the last error, naming the server as
 * `mcp_servers.<name>: ` whatever its state (a reconnecting server's error is the machine's own text); else `enabled:
 * false` for a skipped server (why it is: no connection, discovery or registration); else
 * the names it could not register; else the warnings of its last tool listing (a `tools.include` entry that
 * matches no tool, which often leaves the server with none). One line, no escape sequence: the error, the
 * collisions and the warnings quote the server.
 */
export function detail(s: ServerStatus): string {
  const line = (text: string) => terminalText(redactCredentials(text)).replace(/\n/g, " ");
  if (s.lastError !== undefined) return line(serverScoped(s.name, s.lastError));
  if (s.state === "skipped") return "enabled: false";
  const [first, ...more] = s.collisions;
  if (first !== undefined) {
    if (more.length === 0) return `collision: ${line(first)}`;
    return `${s.collisions.length} collisions: ${line(first)}; … (svc mcp tools ${s.name} lists them)`;
  }
  const [warning, ...others] = s.warnings ?? [];
  if (warning === undefined) return "";
  if (others.length === 0) return `warning: ${line(warning)}`;
  return `${others.length + 1} warnings: ${line(warning)}; … (svc mcp tools ${s.name} lists them)`;
}
