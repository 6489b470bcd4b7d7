import type { AgentRunner } from "../../src/actors/agent/runner.js";
import { type ModelRunnerDeps, modelRunner } from "../../src/agent/modelRunner.js";
import type { AgentTool } from "../../src/agent/tools/tool.js";
import { type Logger, silentLogger } from "../../src/io/log.js";

type Settings = ModelRunnerDeps["settings"];

/**
 * A model runner against the endpoint `settings` names (provider, model, base_url) with `tools` built in: five
 * steps of at most 100 tokens, a 10 s timeout, no retry, unless `settings` says otherwise; it logs to `logger`.
 */
export function testModelRunner(
  settings: Pick<Settings, "provider" | "model" | "base_url"> & Partial<Settings>,
  tools: AgentTool[],
  logger: Logger = silentLogger(),
): AgentRunner {
  return modelRunner({
    settings: {
      max_steps: 5,
      max_tokens: 100,
      retries: 0,
      timeout_seconds: 10,
      max_concurrent_runs: 1,
      max_tool_result_chars: 100_000,
      ...settings,
    },
    logger,
    builtins: () => tools,
  });
}
