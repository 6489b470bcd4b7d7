import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import { isPlaceholderKey } from "../../../src/io/credentials.js";
import { silentLogger } from "../../../src/io/log.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

const runnerWithKey = (api_key: string) =>
  modelRunner({
    settings: {
      provider: "openai",
      model: "m",
      base_url: model.baseUrl,
      api_key,
      max_steps: 2,
      max_tokens: 10,
      retries: 0,
      timeout_seconds: 30,
      max_concurrent_runs: 1,
      max_tool_result_chars: 100_000,
    },
    logger: silentLogger(),
  });

const request = {
  route: "r",
  event: "e",
  deliveryId: "d",
  prompt: "p",
  toolsets: ["no_mcp"],
  profile: undefined,
};

describe("agent.api_key set to a keyless server's placeholder", () => {
  it("vLLM's EMPTY is sent but not hidden: the reply keeps the word", async () => {
    model.script({ text: "The build queue is EMPTY, nothing to review." });
    const result = await runnerWithKey("EMPTY").run(request, new AbortController().signal);
    expect(model.requests.at(-1)?.headers.authorization).toBe("Bearer EMPTY");
    expect(result.text).toBe("The build queue is EMPTY, nothing to review.");
  });

  it("a key a provider issues is still hidden in the reply", async () => {
    model.script({ text: "your key is sk-proj-Zq81xKEY55abcdef and that is all" });
    const result = await runnerWithKey("sk-proj-Zq81xKEY55abcdef").run(request, new AbortController().signal);
    expect(result.text).toBe("your key is [redacted] and that is all");
  });

  it("placeholders are words of letters and hyphens under 24 characters; anything with a digit is a key", () => {
    for (const key of ["EMPTY", "ollama", "none", "lm-studio", "sk-no-key-required", "not-needed"])
      expect(isPlaceholderKey(key), key).toBe(true);
    for (const key of [
      "token-abc123",
      "sk-ant-api03-AbCdEf",
      "s3cret",
      "abcdefghijklmnopqrstuvwxyzABCD",
      "sk_live",
    ])
      expect(isPlaceholderKey(key), key).toBe(false);
  });
});
