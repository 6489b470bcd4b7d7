import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startFakeAnthropic } from "../../fakes/anthropicServer.js";
import type { FakeModel } from "../../fakes/modelScript.js";
import { startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * What an `openai` / `anthropic` run's model is sent holds none of the credentials svc has loaded
 * (docs/agent.md, Credentials in a reply): a Gogs payload carries its route's secret, and a route's prompt may
 * quote whatever a sender wrote (the API key, a `.env` password, a subscription's secret).
 */

const ROUTE_SECRET = "ROUTESEC_h10_123456";
const API_KEY = "sk-H10MODELKEY_abcdef";
const DB_PASSWORD = "DBPASS_h10_xyz987";
const SUB_SECRET = "SUBSEC_h10_24680ace";
// Added while the gateway runs: a route by a reload (SIGHUP), a subscription by `svc webhook subscribe`.
const RELOADED_SECRET = "RELOADSEC_h10_13579b";
const LATER_SUB_SECRET = "LATERSUB_h10_97531d";
// A skill quoting a credential: the system text is sent as the prompt is.
const SKILL_TOKEN = "SKILLTOK_h10_112233";

const DOTENV = [
  `RS=${ROUTE_SECRET}`,
  `OPENAI_API_KEY=${API_KEY}`,
  `MY_DB_PASSWORD=${DB_PASSWORD}`,
  `SKILL_TOKEN=${SKILL_TOKEN}`,
  "",
].join("\n");

const subscription = (secret: string) => ({
  secret,
  prompt: "x",
  deliver: "log",
  enabled: true,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});

const PROVIDERS = {
  openai: startFakeOpenAI,
  anthropic: startFakeAnthropic,
} as const;

function configWith(
  provider: keyof typeof PROVIDERS,
  baseUrl: string,
  later = false,
): Record<string, unknown> {
  return webhookConfig(
    {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's interpolation of .env
      gogs: { secret: "${RS}", deliver: "log", toolsets: ["no_mcp"] },
      open: {
        secret: "INSECURE_NO_AUTH",
        prompt: "{msg}",
        deliver: "log",
        toolsets: ["no_mcp"],
        skills: ["ops"],
      },
      ...(later ? { later: { secret: RELOADED_SECRET, deliver: "log" } } : {}),
    },
    { rate_limit: 1000 },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: config.yaml's interpolation of .env
    { agent: { provider, model: "test-model", base_url: baseUrl, api_key: "${OPENAI_API_KEY}" } },
  );
}

let gw: TestGateway | undefined;
let model: FakeModel | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await model?.close();
  model = undefined;
});

/** The text of the model request made for the `n`th run (1-based), each run answered in one turn. */
async function modelRequest(n: number): Promise<string> {
  return vi.waitFor(
    () => {
      const request = model?.requests[n - 1];
      if (request === undefined) throw new Error(`model request ${n} not made yet`);
      return JSON.stringify(request.json);
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe.each(Object.keys(PROVIDERS) as Array<keyof typeof PROVIDERS>)("provider %s", (provider) => {
  it("a model is sent the prompt and system text with the loaded credentials [redacted], routes and subscriptions added while the gateway runs included", async () => {
    model = await PROVIDERS[provider]();
    model.script({ text: "ok" }, { text: "ok" }, { text: "ok" });
    gw = await startTestGateway({
      files: {
        ".env": DOTENV,
        "webhook_subscriptions.json": JSON.stringify({ sub: subscription(SUB_SECRET) }),
        "skills/ops/SKILL.md": `Call the API with ${SKILL_TOKEN}.\n`,
      },
      config: configWith(provider, model.baseUrl),
    });
    const running = gw;

    // Gogs, and Gitea before 1.14, send the hook's secret inside the payload; the default prompt is all of it.
    const body = JSON.stringify({ secret: ROUTE_SECRET, ref: "refs/heads/main" });
    const signed = await postJson(running.url("/webhooks/gogs"), body, {
      "X-Gogs-Event": "push",
      "X-Gogs-Delivery": "g-1",
      "X-Gogs-Signature": createHmac("sha256", ROUTE_SECRET).update(body).digest("hex"),
    });
    expect(signed.status).toBe(202);
    const first = await modelRequest(1);
    expect(first).toContain('\\"secret\\": \\"[redacted]\\"');
    expect(first).toContain("refs/heads/main");
    expect(first).not.toContain(ROUTE_SECRET);

    const quoted = `key ${API_KEY} db ${DB_PASSWORD} sub ${SUB_SECRET}`;
    expect((await postJson(running.url("/webhooks/open"), { msg: quoted })).status).toBe(202);
    const second = await modelRequest(2);
    expect(second).toContain("key [redacted] db [redacted] sub [redacted]");
    expect(second).toContain("Call the API with [redacted].");
    for (const secret of [API_KEY, DB_PASSWORD, SUB_SECRET, SKILL_TOKEN])
      expect(second).not.toContain(secret);

    running.home.write("config.yaml", stringify(configWith(provider, model.baseUrl, true)), 0o600);
    running.gateway.reload();
    running.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ sub: subscription(SUB_SECRET), sub2: subscription(LATER_SUB_SECRET) }),
      0o600,
    );
    // Served once it is unsigned-refused rather than unknown.
    await vi.waitFor(
      async () => expect((await postJson(running.url("/webhooks/sub2"), { x: 1 })).status).toBe(401),
      { timeout: 10_000 },
    );
    const later = `route ${RELOADED_SECRET} sub ${LATER_SUB_SECRET}`;
    expect((await postJson(running.url("/webhooks/open"), { msg: later })).status).toBe(202);
    const third = await modelRequest(3);
    expect(third).toContain("route [redacted] sub [redacted]");
    expect(third).not.toContain(RELOADED_SECRET);
    expect(third).not.toContain(LATER_SUB_SECRET);
  });
});
