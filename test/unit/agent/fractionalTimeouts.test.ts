import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelRunner } from "../../../src/agent/modelRunner.js";
import { silentLogger } from "../../../src/io/log.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

/**
 * Timeouts in seconds with a fraction that is not a whole number of milliseconds in floating point
 * (`2.01 * 1000` is 2009.9999999999998): AbortSignal.timeout refuses such a delay with a RangeError.
 */

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

const ctx = useHubs();
const transportFor = inMemoryServers(() => buildServer());

describe("timeouts written with a fraction", () => {
  it("agent.timeout_seconds: 2.01 bounds the run instead of failing it before the first model call", async () => {
    model.script({ text: "fine" });
    const runner = modelRunner({
      settings: {
        provider: "openai",
        model: "m",
        base_url: model.baseUrl,
        max_steps: 2,
        max_tokens: 10,
        retries: 0,
        timeout_seconds: 2.01,
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
    const reply = await runner.run(request, new AbortController().signal);
    expect(reply.text).toBe("fine");
    expect(reply.record?.outcome).toBe("ok");
  });

  it("an MCP server's timeout: 2.01 bounds each call and its approval instead of failing them", async () => {
    const h = ctx.hub(
      ctx.home,
      { fx: entry({ ...IN_MEMORY_ENTRY, timeout: 2.01, trust: "untrusted" }) },
      { transportFor },
    );
    expect(text(await h.call("fx", "echo", { text: "hi" }))).toBe("hi");
    // "add" has no read-only hint: the call waits for an approval, bounded by the same timeout.
    const refused = await h.call("fx", "add", { a: 1, b: 2 }).then(
      () => "ran",
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/needs approval/);
  });
});
