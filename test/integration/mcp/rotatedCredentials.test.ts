import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, loggedReply, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/agent.md, Credentials in a reply, and docs/mcp.md: a token rotated in the default profile's `.env` is
 * sent by a server's next connect without a reload, and what it sends then is hidden as the token it replaced
 * was, in the delivered reply, the log and the run's session record.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const AGENT = await bundledFixture(join(import.meta.dirname, "../../fixtures/agent/mcpClientAgent.mjs"));
const OLD = "oldtoken-AAAA1111-rotated";
const NEW = "newtoken-BBBB2222-rotated";
const perTest = gatewayPerTest();

/** Every file under `dir`, read (none when it does not exist). */
function readAll(dir: string): string {
  let text = "";
  let entries: string[];
  try {
    entries = readdirSync(dir, { recursive: true, encoding: "utf8" });
  } catch {
    return "";
  }
  for (const entry of entries) {
    try {
      text += readFileSync(join(dir, entry), "utf8");
    } catch {
      // A directory.
    }
  }
  return text;
}

/** The agent calls `tool` of server `s` and replies with what it returned. */
async function called(gw: TestGateway, tool: string, args: Record<string, unknown>, id: string) {
  const call = JSON.stringify({ call: `mcp__s__${tool}`, arguments: args });
  const answer = await postJson(gw.url("/webhooks/r"), { call }, { "X-GitHub-Delivery": id });
  expect(answer.status).toBe(202);
  const { result } = await loggedReply<{ result: { content: Array<{ text: string }> } }>(gw, id);
  return result.content.map((c) => c.text);
}

const connects = (gw: TestGateway) => gw.logs().filter((l) => l.msg.startsWith("[mcp] s: connected")).length;

describe("a default-profile MCP token rotated in .env", () => {
  it("is hidden once a reconnect sends it, without a reload", async () => {
    const gw = await perTest.start({
      config: webhookConfig(
        {
          r: {
            secret: "INSECURE_NO_AUTH",
            prompt: "{call}",
            deliver: "log",
          },
        },
        {},
        {
          agent: { provider: "command", command: [process.execPath, AGENT] },
          mcp_servers: {
            s: { command: process.execPath, args: [SERVER, "--bye"], env: { API_TOKEN: "${TOK}" } },
          },
        },
      ),
      files: { ".env": `TOK=${OLD}\n` },
    });
    await vi.waitFor(() => expect(connects(gw)).toBe(1), { timeout: 10_000 });
    expect(await called(gw, "env", { name: "API_TOKEN" }, "d-1")).toEqual(["[redacted]"]);

    // Rotated, no reload: the server's next connect reads .env again and sends the new token.
    gw.home.write(".env", `TOK=${NEW}\n`, 0o600);
    expect(await called(gw, "bye", {}, "d-2")).toEqual(["bye"]);
    await vi.waitFor(() => expect(connects(gw)).toBe(2), { timeout: 15_000 });
    expect(await called(gw, "env", { name: "API_TOKEN" }, "d-3")).toEqual(["[redacted]"]);

    const log = readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain("d-3");
    expect(log).not.toContain(NEW);
    expect(log).not.toContain(OLD);
    const sessions = readAll(join(gw.home.dir, "sessions"));
    expect(sessions).toContain("d-3");
    expect(sessions).not.toContain(NEW);
  });
});
