import { createRunner } from "../actors/agent/index.js";
import type { AgentRunner } from "../actors/agent/runner.js";
import type { Config } from "../config/schema.js";

export interface Agent {
  /** The runner of the current config (a reload swaps it; runs already started keep theirs). */
  runner(): AgentRunner;
  reload(config: Config): void;
}

/** The configured agent (`agent:`), shared by webhook runs, cron jobs and MCP sampling. */
export function createAgent(config: Config): Agent {
  let runner = createRunner(config.agent);
  return {
    runner: () => runner,
    reload(next) {
      runner = createRunner(next.agent);
    },
  };
}
