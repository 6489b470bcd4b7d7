import { execFile } from "node:child_process";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "./harness.js";

/**
 * `svc mcp call` on a server whose sampling request's model run fails (docs/agent.md, Sampling): the server
 * is told only that the run failed, and points at svc's log, not a gateway's; the reason goes to stderr
 * without SVC_LOG_LEVEL, free of the key. Real sockets on 127.0.0.1: the fake model, a real stdio MCP server.
 */

const KEY = "sk-cli-sampling-key-0123456789";
let home: TempHome;
let model: FakeModel;
beforeEach(async () => {
  home = tempHome();
  model = await startFakeOpenAI();
});
afterEach(async () => {
  await model.close();
  home.cleanup();
});

function svc(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...SVC_ARGV, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir } },
      (_err, stdout, stderr) => resolve({ stdout, stderr }),
    );
  });
}

it("a provider's 401: stderr says why the sampling run failed; the server's error points at svc's log", async () => {
  home.write(
    "config.yaml",
    stringify({
      agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, api_key: KEY, retries: 0 },
      mcp_servers: {
        fx: { command: process.execPath, args: [STDIO_FIXTURE], sampling: { enabled: true } },
      },
    }),
  );
  model.script({
    status: 401,
    body: JSON.stringify({
      error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error" },
    }),
  });
  const res = await svc(["mcp", "call", "fx", "sample", "--args", '{"prompt":"hi"}']);
  expect(model.requests).toHaveLength(1);
  expect(res.stdout).toContain("sampling failed: the model run failed (svc's log says why)");
  expect(res.stdout).not.toContain("gateway");
  const warned = res.stderr.split("\n").filter((l) => l.startsWith("warning: fx: sampling failed: "));
  expect(warned).toHaveLength(1);
  expect(warned[0]).toContain(`model endpoint ${model.baseUrl}/chat/completions`);
  expect(warned[0]).toContain("401");
  expect(`${res.stdout}${res.stderr}`).not.toContain(KEY);
}, 30_000);
