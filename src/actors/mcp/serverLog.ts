import type { LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { scrub } from "../../io/credentials.js";
import type { Logger } from "../../io/log.js";

type McpLogParams = LoggingMessageNotification["params"];

/** A server's log message longer than this is cut: one chatty server must not flood the gateway log. */
export const SERVER_LOG_MAX_CHARS = 2000;

/** The gateway log level of an MCP (syslog) level: notice is info; critical, alert and emergency are error. */
export function gatewayLevel(level: McpLogParams["level"]): "debug" | "info" | "warn" | "error" {
  switch (level) {
    case "debug":
      return "debug";
    case "info":
    case "notice":
      return "info";
    case "warning":
      return "warn";
    default:
      return "error";
  }
}

/** The text of a log message: a string as it is, anything else as JSON; cut at `SERVER_LOG_MAX_CHARS`. */
export function serverLogText(params: McpLogParams): string {
  const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
  const text = `${params.logger === undefined ? "" : `${params.logger}: `}${data ?? String(params.data)}`;
  return text.length > SERVER_LOG_MAX_CHARS ? `${text.slice(0, SERVER_LOG_MAX_CHARS)}…` : text;
}

/**
 * `notifications/message` from a server, written to the gateway log at the matching level, with the
 * entry's credentials redacted (a server logging the configuration it started with).
 */
export function logServerMessage(
  logger: Logger,
  server: string,
  params: McpLogParams,
  secrets: readonly string[] = [],
): void {
  logger[gatewayLevel(params.level)](
    { server, mcpLevel: params.level },
    `[mcp:${server}] ${scrub(serverLogText(params), secrets)}`,
  );
}
