import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { loggedReply, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";

/**
 * `agent.provider: command` with the gateway's MCP servers (docs/agent-tools.md): each run's command gets
 * `SVC_MCP_URL` and `SVC_MCP_TOKEN`, and an SDK client in that command lists and calls exactly the tools
 * the run may use, under the same toolset and trust rules as model runs.
 */

const SECRET = "hook-secret-for-command-mcp";
const AGENT = await bundledFixture(
  new URL("../../fixtures/agent/mcpClientAgent.mjs", import.meta.url).pathname,
);

let notes: RecordingMcp;
let other: RecordingMcp;
let gw: TestGateway;

function signedPost(route: string, body: unknown, id: string) {
  return postSignedIssue(gw.url(`/webhooks/${route}`), SECRET, body, id);
}

/** The command's reply, as the log delivery wrote it: `{ tools, result }`. */
function reply(deliveryId: string): Promise<{
  tools: Array<{ name: string; annotations?: { readOnlyHint?: boolean } }>;
  result: { content: Array<{ text: string }>; isError?: boolean };
}> {
  return loggedReply(gw, deliveryId);
}

beforeAll(async () => {
  [notes, other] = await Promise.all([startRecordingMcp("notes: "), startRecordingMcp("other: ")]);
  gw = await startTestGateway({
    config: webhookConfig(
      {
        // The prompt is the JSON the fixture agent reads: which tool to call with what.
        all: { prompt: "{call}", deliver: "log" },
        only_other: { prompt: "{call}", toolsets: ["other"], deliver: "log" },
      },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: { provider: "command", command: [process.execPath, AGENT] },
        mcp_servers: {
          notes: { url: notes.url, trust: "untrusted" },
          other: { url: other.url, trust: "trusted" },
        },
      },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([notes?.close(), other?.close()]);
});

beforeEach(() => {
  notes.calls.length = 0;
  other.calls.length = 0;
});

const call = (tool: string, args: Record<string, unknown>) =>
  ({ call: JSON.stringify({ call: tool, arguments: args }) }) as const;

describe("a command agent reaches the gateway's MCP servers through SVC_MCP_URL", () => {
  it("lists every enabled server's tools and calls one; the call reaches the real MCP server", async () => {
    expect((await signedPost("all", call("mcp__other__lookup", { key: "k1" }), "cmd-1")).status).toBe(202);
    const answer = await reply("cmd-1");
    expect(answer.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["mcp__notes__lookup", "mcp__other__lookup"]),
    );
    expect(answer.result.content[0]?.text).toBe("other: value of k1");
    // The server's readOnlyHint reaches the command's client; a write tool carries none.
    const annotations = (name: string) => answer.tools.find((t) => t.name === name)?.annotations;
    expect(annotations("mcp__other__lookup")).toEqual({ readOnlyHint: true });
    expect(annotations("mcp__other__delete_item")).toBeUndefined();
    expect(other.calls).toEqual([{ tool: "lookup", args: { key: "k1" } }]);
  });

  it("a route naming one server offers only that server's tools", async () => {
    expect((await signedPost("only_other", call("mcp__other__lookup", { key: "k2" }), "cmd-2")).status).toBe(
      202,
    );
    const answer = await reply("cmd-2");
    const names = answer.tools.map((t) => t.name);
    expect(names.some((n) => n.startsWith("mcp__notes__"))).toBe(false);
    expect(names).toContain("mcp__other__lookup");
  });

  it("a call that needs approval on an untrusted server is refused as a tool error and never reaches it", async () => {
    expect((await signedPost("all", call("mcp__notes__delete_item", { key: "x" }), "cmd-3")).status).toBe(
      202,
    );
    const answer = await reply("cmd-3");
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]?.text).toMatch(/refused/);
    expect(notes.calls).toEqual([]);
  });
});
