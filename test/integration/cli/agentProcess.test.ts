import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground } from "./svc.js";

/**
 * The whole path in the `svc` process users run (the bundled build when current, see cliEntry.ts): a webhook
 * wakes the model, the model calls a tool of an MCP server the gateway started, the tool's result goes back
 * to the model, and its answer is delivered to the log. Other agent tests run the gateway inside the test
 * worker from the source; this one guards what the build puts together (the AI SDK, the MCP SDK, undici).
 */

const STDIO_SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

const homes: TempHome[] = [];
const models: FakeModel[] = [];
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  for (const model of models.splice(0)) await model.close();
  for (const home of homes.splice(0)) home.cleanup();
});

describe.each([
  ["openai", startFakeOpenAI],
  ["anthropic", startFakeAnthropic],
] as const)("svc gateway run with agent.provider %s", (provider, startModel) => {
  it("answers a webhook with a run that calls an MCP tool and delivers the model's answer", async () => {
    const model = await startModel();
    models.push(model);
    model.script(
      { toolCalls: [{ name: "mcp__fx__env", args: { name: "PROCESS_TEST_VALUE" } }] },
      { text: "the value is in" },
    );
    const home = tempHome();
    homes.push(home);
    home.write(
      "config.yaml",
      stringify(
        cliConfig(
          { r: { secret: "INSECURE_NO_AUTH", prompt: "look at {thing}" } },
          {
            agent: { provider, model: "m1", base_url: model.baseUrl },
            mcp_servers: {
              fx: {
                command: process.execPath,
                args: [STDIO_SERVER],
                env: { PROCESS_TEST_VALUE: "from-env" },
              },
            },
          },
        ),
      ),
    );
    gateway = await runForeground(home);
    const answer = await fetch(`http://127.0.0.1:${gateway.port}/webhooks/r`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ thing: "the build" }),
    });
    expect(answer.status).toBe(202);
    const running = gateway;
    await vi.waitFor(() => expect(running.stdout()).toContain("the value is in"), {
      timeout: 20_000,
      interval: 50,
    });
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[0]?.json)).toContain("look at the build");
    // The second request carries the tool's result: the MCP server's environment variable.
    expect(JSON.stringify(model.requests[1]?.json)).toContain("from-env");
    expect(running.stdout()).toMatch(/1 tool call \(mcp__fx__env ok/);
  });
});
