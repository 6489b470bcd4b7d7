import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc, svcEach } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook test: an event type a header cannot carry (spec 4.3)", { timeout: 90_000 }, () => {
  it("a bad --event is a usage error naming the flag (not 'cannot reach the gateway'); a payload's is sent in the body", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    const port = String(gw.gateway.port);
    await svc(gw.home, ["webhook", "subscribe", "gh"]);
    const test = (...args: string[]) => ["webhook", "test", "gh", "--port", port, ...args];
    const [newline, empty, unicode, spaced, fromPayload] = await svcEach(gw.home, [
      test("--event", "push\nX-Injected: 1"),
      test("--event", ""),
      test("--event", "push→"),
      test("--event", " push"),
      test("--payload", '{"event_type":"déploiement→prod"}'),
    ]);
    // " push" is printable ASCII: the refusal names the spaces at its ends, which HTTP drops.
    expect(spaced.stderr).toContain("without spaces at either end");
    for (const refused of [newline, empty, unicode, spaced]) {
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("--event");
      expect(refused.stderr).toContain("X-Forge-Event header");
      expect(refused.stderr).not.toContain("cannot reach the gateway");
    }
    expect(fromPayload).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('"event":"déploiement→prod"'),
    });
  });

  it("a --payload without event_type for a subscription whose first event no header carries: says so", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    const port = String(gw.gateway.port);
    await svc(gw.home, ["webhook", "subscribe", "bank", "--events", "Überweisung"]);
    const test = (...args: string[]) => ["webhook", "test", "bank", "--port", port, ...args];
    const [bare, named, byFlag] = await svcEach(gw.home, [
      test("--payload", '{"amount":12}'),
      test("--payload", '{"event_type":"Überweisung","amount":12}'),
      test("--payload", '{"amount":12}', "--event", "push"),
    ]);
    expect(bare.stdout).toContain('"status":"ignored"');
    expect(bare.stderr).toContain(
      `Note: bank's first event "Überweisung" cannot be sent as the X-Forge-Event header (only printable ASCII fits one), and --payload has no event_type, so the gateway gets no event type — add "event_type": "Überweisung" to --payload`,
    );
    expect(named.stdout).toContain('"event":"Überweisung"');
    for (const sent of [named, byFlag]) expect(sent.stderr).not.toContain("cannot be sent");
  });
});
