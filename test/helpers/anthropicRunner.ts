import type { AgentRunner } from "../../src/actors/agent/runner.js";
import type { ModelRunnerDeps } from "../../src/agent/modelRunner.js";
import type { AgentTool } from "../../src/agent/tools/tool.js";
import { testModelRunner } from "./testModelRunner.js";

/** A model runner against a Messages API endpoint at `baseUrl` with `tools` built in, five steps, no retry unless `settings` says. */
export function anthropicRunner(
  baseUrl: string,
  tools: AgentTool[],
  settings: Partial<ModelRunnerDeps["settings"]> = {},
): AgentRunner {
  return testModelRunner(
    { provider: "anthropic", model: "claude-sonnet-4-5", base_url: baseUrl, ...settings },
    tools,
  );
}
