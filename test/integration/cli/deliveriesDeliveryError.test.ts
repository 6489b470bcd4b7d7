import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * A delivery the platform refused is in the delivery history with why, as a failed run is: `svc webhook
 * deliveries` shows `telegram failed` and its NOTE the platform's answer, `--json` the delivery's `error`
 * (docs/cli.md), so the user does not have to find the gateway's log line. Real sockets: a Bot API fake that
 * refuses one chat, whatever the order of its requests (the start's getMe check may come after a run's send).
 */
let telegram: FakeApi;
let gw: TestGateway;

beforeAll(async () => {
  telegram = await startFakeApi((request) => {
    if (request.path.endsWith("/getMe"))
      return { json: { ok: true, result: { id: 1, is_bot: true, username: "b" } } };
    const chat = (request.json as { chat_id?: unknown } | undefined)?.chat_id;
    return chat === "-42" || chat === -42
      ? { status: 400, json: { ok: false, error_code: 400, description: "Bad Request: chat not found" } }
      : { json: { ok: true, result: { message_id: 1, chat: { id: chat } } } };
  });
  gw = await startTestGateway({
    config: webhookConfig(
      {
        tg: { secret: "INSECURE_NO_AUTH", deliver: "telegram", deliver_extra: { chat_id: "-42" } },
        ok: { secret: "INSECURE_NO_AUTH", deliver: "telegram", deliver_extra: { chat_id: "-7" } },
      },
      {},
      { platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } } },
    ),
  });
});
afterAll(async () => {
  await gw?.stop();
  await telegram?.close();
});

it("a refused delivery's reason is in the history: the table's NOTE and --json's delivery.error", async () => {
  telegram.enqueue({
    status: 400,
    json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
  });
  const res = await postJson(gw.url("/webhooks/tg"), { n: 1 }, { "X-Request-ID": "refused-1" });
  expect(res.status).toBe(202);
  const why =
    'telegram: sendMessage: HTTP 400 — Bad Request: chat not found — check chat -42, from deliver_extra.chat_id of route "tg"';
  const rows = await vi.waitFor(
    async () => {
      const listed = await svc(gw.home, ["webhook", "deliveries", "--json"]);
      const found = (JSON.parse(listed.stdout) as Array<{ id: string; delivery: unknown }>).find(
        (r) => r.id === "refused-1",
      );
      expect(found?.delivery).toMatchObject({ platform: "telegram", outcome: "failed" });
      return found;
    },
    { timeout: 20_000, interval: 200 },
  );
  expect(rows?.delivery).toMatchObject({ error: why });
  const table = await svc(gw.home, ["webhook", "deliveries"]);
  expect(table.stdout).toMatch(
    /refused-1 .* telegram failed +delivery failed: telegram: sendMessage: HTTP 400/,
  );
});

it("a delivered reply has no error", async () => {
  const res = await postJson(gw.url("/webhooks/ok"), { n: 2 }, { "X-Request-ID": "sent-1" });
  expect(res.status).toBe(202);
  const row = await vi.waitFor(
    async () => {
      const listed = await svc(gw.home, ["webhook", "deliveries", "--json"]);
      const found = (JSON.parse(listed.stdout) as Array<{ id: string; delivery: unknown }>).find(
        (r) => r.id === "sent-1",
      );
      expect(found?.delivery).toMatchObject({ outcome: "ok" });
      return found;
    },
    { timeout: 20_000, interval: 200 },
  );
  expect(row?.delivery).not.toHaveProperty("error");
});
