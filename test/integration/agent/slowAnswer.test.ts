import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateText } from "ai";
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { languageModel } from "../../../src/agent/provider.js";

/**
 * A model that writes its whole answer before sending any of it (a non-streamed request to Ollama on a CPU,
 * a reasoning model thinking for minutes) is waited for as long as agent.timeout_seconds allows (docs/agent.md):
 * the global fetch's own wait for an answer's headers (300 s in undici) does not cut it short. Here that
 * global wait is made 100 ms and the server answers after 2.5 s (undici checks its timeouts about once a second).
 */
const ANSWERS: Record<string, unknown> = {
  "/v1/chat/completions": {
    id: "c1",
    object: "chat.completion",
    created: 1,
    model: "slow-model",
    choices: [{ index: 0, message: { role: "assistant", content: "worth the wait" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 3 },
  },
  "/v1/messages": {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "slow-model",
    content: [{ type: "text", text: "worth the wait" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 3 },
  },
};

let server: Server;
let baseUrl: string;
let previous: Dispatcher;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      setTimeout(() => {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(ANSWERS[req.url ?? ""]));
      }, 2500);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  previous = getGlobalDispatcher();
  setGlobalDispatcher(new Agent({ headersTimeout: 100, bodyTimeout: 100 }));
});

afterAll(async () => {
  const short = getGlobalDispatcher();
  setGlobalDispatcher(previous);
  await short.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("a model slow to answer", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: the answer is taken however long it takes to come (the run's timeout bounds it, not the fetch pool's)`, async () => {
      const answer = await generateText({
        model: languageModel({
          provider,
          model: "slow-model",
          base_url: baseUrl,
          api_key: "sk-slow-answer-key",
        }),
        prompt: "take your time",
        maxRetries: 0,
      });
      expect(answer.text).toBe("worth the wait");
    });
  }
});
