import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { findRunSession } from "../../../src/io/sessions/runJournal.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
let telegram: FakeApi | undefined;
afterEach(async () => {
  await gw?.stop();
  await telegram?.close();
  gw = undefined;
  telegram = undefined;
});

const insecure = { secret: "INSECURE_NO_AUTH" };

describe("delivery platforms in the gateway (spec 4.4)", () => {
  it("refuses to start when a route delivers to a platform that is not enabled", async () => {
    await expect(
      startTestGateway({ config: webhookConfig({ alerts: { ...insecure, deliver: "telegram" } }) }),
    ).rejects.toThrow(/platforms\.webhook\.routes\.alerts.*telegram/);
  });

  it("refuses an unknown delivery target by name", async () => {
    await expect(
      startTestGateway({ config: webhookConfig({ alerts: { ...insecure, deliver: "carrier_pigeon" } }) }),
    ).rejects.toThrow(/carrier_pigeon/);
  });

  it("checks each enabled platform's credentials at startup and logs its state", async () => {
    telegram = await startFakeTelegram();
    gw = await startTestGateway({
      config: webhookConfig(
        { alerts: { ...insecure, deliver: "telegram", deliver_extra: { chat_id: "7" } } },
        {},
        { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
      ),
    });
    const running = gw;
    await vi.waitFor(() =>
      expect(running.logs().map((l) => l.msg)).toContainEqual(
        expect.stringMatching(/telegram: connected as/),
      ),
    );
    expect(telegram.requests.some((r) => r.path.endsWith("/getMe"))).toBe(true);
    expect(JSON.stringify(running.logs())).not.toContain("123:abc");
  });
});

describe("agent-run sessions", () => {
  it("records each webhook run as its own session webhook:<route>:<delivery_id>", async () => {
    gw = await startTestGateway({ config: webhookConfig({ gh: { ...insecure, prompt: "PR {number}" } }) });
    const answer = await postJson(gw.url("/webhooks/gh"), { number: 12 }, { "x-request-id": "run-1" });
    expect(answer.status).toBe(202);
    const sessions = join(gw.home.dir, "sessions");
    // The journal is flushed when the gateway stops.
    const running = gw;
    await vi.waitFor(() =>
      expect(running.logs().map((l) => l.msg)).toContainEqual(expect.stringContaining("PR 12")),
    );
    await running.gateway.stop();
    const session = findRunSession(sessions, "webhook:gh:run-1");
    expect(session?.entries.map((e) => e.content)).toEqual(["PR 12", "PR 12"]);
  });
});
