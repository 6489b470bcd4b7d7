import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import { silentLogger } from "../../../src/io/log.js";

/**
 * A model endpoint that answers with far more than any model answer holds (a base_url naming something else,
 * a broken server or proxy): the answer is read no further than 64 MiB, and the run fails saying so. Before,
 * the whole body was read into memory (a 300 MB answer took the gateway past 1.7 GB, and was delivered as a
 * 300 MB reply), and one past V8's longest string failed the run with "Cannot create a string longer than ...".
 */
const MIB = 1024 * 1024;
/** How many MiB the endpoint would send: past the cap. */
const SENT_MIB = 80;

let server: Server;
let baseUrl: string;
let status = 200;
/** Per request: whether the endpoint got to write its whole answer. */
const finished: boolean[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const i = finished.push(false) - 1;
      res.writeHead(status, { "content-type": "application/json" });
      res.write('{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,');
      res.write('"message":{"role":"assistant","content":"');
      const chunk = Buffer.alloc(MIB, "y");
      let sent = 0;
      const pump = () => {
        while (sent < SENT_MIB) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end('"},"finish_reason":"stop"}]}', () => {
          finished[i] = true;
        });
      };
      res.on("close", () => res.removeAllListeners("drain"));
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const run = (provider: "openai" | "anthropic", retries: number) =>
  modelRunner({
    settings: {
      provider,
      model: "m",
      base_url: baseUrl,
      api_key: "sk-oversized-answer-0123456789",
      max_steps: 2,
      max_tokens: 100,
      retries,
      timeout_seconds: 60,
      max_concurrent_runs: 1,
      max_tool_result_chars: 100_000,
    },
    logger: silentLogger(),
    sleep: async () => {},
  })
    .run(
      { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: ["no_mcp"], profile: undefined },
      new AbortController().signal,
    )
    .then(
      () => undefined,
      (err: unknown) => err,
    );

describe("a model answer larger than 64 MiB", () => {
  it("a 200: read no further than 64 MiB, and the run fails at once saying so (no retry gets a smaller one)", async () => {
    status = 200;
    finished.length = 0;
    const failure = await run("openai", 1);
    expect(failure).toBeInstanceOf(AgentRunFailure);
    expect((failure as AgentRunFailure).message).toBe(
      `model endpoint ${baseUrl}/chat/completions gave an answer svc cannot use (HTTP 200): an answer of more than 64 MiB, read no further — no model answer is that large: check that agent.base_url is the model's API`,
    );
    expect(finished).toEqual([false]);
  });

  it("an error answer (HTTP 500, here from a Messages API endpoint): read no further either, and named so", async () => {
    status = 500;
    finished.length = 0;
    const failure = await run("anthropic", 0);
    expect((failure as AgentRunFailure).message).toBe(
      `model endpoint ${baseUrl}/messages answered HTTP 500: an answer of more than 64 MiB, read no further — no model answer is that large: check that agent.base_url is the model's API`,
    );
    expect(finished).toEqual([false]);
  });
});
