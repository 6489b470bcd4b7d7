import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { contentFilterFailure } from "../../../src/agent/toolLoop.js";

/**
 * A cron job's run has the job's prompt, not a route's (and no skill): a refusal that says which prompt to
 * change names the job's (docs/agent.md, A run that fails; Content filters and refusals).
 */

const URL = "http://127.0.0.1:11434/v1/chat/completions";
const FILTERED = JSON.stringify({
  error: {
    message: "The response was filtered",
    type: null,
    param: "prompt",
    code: "content_filter",
    status: 400,
  },
});

describe("what a cron job's run says to change", () => {
  it("a prompt the content filter refused names the job's prompt; a route's run names the route's", () => {
    const used = { model: "m", modelKey: "agent.model", keySent: true, maxTokens: 4096 };
    const refused = new APICallError({
      message: "Bad",
      url: URL,
      requestBodyValues: {},
      statusCode: 400,
      responseBody: FILTERED,
    });
    expect(describeModelError(refused, [], URL, { ...used, route: "cron:digest" })).toMatch(
      / — the endpoint's content filter refused the prompt: change what the prompt of cron job digest or agent\.system_prompt asks for; on Azure OpenAI, the deployment's content filter decides$/,
    );
    expect(describeModelError(refused, [], URL, { ...used, route: "triage" })).toContain(
      "change what the route's prompt or agent.system_prompt asks for (the event's payload is part of the prompt)",
    );
  });

  it("an answer the content filter stopped names the job's prompt", () => {
    expect(contentFilterFailure("openai", "content_filter", "m", { route: "cron:digest" })).toBe(
      `the endpoint's content filter stopped the model's answer (finish_reason content_filter) — the run has no reply to deliver: change what the prompt of cron job digest or agent.system_prompt asks for, or use another agent.model than "m"; on Azure OpenAI, the deployment's content filter decides`,
    );
  });
});
