import type { AgentRunner } from "../../src/actors/agent/runner.js";
import { type ModelRunnerDeps, modelRunner } from "../../src/agent/modelRunner.js";
import type { AgentTool } from "../../src/agent/tools/tool.js";
import { silentLogger } from "../../src/io/log.js";

/** A model runner against a Messages API endpoint at `baseUrl` with `tools` built in, five steps, no retry unless `settings` says. */
export function anthropicRunner(
  baseUrl: string,
  tools: AgentTool[],
  settings: Partial<ModelRunnerDeps["settings"]> = {},
): AgentRunner {
  return modelRunner({
    settings: {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      base_url: baseUrl,
      max_steps: 5,
      max_tokens: 100,
      retries: 0,
      timeout_seconds: 10,
      max_concurrent_runs: 1,
      max_tool_result_chars: 100_000,
      ...settings,
    },
    logger: silentLogger(),
    builtins: () => tools,
  });
}
