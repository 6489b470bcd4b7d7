import { toolError } from "./outcome.js";
import type { AgentTool } from "./tool.js";

/**
 * `tools` sharing one queue: a call starts when the previous call to any of them has ended, in the order
 * the calls were made. The run's workspace tools (`terminal`, `file_*`) share one directory, and a model
 * that asks for `file_write` then `terminal` (or two commands) in one turn means them in that order: run at
 * once, the second would race the first. A call whose run ended while it waited is not started.
 */
export function oneAtATime(tools: readonly AgentTool[]): AgentTool[] {
  let tail: Promise<unknown> = Promise.resolve();
  return tools.map((tool) => ({
    ...tool,
    execute(args, context) {
      const result = tail.then(() =>
        context.signal.aborted
          ? toolError(`${tool.name}: canceled: the run ended`)
          : tool.execute(args, context),
      );
      tail = result.catch(() => undefined);
      return result;
    },
  }));
}
