import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { loggedReply, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postSignedIssue } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { signalProcess } from "../../helpers/process.js";
import { journalLines } from "../../helpers/runJournal.js";

/**
 * A tool result nesting objects and arrays thousands of levels deep (as a server in a language whose JSON
 * writer has no depth limit can send one) is refused as the call's failure, naming the server, the tool and
 * the limit (docs/mcp.md, Tool calls) — by `svc mcp call` and in an agent run — rather than overflowing the
 * stack of what reads or writes it out ("Maximum call stack size exceeded"). A real SDK server (its own
 * process: stdio for the CLI, Streamable HTTP for the gateway), the fake model on 127.0.0.1.
 */

const FIXTURE = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/deep-result-server.mjs"),
);
const SECRET = "hook-secret-deep-result";
const refused = (depth: number) => ({ depth, where: "structured" as const });

let home: TempHome;
let http: ChildProcess;
let httpUrl: string;
let model: FakeModel;
let gw: TestGateway;
let commandGw: TestGateway;
const AGENT = await bundledFixture(resolve(import.meta.dirname, "../../fixtures/agent/mcpClientAgent.mjs"));

/** `svc <args>` run in this worker (test/helpers/inProcessCli.ts): what it writes and its exit code. */
const svc = (args: string[]) =>
  runInProcess(args, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

const TOO_DEEP =
  'mcp_servers.deep: "deep" failed: its result nests objects or arrays deeper than 512 levels, more than svc reads, so it is not used — a fault of the server (have the tool answer a flatter result)';

beforeAll(async () => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        deep: { command: process.execPath, args: [FIXTURE], tools: { resources: true, prompts: true } },
      },
    }),
  );
  http = spawn(process.execPath, [FIXTURE, "--http"], { stdio: ["pipe", "pipe", "inherit"] });
  httpUrl = await new Promise<string>((done, fail) => {
    let out = "";
    http.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) done(out.trim());
    });
    http.on("exit", () => fail(new Error("the HTTP fixture exited before it listened")));
  });
  model = await startFakeOpenAI();
  gw = await startTestGateway({
    config: webhookConfig(
      { triage: { prompt: "Issue: {issue.title}", deliver: "log" } },
      { secret: SECRET },
      {
        agent: { provider: "openai", model: "m", base_url: model.baseUrl, retries: 0 },
        mcp_servers: { deep: { url: httpUrl } },
      },
    ),
  });
  commandGw = await startTestGateway({
    config: webhookConfig(
      { all: { prompt: "{call}", deliver: "log" } },
      { secret: SECRET },
      {
        agent: { provider: "command", command: [process.execPath, AGENT] },
        mcp_servers: { deep: { url: httpUrl } },
      },
    ),
  });
}, 30_000);

afterAll(async () => {
  await Promise.all([gw?.stop(), commandGw?.stop()]);
  await model?.close();
  if (http?.pid !== undefined) signalProcess(http.pid, "SIGTERM");
  home?.cleanup();
});

describe("svc mcp call: a result nested deeper than 512 levels (stdio)", () => {
  it.each([
    ["structuredContent, printed as JSON", ["--json"], "structured"],
    ["a content block's _meta", [], "meta"],
  ])(
    "%s: the call fails naming the server, the tool and the limit",
    async (_, flags, where) => {
      const res = await svc([
        "mcp",
        "call",
        "deep",
        "deep",
        ...flags,
        "--args",
        JSON.stringify({ depth: 20_000, where }),
      ]);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      expect(res.stderr).toBe(`svc: ${TOO_DEEP}\n`);
    },
    20_000,
  );

  it.each([
    ["read_resource", { uri: "deep://x" }],
    ["get_prompt", { name: "deep" }],
  ])(
    "the utility tool %s, whose read answers 20 000 levels in a _meta, fails the same way",
    async (tool, args) => {
      const res = await svc(["mcp", "call", "deep", tool, "--args", JSON.stringify(args)]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`svc: ${TOO_DEEP.replaceAll('"deep"', `"${tool}"`)}\n`);
    },
    20_000,
  );

  it("a result 300 levels deep is printed as the server gave it", async () => {
    const res = await svc([
      "mcp",
      "call",
      "deep",
      "deep",
      "--json",
      "--args",
      JSON.stringify({ depth: 300, where: "structured" }),
    ]);
    expect(res.code).toBe(0);
    expect(JSON.stringify(JSON.parse(res.stdout).structuredContent)).toMatch(/^\{"a":\[\{"a":\[/);
  }, 20_000);
});

describe("an agent run whose model calls a tool answering 20 000 levels deep (Streamable HTTP)", () => {
  it("gets the refusal as the tool's error; the run goes on and its journal says why", async () => {
    model.script(callTool("mcp__deep__deep", refused(20_000)), { text: "done" });
    const res = await postSignedIssue(gw.url("/webhooks/triage"), SECRET, { issue: { title: "t" } }, "d-1");
    expect(res.status).toBe(202);
    const line = await vi.waitFor(
      () => {
        const found = journalLines<{ delivery_id: string; run?: { toolCalls: unknown[] } }>(gw.home.dir).find(
          (l) => l.delivery_id === "d-1",
        );
        if (found === undefined) throw new Error("not journalled yet");
        return found;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(line.run?.toolCalls).toEqual([
      expect.objectContaining({ name: "mcp__deep__deep", ok: false, error: TOO_DEEP }),
    ]);
    type ChatRequest = { messages: Array<{ role: string; content: unknown }> };
    const messages = (model.requests[1]?.json as ChatRequest | undefined)?.messages ?? [];
    expect(messages.filter((m) => m.role === "tool").map((m) => String(m.content))).toEqual([TOO_DEEP]);
    expect(JSON.stringify(gw.logs())).not.toMatch(/Maximum call stack|\n\s+at /);
  }, 20_000);
});

describe("a command agent calling, through SVC_MCP_URL, a tool answering 20 000 levels deep (Streamable HTTP)", () => {
  it("gets the refusal as the call's tool error (isError), not a call left unanswered", async () => {
    const prompt = { call: JSON.stringify({ call: "mcp__deep__deep", arguments: refused(20_000) }) };
    const res = await postSignedIssue(commandGw.url("/webhooks/all"), SECRET, prompt, "c-1");
    expect(res.status).toBe(202);
    const { result } = await loggedReply<{
      result: { content: Array<{ text: string }>; isError?: boolean };
    }>(commandGw, "c-1");
    expect(result).toEqual({ content: [{ type: "text", text: TOO_DEEP }], isError: true });
  }, 20_000);
});
