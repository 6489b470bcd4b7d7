import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { type StatelessJsonMcp, serveStatelessJsonMcp } from "../../helpers/statelessJsonMcp.js";

/**
 * A url server's tool that takes longer than undici's own 300 s wait for an answer's headers is waited for as
 * long as the server's `timeout` allows (docs/mcp.md). The server answers in JSON (as stateless and Python
 * servers set to `json_response` do), so its headers come with the result. undici's clock (its timers module,
 * which exports `tick` for tests) is moved 301 s on while the call is held.
 */
const undiciTimers = createRequire(import.meta.url)(
  join(dirname(createRequire(import.meta.url).resolve("undici")), "lib/util/timers.js"),
) as { tick(delay?: number): void };

const SECRET = "hook-secret-for-long-tool-calls";
let release: (() => void) | undefined;
let held: Promise<void> | undefined;
let entered = false;

function slowServer(): McpServer {
  const server = new McpServer({ name: "slow", version: "1.0.0" });
  server.registerTool("report", { annotations: { readOnlyHint: true } }, async () => {
    entered = true;
    await held;
    return { content: [{ type: "text", text: "the report, after a long while" }] };
  });
  return server;
}

let mcp: StatelessJsonMcp | undefined;
let url: string;
let model: FakeModel;
let gw: TestGateway;

beforeAll(async () => {
  mcp = await serveStatelessJsonMcp(slowServer);
  url = mcp.url;
  model = await startFakeOpenAI();
  gw = await startTestGateway({
    config: webhookConfig(
      { nightly: { prompt: "write the report" } },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, retries: 0, timeout_seconds: 3600 },
        mcp_servers: { reports: { url, timeout: 900 } },
      },
    ),
  });
});

afterAll(async () => {
  release?.();
  await gw?.stop();
  await model?.close();
  await mcp?.close();
});

describe("a url server's tool slower than undici's 300 s", () => {
  it("is waited for up to mcp_servers.<name>.timeout (900 s): its result reaches the model", async () => {
    held = new Promise((resolve) => {
      release = resolve;
    });
    model.script(callTool("mcp__reports__report"), { text: "sent the report" });
    await postSignedIssue(gw.url("/webhooks/nightly"), SECRET, { a: 1 }, "long-1");
    await vi.waitFor(() => expect(entered).toBe(true), { timeout: 10_000, interval: 20 });
    // Each timer of undici's is started at its next tick (half a second): the first tick starts the call's.
    undiciTimers.tick(0);
    undiciTimers.tick(301_000);
    release?.();
    const line = await vi.waitFor(
      () => {
        const found = journalLines<{ delivery_id: string; run: { toolCalls: unknown[] } }>(gw.home.dir).find(
          (l) => l.delivery_id === "long-1",
        );
        if (found === undefined) throw new Error("not journalled yet");
        return found;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(line.run.toolCalls).toEqual([{ name: "mcp__reports__report", ms: expect.any(Number), ok: true }]);
    const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
    const tool = messages.find((m) => m.role === "tool");
    expect(tool?.content).toBe("the report, after a long while");
  });
});
