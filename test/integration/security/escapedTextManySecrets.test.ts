import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FakeModel } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const STDERR_SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/stderr-lines-server.mjs"),
);

const hex = (seed: string) => createHash("sha256").update(seed).digest("hex");
/** As many stored subscriptions as a gateway serving thousands of senders holds, each with a 64-hex secret. */
const SECRETS = Array.from({ length: 2500 }, (_, i) => hex(`subscription ${i}`));
const subscriptions = Object.fromEntries(
  SECRETS.map((secret, i) => [
    `sub-${i}`,
    {
      secret,
      prompt: "x",
      deliver: "log",
      enabled: true,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    },
  ]),
);
/** One subscription's secret with every other unit a `\u` escape, as a JSON encoder may echo it. */
const echoed = (secret: string) =>
  [...secret].map((c, i) => (i % 2 === 0 ? `\\u00${c.charCodeAt(0).toString(16)}` : c)).join("");

let gw: TestGateway | undefined;
let model: FakeModel | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await model?.close();
  model = undefined;
});

/**
 * Every text svc sends or logs is redacted of every stored subscription's secret; one with a `\u` escape or a
 * backslash in it (a Windows path, a JSON log line of `café`) is looked through for their escaped echoes too,
 * which with thousands of them failed the run (or stopped the gateway) after holding it for seconds.
 */
describe("a text with \\u escapes, with 2,500 stored subscriptions", () => {
  it("a model run's prompt holding a Windows path and an escaped secret is sent, the secret [redacted]; an MCP server's stderr line of caf\\u00e9 is logged and the gateway serves on", async () => {
    model = await startFakeOpenAI();
    model.script({ text: "ok" });
    const secret = SECRETS[1717] as string;
    gw = await startTestGateway({
      files: { "webhook_subscriptions.json": JSON.stringify(subscriptions) },
      config: webhookConfig(
        { open: { secret: "INSECURE_NO_AUTH", prompt: "{msg}", deliver: "log", toolsets: ["no_mcp"] } },
        { rate_limit: 1000 },
        {
          agent: {
            provider: "openai",
            model: "test-model",
            base_url: model.baseUrl,
            api_key: "sk-test-0123456789",
          },
          mcp_servers: {
            chatty: {
              command: process.execPath,
              args: [
                STDERR_SERVER,
                '{"level":"info","msg":"starting caf\\u00e9 server"}',
                `{"level":"debug","msg":"token ${echoed(secret)}"}`,
              ],
            },
          },
        },
      ),
    });
    const running = gw;

    const msg = `C:\\users\\ci\\app.log \\u2713 deployed with ${echoed(secret)}`;
    expect((await postJson(running.url("/webhooks/open"), { msg })).status).toBe(202);
    const sent = await vi.waitFor(
      () => {
        const request = model?.requests[0];
        if (request === undefined) throw new Error("no model request yet");
        return JSON.stringify(request.json);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(sent).toContain(
      JSON.stringify("C:\\users\\ci\\app.log \\u2713 deployed with [redacted]").slice(1, -1),
    );
    expect(sent).not.toContain(echoed(secret).slice(0, 24));

    const lines = () => running.logs().map((line) => line.msg);
    await vi.waitFor(
      () =>
        expect(lines()).toEqual(
          expect.arrayContaining([
            '[mcp:chatty] {"level":"info","msg":"starting caf\\u00e9 server"}',
            '[mcp:chatty] {"level":"debug","msg":"token [redacted]"}',
          ]),
        ),
      { timeout: 20_000, interval: 50 },
    );
    expect((await fetch(running.url("/health"))).status).toBe(200);
    const logged = JSON.stringify(running.logs());
    expect(logged).not.toContain("Invalid regular expression");
    expect(logged).not.toContain(echoed(secret).slice(0, 24));
    expect(logged).not.toContain(secret);
  });
});
