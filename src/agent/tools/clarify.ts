import { argsObject, stringArg, textOutcome, toolError } from "./outcome.js";
import type { AgentTool } from "./tool.js";

export const NO_ONE_PRESENT =
  "No one is present to answer: this run was started by a webhook or a cron job. Proceed with your best " +
  "judgement, stating the assumptions you make, or say in your reply what you need to know.";

/** `clarify`: a question for the user; in unattended runs the answer says no one can reply. */
export function clarifyTool(): AgentTool {
  return {
    name: "clarify",
    description:
      "Ask the user a clarifying question when the request is ambiguous. In unattended runs (webhooks, " +
      "cron jobs) no one can answer; the result says so.",
    inputSchema: {
      type: "object",
      properties: { question: { type: "string", description: "The question for the user" } },
      required: ["question"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const question = stringArg(object, "question");
      if (typeof question !== "string") return toolError(question.error);
      if (context.unattended) return textOutcome(NO_ONE_PRESENT);
      return toolError(
        "clarify: this run has no way to ask the user; proceed with your best judgement, or put the question in your reply",
      );
    },
  };
}
