import { readFileSync } from "node:fs";

/**
 * The descriptors the gateway needs to start and serve a handful of connections: measured, a start from the
 * build (no MCP server) failed below 68 (the ES module loader reads its chunks in parallel), and an idle
 * gateway holds ~23; the rest is room for a few connections, a stdio MCP server's pipes, an agent's.
 */
export const GATEWAY_OPEN_FILES = 128;

/** This process's limit on open files (`ulimit -n`, the soft one, which Node raised to the hard one), from /proc. */
export function openFileLimit(limits = "/proc/self/limits"): number | undefined {
  let text: string;
  try {
    text = readFileSync(limits, "latin1");
  } catch {
    return undefined; // not Linux, or no /proc: nothing is checked
  }
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(text)?.[1];
  return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
}

/**
 * Why the gateway cannot start under `limit` open files, or undefined. Below it a start failed with the bare
 * `EMFILE: too many open files, open '…/chunk-….js'` (or, lower, an uncaught error of Node's module loader,
 * or Node's own abort), which said neither the limit nor what it should be.
 */
export function gatewayOpenFilesProblem(limit: number | undefined): string | undefined {
  if (limit === undefined || limit >= GATEWAY_OPEN_FILES) return undefined;
  return `the open-file limit (ulimit -n) is ${limit}, below the ${GATEWAY_OPEN_FILES} the gateway needs to start and serve a few connections — raise it to ${GATEWAY_OPEN_FILES} or more, well above the connections and MCP servers it serves (ulimit -n 65536 in the shell that starts it; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)`;
}
