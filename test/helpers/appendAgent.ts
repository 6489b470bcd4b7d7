import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inHome } from "./gateway.js";

/**
 * A fast `command` agent for load tests: each run appends its delivery id as one line to
 * `$SVC_HOME/runs.log` (one short O_APPEND write), after `sleepSeconds` when given.
 */
export function appendAgent(maxConcurrentRuns = 8, sleepSeconds = 0): Record<string, unknown> {
  const sleep = sleepSeconds > 0 ? `sleep ${sleepSeconds}; ` : "";
  return {
    provider: "command",
    command: ["sh", "-c", `${sleep}printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`, inHome("")],
    max_concurrent_runs: maxConcurrentRuns,
  };
}

/** How many times `appendAgent` ran each delivery id under `homeDir`. */
export function appendedRuns(homeDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const file = join(homeDir, "runs.log");
  if (!existsSync(file)) return counts;
  for (const id of readFileSync(file, "utf8").split("\n")) {
    if (id !== "") counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
