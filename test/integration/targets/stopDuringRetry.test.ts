import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A stop whose drain ends while an agent-mode delivery waits to retry (the platform asked for 100 s) cuts
 * that delivery short: the run did not finish (it is saved with its reply, delivered at the next start), so the
 * target did not fail.
 */
const OPEN = "INSECURE_NO_AUTH";
let tg: FakeApi;
beforeAll(async () => {
  tg = await startFakeTelegram();
});
afterAll(() => tg.close());

const sends = () => tg.requests.filter((r) => r.path.endsWith("/sendMessage"));

describe("a stop while a delivery waits to retry", () => {
  it("is not logged or recorded as a failed delivery nor as a failed run", async () => {
    tg.setHandler((request) =>
      request.path.endsWith("/sendMessage")
        ? {
            status: 429,
            headers: { "retry-after": "100" },
            json: { ok: false, error_code: 429, description: "Too Many Requests: retry after 100" },
          }
        : { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } },
    );
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      config: webhookConfig(
        {
          ci: { secret: OPEN, prompt: "build {n}", deliver: "telegram", deliver_extra: { chat_id: "-1001" } },
        },
        { rate_limit: 1000 },
        {
          agent: { provider: "echo" },
          platforms: { telegram: { enabled: true, token: "1:stop-during-retry", base_url: tg.url } },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/ci"), { n: 7 }, { "X-Request-ID": "stop-retry-1" });
      expect(res.status).toBe(202);
      await vi.waitFor(
        () => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in 100000 ms"))).toBe(true),
        { timeout: 10_000, interval: 10 },
      );
      // The drain's bound runs on the test's clock: move it past the drain (far short of the 100 s wait).
      await stopPastDrain(gw);
      expect(sends()).toHaveLength(1);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages.filter((m) => m.includes("failed for route ci"))).toEqual([]);
      expect(messages).toContain(
        "[delivery] telegram: route ci: not delivered — the gateway stopped while the delivery was under way (not counted as failed)",
      );
      const historyFile = join(gw.home.dir, "deliveries", "history.jsonl");
      const records = existsSync(historyFile)
        ? readFileSync(historyFile, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line) as { kind: string; id: string; outcome?: string })
        : [];
      expect(records.filter((r) => r.id === "stop-retry-1").map((r) => [r.kind, r.outcome])).toEqual([
        ["request", "accepted"],
      ]);
      // The run is kept for the next start.
      expect(messages.some((m) => /1 agent run\(s\) not finished at shutdown/.test(m))).toBe(true);
    } finally {
      gw.home.cleanup();
    }
  });
});
