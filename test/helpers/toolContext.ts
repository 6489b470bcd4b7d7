import type { ToolContext } from "../../src/agent/tools/tool.js";

/** A run's ToolContext for calling a built-in tool directly: an unattended webhook run by default. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    route: "gh",
    deliveryId: "d-1",
    profile: "default",
    unattended: true,
    workspace: async () => {
      throw new Error("this test gives the run no workspace");
    },
    ...overrides,
  };
}

/** The text of a successful outcome (throws on a tool error, so the test shows it). */
export function outcomeText(
  outcome: Awaited<ReturnType<import("../../src/agent/tools/tool.js").AgentTool["execute"]>>,
) {
  if (!outcome.ok) throw new Error(`tool error: ${outcome.error}`);
  return outcome.content.map((part) => (part.type === "text" ? part.text : `[${part.mimeType}]`)).join("");
}
