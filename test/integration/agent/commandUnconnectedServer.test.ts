import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ProtectedMcp, startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { loggedReply, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";

/**
 * A `command` agent calling, through its `SVC_MCP_URL`, a tool of an MCP server that was not connected when
 * its run began (an `auth: oauth` server nobody has logged in to) gets that server's own error — which
 * server, why, what to run — as the model runs do, not "unknown tool". A name no configured server could
 * have keeps the generic answer. Real sockets on 127.0.0.1: a real SDK MCP server refusing every token,
 * a recording SDK server, and the SDK client in the command.
 */

const SECRET = "hook-secret-command-unconnected";
const AGENT = await bundledFixture(
  new URL("../../fixtures/agent/mcpClientAgent.mjs", import.meta.url).pathname,
);

let locked: ProtectedMcp;
let open: RecordingMcp;
let gw: TestGateway;

function reply(deliveryId: string): Promise<{
  result: { content: Array<{ text: string }>; isError?: boolean };
}> {
  return loggedReply(gw, deliveryId);
}

const call = (tool: string) => ({ call: JSON.stringify({ call: tool, arguments: {} }) }) as const;

beforeAll(async () => {
  [locked, open] = await Promise.all([
    startProtectedMcp(
      () => "http://127.0.0.1:9/",
      async () => false,
    ),
    startRecordingMcp(),
  ]);
  gw = await startTestGateway({
    config: webhookConfig(
      { all: { prompt: "{call}", deliver: "log" } },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: { provider: "command", command: [process.execPath, AGENT] },
        mcp_servers: { notes: { url: locked.url, auth: "oauth" }, open: { url: open.url } },
      },
    ),
  });
  await vi.waitFor(
    () => {
      if (!gw.logs().some((l) => l.msg.includes("mcp_servers.notes: not logged in")))
        throw new Error("not yet");
    },
    { timeout: 10_000, interval: 20 },
  );
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([locked?.close(), open?.close()]);
});

describe("a command agent's call to a tool of an MCP server that was not connected when the run began", () => {
  it("gets the server's own error: which server, not logged in, what to run", async () => {
    const res = await postSignedIssue(gw.url("/webhooks/all"), SECRET, call("mcp__notes__whoami"), "c-1");
    expect(res.status).toBe(202);
    const { result } = await reply("c-1");
    expect(result.isError).toBe(true);
    expect(result.content.map((c) => c.text)).toEqual([
      'mcp_servers.notes was not connected when this run began (notes: not logged in — run `svc mcp login notes`), so the run was not offered its tools; "mcp__notes__whoami" was not run',
    ]);
  });

  it("keeps the generic answer for a tool no configured server could have", async () => {
    await postSignedIssue(gw.url("/webhooks/all"), SECRET, call("mcp__open__nope"), "c-2");
    const { result } = await reply("c-2");
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toBe('unknown tool "mcp__open__nope": this run does not offer it');
  });
});
