import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";

/**
 * The built-in `file` and `terminal` toolsets in real model runs (docs/agent-tools.md): a signed webhook
 * starts a run, the scripted OpenAI-compatible model calls the tools, and what the model got back is read
 * from its next request. Replies go to the log; the run journal says when a run is done.
 */

const SECRET = "hook-secret-for-builtin-tools";
const SEARCH_KEY = "BSA-search-key-0123456789";
const NAMED_SERVER = await bundledFixture(
  join(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
);
/** A server tool whose registered name, mcp__enterprise_github__<it>, is past the APIs' 64 characters. */
const LONG_TOOL = "list_repository_collaborators_with_permissions";

let model: FakeModel;
let gw: TestGateway;

function signedPost(route: string, body: unknown, id: string) {
  return postSignedIssue(gw.url(`/webhooks/${route}`), SECRET, body, id);
}

function journal(): Array<{ key: string }> {
  return journalLines<{ key: string }>(gw.home.dir);
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
        files: { prompt: "p", toolsets: ["file", "no_mcp"] },
        "files-b": { prompt: "p", toolsets: ["file", "no_mcp"] },
        github: { prompt: "p", toolsets: ["enterprise_github"] },
        vision: { prompt: "p", toolsets: ["vision_analyze", "no_mcp"] },
      },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, max_steps: 3 },
        tools: { web_search: { backend: "brave", api_key: SEARCH_KEY } },
        mcp_servers: {
          enterprise_github: { command: process.execPath, args: [NAMED_SERVER, LONG_TOOL, "get_me"] },
        },
      },
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

  it("is its own for a later run of the same delivery (the id sent again after the idempotency hour)", async () => {
    const runsOf = (id: string) => journal().filter((line) => line.key === `webhook:files:${id}`).length;
    for (const attempt of [1, 2]) {
      model.requests.length = 0;
      model.script(
        { toolCalls: [{ name: "file_list", args: {} }] },
        { toolCalls: [{ name: "file_write", args: { path: "left.txt", content: `run ${attempt}` } }] },
        { text: "done" },
      );
      expect((await signedPost("files", {}, "resent-1")).status).toBe(202);
      await vi.waitFor(
        () => {
          if (runsOf("resent-1") < attempt) throw new Error("not journalled yet");
        },
        { timeout: 10_000, interval: 20 },
      );
      // The later run finds its workspace empty, not the earlier run's file.
      expect(toolMessages(1)).toEqual(["(empty)"]);
      // Past the idempotency hour, the same id is a new event.
      gw.clock.advance(3_600_001);
    }
    const dirs = readdirSync(join(gw.home.dir, "workspaces", "default")).filter((d) =>
      d.startsWith("files_resent-1-"),
    );
    expect(dirs).toHaveLength(2);
    const [first] = dirs.sort();
    expect(dirs).toEqual([first, `${first}-2`]);
  });
});

describe("svc's secrets in a tool's result", () => {
  it("a file quoting the web_search key or the webhook secret reaches the model as [redacted]", async () => {
    model.script(
      callTool("file_write", { path: "env", content: `BRAVE=${SEARCH_KEY}\nHOOK=${SECRET}\n` }),
      callTool("file_read", { path: "env" }),
      { text: "read" },
    );
    await run("files", "secrets-1");
    expect(toolMessages(2)).toEqual(["wrote 67 bytes to env", "BRAVE=[redacted]\nHOOK=[redacted]\n"]);
  });
});

describe("tool names", () => {
  it("a registered name longer than 64 characters is offered shortened, so the request is valid, and the call reaches the tool", async () => {
    const registered = `mcp__enterprise_github__${LONG_TOOL}`;
    expect(registered.length).toBeGreaterThan(64);
    model.script({ text: "seen" });
    await run("github", "names-1");
    const offered = ((model.requests[0]?.json.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toContain("mcp__enterprise_github__get_me");
    const short = offered.find((name) => name !== "mcp__enterprise_github__get_me") ?? "";
    expect(short).toMatch(new RegExp(`^${registered.slice(0, 55)}_[0-9a-f]{8}$`));
    expect(short).toHaveLength(64);

    model.requests.length = 0;
    model.script({ toolCalls: [{ name: short, args: {} }] }, { text: "listed" });
    await run("github", "names-2");
    expect(toolMessages(1)).toEqual([LONG_TOOL]);
    // The run records the call under the registered name.
    const line = journal().find((l) => l.key === "webhook:github:names-2") as { run?: unknown };
    expect(line.run).toMatchObject({ outcome: "ok", toolCalls: [{ name: registered, ok: true }] });
  });
});

describe("vision_analyze in a model run", () => {
  it("asks the run's model about the image, and that call's tokens count in the run's usage", async () => {
    const image = "data:image/png;base64,iVBORw0KGgo=";
    model.script(
      { toolCalls: [{ name: "vision_analyze", args: { image_url: image, question: "What is it?" } }] },
      { text: "a red dot" },
      { text: "done" },
    );
    await run("vision", "vision-1");
    // The second request is the image question, with the image inline.
    const asked = JSON.stringify(model.requests[1]?.json.messages);
    expect(asked).toContain("What is it?");
    expect(asked).toContain(image);
    expect(toolMessages(2)).toEqual(["a red dot"]);
    const line = journal().find((l) => l.key === "webhook:vision:vision-1") as { run?: unknown };
    // Three model calls of 10 tokens in and 5 out each (the fake's usage).
    expect(line.run).toMatchObject({ steps: 2, usage: { input: 30, output: 15 } });
  });
});
