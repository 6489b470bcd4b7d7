import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * The built-in `file` and `terminal` toolsets in real model runs (docs/agent-tools.md): a signed webhook
 * starts a run, the scripted OpenAI-compatible model calls the tools, and what the model got back is read
 * from its next request. Replies go to the log; the run journal says when a run is done.
 */

const SECRET = "hook-secret-for-builtin-tools";

let model: FakeModel;
let gw: TestGateway;

function signedPost(route: string, body: unknown, id: string) {
  const text = JSON.stringify(body);
  const signature = `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`;
  return postJson(gw.url(`/webhooks/${route}`), text, {
    "X-Hub-Signature-256": signature,
    "X-GitHub-Event": "issues",
    "X-GitHub-Delivery": id,
  });
}

function journal(): Array<{ key: string }> {
  const dir = join(gw.home.dir, "sessions", "webhook-runs");
  return readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line)),
  );
}

/** Posts one event and waits until its run is journalled. */
async function run(route: string, id: string): Promise<void> {
  expect((await signedPost(route, {}, id)).status).toBe(202);
  await vi.waitFor(
    () => {
      if (!journal().some((line) => line.key === `webhook:${route}:${id}`))
        throw new Error("not journalled yet");
    },
    { timeout: 10_000, interval: 20 },
  );
}

type ChatRequest = { messages: Array<{ role: string; content: unknown }> };
/** The tool results the model was sent in request `i`, in the order of its calls. */
const toolMessages = (i: number) =>
  ((model.requests[i]?.json ?? { messages: [] }) as unknown as ChatRequest).messages
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

beforeAll(async () => {
  model = await startFakeOpenAI();
  gw = await startTestGateway({
    config: webhookConfig(
      {
        files: { prompt: "p", toolsets: ["file"] },
        "files-b": { prompt: "p", toolsets: ["file"] },
      },
      { secret: SECRET, rate_limit: 1000 },
      { agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, max_steps: 3 } },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await model?.close();
});

beforeEach(() => {
  model.requests.length = 0;
});

describe("the run's workspace", () => {
  it("is its own for each run: ids that differ only in unsafe characters, or split across route and id, share nothing", async () => {
    // A sender chooses its delivery ids: each run finds its workspace empty and leaves a file in it.
    const runs = [
      ["files", "ws:1"],
      ["files", "ws/1"],
      ["files-b", "ws:1"],
      ["files", "b-ws:1"],
    ] as const;
    for (const [route, id] of runs) {
      model.requests.length = 0;
      model.script(
        { toolCalls: [{ name: "file_list", args: {} }] },
        { toolCalls: [{ name: "file_write", args: { path: "left.txt", content: id } }] },
        { text: "done" },
      );
      await run(route, id);
      expect(toolMessages(1)).toEqual(["(empty)"]);
    }
    // Where the docs say: the readable id and a hash, under the profile.
    const dirs = readdirSync(join(gw.home.dir, "workspaces", "default")).sort();
    expect(dirs).toHaveLength(4);
    expect(dirs.every((d) => /^[A-Za-z0-9_-]+-[0-9a-f]{12}$/.test(d))).toBe(true);
    expect(dirs.filter((d) => d.startsWith("files_ws_1-"))).toHaveLength(2);
  });
});
