import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { languageModel, modelEndpoint } from "../../../src/agent/provider.js";

/**
 * A model endpoint that answers with a redirect (docs/agent.md, Faults): svc does not follow it, since fetch
 * would send the request again to wherever it leads, another host included, with the `x-api-key` header
 * and the run's prompt. The run fails naming where it led.
 */
const KEY = "sk-redirected-key-never-sent";

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const close = async (server: Server) => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

let elsewhere: Server;
let elsewhereUrl: string;
const reached: IncomingHttpHeaders[] = [];
let endpoint: Server;
let baseUrl: string;

beforeAll(async () => {
  elsewhere = createServer((req, res) => {
    reached.push(req.headers);
    req.resume();
    res.writeHead(404).end("not here");
  });
  elsewhereUrl = await listen(elsewhere);
  endpoint = createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: `${elsewhereUrl}/collect${req.url}?token=abc` }).end();
  });
  baseUrl = `${await listen(endpoint)}/v1`;
});

afterAll(async () => {
  await Promise.all([close(elsewhere), close(endpoint)]);
});

describe("a model endpoint that redirects", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: the redirect is not followed (the key and the prompt stay home) and the failure names where it led`, async () => {
      const settings = { provider, model: "m", base_url: baseUrl, api_key: KEY };
      const failure = await generateText({
        model: languageModel(settings),
        prompt: "the prompt",
        maxRetries: 0,
      }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeDefined();
      expect(reached).toEqual([]);
      const path = provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
      expect(describeModelError(failure, [KEY], modelEndpoint(settings))).toBe(
        `model endpoint ${baseUrl}${path.slice(3)} answered HTTP 307, a redirect to ${elsewhereUrl}/collect${path}, which svc does not follow (the request carries agent.api_key and the prompt) — set agent.base_url to where it leads`,
      );
    });
  }
});
