import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest (each needs real processes: conformance scenarios, killed and restarted
 * gateways, Redis instances, uWS's own idle timeout), slowest first. Vitest orders files by their last
 * duration when it has one and by size otherwise; a fresh clone has none, so these small but slow files
 * started last and ran on while the other workers sat idle.
 */
const SLOW_FIRST = [
  "test/conformance/mcpClient.test.ts",
  "test/integration/state/sigkill.test.ts",
  "test/integration/oauth/loginCommand.test.ts",
  "test/integration/cli/lifecycle.test.ts",
  "test/integration/webhook/sigtermBurst.test.ts",
  "test/integration/webhook/slowSenders.test.ts",
  "test/integration/redis/cluster.test.ts",
  "test/integration/webhook/limits.test.ts",
  "test/integration/mcp/cli.test.ts",
  "test/integration/redis/outage.test.ts",
  "test/integration/mcp/lifecycle.test.ts",
  "test/integration/mcp/realEverything.stdio.test.ts",
  "test/integration/mcp/realEverything.streamableHttp.test.ts",
  "test/integration/mcp/realEverything.sse.test.ts",
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
