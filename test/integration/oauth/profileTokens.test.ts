import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { callTool, type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * Spec 5.3: "Under a multiplexed gateway each profile has its own token and its own connection." A run
 * of a route bound to the named profile `work` calls an `auth: oauth` server with the token saved in
 * `profiles/work/mcp-tokens/`, a run of the default profile with the one in `mcp-tokens/`; a profile with
 * no login of its own is never handed the default profile's token.
 */

const SECRET = "hook-secret-for-profile-token-tests";
const DEFAULT_TOKEN = "access-default-profile-7f3c9a";
const WORK_TOKEN = "access-work-profile-4b8e21";

let model: FakeModel;
let telegram: FakeApi;
let notes: RecordingMcp;
let gw: TestGateway;

/** A saved browser login for `url`, valid for an hour. */
function savedLogin(url: string, accessToken: string): string {
  const now = Date.now();
  return JSON.stringify({
    access_token: accessToken,
    token_type: "Bearer",
    refresh_token: `refresh-${accessToken}`,
    expires_at: now + 3_600_000,
    obtained_at: now,
    resource: url,
    flow: "browser",
  });
}

beforeAll(async () => {
  [model, telegram, notes] = await Promise.all([
    startFakeOpenAI(),
    startFakeTelegram(),
    startRecordingMcp("notes: "),
  ]);
  const chatTarget = { deliver: "telegram", deliver_extra: { chat_id: "-100" } };
  gw = await startTestGateway({
    files: {
      "mcp-tokens/notes.json": savedLogin(notes.url, DEFAULT_TOKEN),
      "profiles/work/mcp-tokens/notes.json": savedLogin(notes.url, WORK_TOKEN),
    },
    config: webhookConfig(
      {
        triage: { prompt: "default", toolsets: ["notes"], ...chatTarget },
        work_triage: { prompt: "work", toolsets: ["notes"], profile: "work", ...chatTarget },
        solo_triage: { prompt: "solo", toolsets: ["notes"], profile: "solo", ...chatTarget },
      },
      { secret: SECRET, rate_limit: 1000 },
      {
        agent: {
          provider: "openai",
          model: "test-model",
          base_url: model.baseUrl,
          api_key: "sk-profile-tokens",
        },
        mcp_servers: { notes: { url: notes.url, auth: "oauth", oauth: { cimd: false } } },
        platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
      },
    ),
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([model?.close(), telegram?.close(), notes?.close()]);
});

const chatMessages = (count: number) => telegramMessages(telegram, count);

describe("auth: oauth under a gateway serving two profiles", () => {
  it("each profile's runs call the server with that profile's own saved token", async () => {
    model.script(callTool("mcp__notes__lookup", { key: "a" }), { text: "default done" });
    await postSignedIssue(gw.url("/webhooks/triage"), SECRET, {}, "profile-token-1");
    await chatMessages(1);
    model.script(callTool("mcp__notes__lookup", { key: "b" }), { text: "work done" });
    await postSignedIssue(gw.url("/webhooks/work_triage"), SECRET, {}, "profile-token-2");
    expect(await chatMessages(2)).toEqual(["default done", "work done"]);
    expect(notes.calls).toEqual([
      { tool: "lookup", args: { key: "a" } },
      { tool: "lookup", args: { key: "b" } },
    ]);
    expect(notes.callAuthorizations).toEqual([`Bearer ${DEFAULT_TOKEN}`, `Bearer ${WORK_TOKEN}`]);
  });

  it("a profile without a login of its own gets no token: its call fails asking for that profile's login", async () => {
    notes.calls.length = 0;
    notes.callAuthorizations.length = 0;
    const before = model.requests.length;
    model.script(callTool("mcp__notes__lookup", { key: "c" }), { text: "solo done" });
    await postSignedIssue(gw.url("/webhooks/solo_triage"), SECRET, {}, "profile-token-3");
    expect((await chatMessages(3))[2]).toBe("solo done");
    expect(notes.calls).toEqual([]);
    expect(notes.callAuthorizations).toEqual([]);
    // The solo profile's connection failed, asking for that profile's login; the model was offered no tool.
    expect(JSON.stringify(model.requests[before]?.json)).not.toContain("mcp__notes__lookup");
    const status = JSON.parse(
      readFileSync(join(gw.home.dir, "profiles", "solo", "mcp-cache", "status.json"), "utf8"),
    ) as { servers: Array<{ name: string; state: string; lastError?: string }> };
    // Failed, or already connecting again on its backoff's first retry (1 s: a loaded machine's run can take
    // that long), the failure kept as its last error either way.
    expect(status.servers.find((s) => s.name === "notes")).toMatchObject({
      state: expect.stringMatching(/^(failed|connecting)$/),
      lastError: expect.stringContaining("run `svc mcp login notes --profile solo`"),
    });
  });
});
