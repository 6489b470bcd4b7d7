import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook test: which event type it sends (spec 4.3)", { timeout: 90_000 }, () => {
  it("--event, else the event_type of --payload, else the subscription's first event", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    const port = String(gw.gateway.port);
    await svc(gw.home, ["webhook", "subscribe", "gh", "--events", "push,pull_request"]);
    const [fromPayload, fromFlag, fromRecord] = await Promise.all([
      svc(gw.home, ["webhook", "test", "gh", "--port", port, "--payload", '{"event_type":"pull_request"}']),
      svc(gw.home, [
        "webhook",
        "test",
        "gh",
        "--port",
        port,
        "--payload",
        '{"event_type":"x"}',
        "--event",
        "push",
      ]),
      svc(gw.home, ["webhook", "test", "gh", "--port", port, "--payload", '{"number":1}']),
    ]);
    expect(fromPayload).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"pull_request"') });
    expect(fromFlag).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"push"') });
    expect(fromRecord).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"push"') });
  });
});
