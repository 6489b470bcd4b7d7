import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliverer } from "../../../src/actors/deliver.js";
import { svcPaths } from "../../../src/config/paths.js";
import { createGatewayMetrics } from "../../../src/io/metrics/gatewayMetrics.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { tempHome } from "../../helpers/home.js";
import { sample } from "../../helpers/metrics.js";
import { message, registryFor } from "./support.js";

let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(() => fake.close());

describe("delivery attempts and failures by platform (metrics) and outcomes (history)", () => {
  it("counts each attempt, retries included, and a delivery that failed after its last one", async () => {
    const home = tempHome();
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    const outcomes: Array<[string, boolean]> = [];
    const deliverer = createDeliverer({
      targets: registryFor({
        telegram: { enabled: true, token: "1:T", base_url: fake.url, home_channel: "42" },
      }),
      logger: captureLogger().logger,
      paths: svcPaths(home.dir),
      sleep: async () => {},
      metrics,
      onOutcome: (_message, platform, ok) => outcomes.push([platform, ok]),
    });
    const bad = { status: 502, text: "Bad Gateway" };
    fake.enqueue(bad, bad, bad, bad);
    const request = {
      target: "chat_1",
      message: message("hi"),
      mode: "agent" as const,
      mirrorToSession: false,
    };
    await expect(deliverer.deliver(request)).rejects.toThrow();
    fake.enqueue({ json: { ok: true, result: { message_id: 1, chat: { id: 42 } } } });
    await deliverer.deliver(request);
    const { text } = await metrics.render();
    expect(text).toContain('svc_delivery_attempts_total{platform="telegram"} 5');
    expect(text).toContain('svc_delivery_failures_total{platform="telegram"} 1');
    expect(outcomes).toEqual([
      ["telegram", false],
      ["telegram", true],
    ]);
    home.cleanup();
  });
  it("names a target whose platform is not enabled by its platform, as for an enabled one (chat_1: telegram)", async () => {
    const home = tempHome();
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    const outcomes: Array<[string, boolean]> = [];
    const deliverer = createDeliverer({
      targets: registryFor({}),
      logger: captureLogger().logger,
      paths: svcPaths(home.dir),
      metrics,
      onOutcome: (_message, platform, ok) => outcomes.push([platform, ok]),
    });
    const request = {
      target: "chat_1",
      message: message("hi"),
      mode: "agent" as const,
      mirrorToSession: false,
    };
    await expect(deliverer.deliver(request)).rejects.toThrow(/not enabled/);
    expect((await metrics.render()).text).toContain('svc_delivery_failures_total{platform="telegram"} 1');
    expect(outcomes).toEqual([["telegram", false]]);
    home.cleanup();
  });
  it("a retry the gateway's stop cut short while it waited is no attempt: only the requests made are counted", async () => {
    const home = tempHome();
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    const stop = new AbortController();
    let waiting = 0;
    const deliverer = createDeliverer({
      targets: registryFor({
        telegram: { enabled: true, token: "1:T", base_url: fake.url, home_channel: "42" },
      }),
      logger: captureLogger().logger,
      paths: svcPaths(home.dir),
      // The wait for the retry ends only with the stop, as the gateway's sleep does.
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          waiting += 1;
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          stop.abort(new Error("the gateway is stopping"));
        }),
      metrics,
    });
    const before = fake.requests.filter((r) => r.path.endsWith("/sendMessage")).length;
    fake.enqueue({ status: 502, text: "Bad Gateway" });
    await expect(
      deliverer.deliver(
        { target: "chat_1", message: message("hi"), mode: "agent", mirrorToSession: false },
        stop.signal,
      ),
    ).rejects.toThrow();
    expect(waiting).toBe(1);
    expect(fake.requests.filter((r) => r.path.endsWith("/sendMessage")).length - before).toBe(1);
    const { text } = await metrics.render();
    expect(sample(text, 'svc_delivery_attempts_total{platform="telegram"}')).toBe(1);
    // Cut short by the stop, the delivery did not fail either.
    expect(sample(text, 'svc_delivery_failures_total{platform="telegram"}') ?? 0).toBe(0);
    home.cleanup();
  });
});
